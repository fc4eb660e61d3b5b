// The program of the second process of the two-process tests (startConsumerProcess in
// redis.test-support.ts), run with `node --import tsx`, never imported: it connects its own
// node-redis client, builds the Redis stores on the test's prefix and, when asked, consumes one
// challenge from many concurrent calls at a given moment, and says how many won.
import { ErrorCode, isAuthError } from "@portcullis/core";
import { createClient, createCluster } from "redis";
import { type ConsumerMessage, type Target, until } from "./redis.test-support.js";
import { redisStores } from "./redis-stores.js";

const send = (message: ConsumerMessage) => process.send?.(message);

async function connect(target: Target) {
  const client =
    "url" in target
      ? createClient({ url: target.url, commandOptions: { timeout: 2000 } })
      : createCluster({ rootNodes: target.rootNodes.map((url) => ({ url })), commandOptions: { timeout: 2000 } });
  client.on("error", () => {});
  await client.connect();
  return client;
}

process.on("message", async (message: ConsumerMessage) => {
  if (message.type !== "start") return;
  try {
    const client = await connect(message.target);
    const { challenges } = redisStores({ client, prefix: message.prefix });
    process.on("message", async (request: ConsumerMessage) => {
      if (request.type !== "consume") return;
      await until(request.at);
      const results = await Promise.allSettled(
        Array.from({ length: request.times }, () => challenges.consume(request.id, request.kind as never, request.now)),
      );
      const failures = results.flatMap((result) =>
        result.status === "rejected" && !isAuthError(result.reason, ErrorCode.Unavailable) ? [String(result.reason)] : [],
      );
      send({
        type: "consumed",
        winners: results.filter((result) => result.status === "fulfilled" && result.value !== null).length,
        unavailable: results.filter((result) => result.status === "rejected" && isAuthError(result.reason, ErrorCode.Unavailable))
          .length,
        failures,
      });
    });
    process.once("SIGTERM", () => {
      client.destroy();
      process.exit(0);
    });
    send({ type: "ready" });
  } catch (error) {
    send({ type: "failed", message: error instanceof Error ? error.message : String(error) });
  }
});
process.on("disconnect", () => process.exit(0));
