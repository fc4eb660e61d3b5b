// The program of one service process for test/storage/two-instances.test.ts, run with
// `node --import tsx` by startServiceProcess (service-processes.ts), never imported. It waits for
// its configuration over IPC, then serves Portcullis with the Express adapter on a loopback port
// over storage from connectStorage, as each replica of a real deployment would, and says which
// port. A "stop" message (or the parent going away) closes the server and the pool.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createAuth } from "@portcullis/core";
import { authRouter } from "@portcullis/express";
import { connectStorage } from "@portcullis/kysely";
import { redisStores } from "@portcullis/redis";
import express from "express";
import { connectRedis } from "../../packages/redis/src/redis.test-support.js";
import type { ServiceConfig, ServiceMessage } from "./service-processes.js";

const send = (message: ServiceMessage) => process.send?.(message);

async function serve(config: ServiceConfig): Promise<() => Promise<void>> {
  const storage = await connectStorage({
    url: config.databaseUrl,
    prefix: config.prefix,
    onPoolError: (error) => console.error(`pool error: ${(error as Error).message}`),
  });
  const redis = config.redis ? await connectRedis(config.redis.url) : undefined;
  const auth = createAuth({
    storage: redis ? { ...storage, ...redisStores({ client: redis, prefix: config.redis!.prefix, durable: storage }) } : storage,
    issuer: config.issuer,
    audience: config.audience,
    secrets: config.secrets,
    passkeys: config.passkeys,
    oauth: config.oauth,
    throttle: config.throttle,
    tokenStateCacheSeconds: config.tokenStateCacheSeconds,
    onInternalError: (error, requestId) => console.error(`internal error ${requestId}: ${(error as Error).stack}`),
  });
  const app = express();
  app.use(authRouter(auth));
  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  send({ type: "listening", port: (server.address() as AddressInfo).port });
  return async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    redis?.destroy();
    await storage.close();
  };
}

let stop: (() => Promise<void>) | undefined;
const exit = async () => {
  await stop?.().catch(() => {});
  process.exit(0);
};

process.on("message", (message: ServiceMessage) => {
  if (message.type === "start") {
    serve(message.config).then(
      (stopper) => {
        stop = stopper;
      },
      (error: unknown) => {
        send({ type: "failed", message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
        process.exit(1);
      },
    );
  } else if (message.type === "stop") void exit();
});
process.on("disconnect", () => void exit());
send({ type: "ready" });
