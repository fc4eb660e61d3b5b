// The program of instance B in the two-process revocation channel tests (revocation-channel.test.ts),
// run with `node --import tsx`, never imported: an auth instance on the test's PostgreSQL schema
// with a 60 s token-state cache and a Redis revocation channel of its own connection, which checks
// access tokens when asked, moves its clock when told, and reports the channel's events.
import { type AuthEvent, createAuth, isAuthError, revocationChannelStatus, verifyAccessToken } from "@portcullis/core";
import { connectStorage } from "@portcullis/kysely";
import { createClient } from "redis";
import { redisRevocationChannel } from "./revocation-channel.js";

/** What instance B is told at its start. */
export interface InstanceConfig {
  databaseUrl: string;
  redisUrl: string;
  channel: string;
  heartbeatMs: number;
  issuer: string;
  audience: string;
  secrets: { signing: string; encryption: string };
}

/** The messages between the test and instance B. */
export type InstanceMessage =
  | { type: "start"; config: InstanceConfig }
  | { type: "ready" }
  | { type: "verify"; token: string }
  | { type: "verified"; outcome: number | "fulfilled" }
  | { type: "advance"; ms: number }
  | { type: "advanced" }
  | { type: "event"; event: AuthEvent }
  | { type: "failed"; message: string };

const send = (message: InstanceMessage) => {
  if (process.connected) process.send?.(message);
};

async function start(config: InstanceConfig): Promise<void> {
  const storage = await connectStorage({ url: config.databaseUrl, maxConnections: 2 });
  const client = createClient({ url: config.redisUrl, commandOptions: { timeout: 2000 } });
  client.on("error", () => {});
  await client.connect();
  const revocationChannel = redisRevocationChannel({ client, channel: config.channel, heartbeatMs: config.heartbeatMs });
  let offset = 0;
  const auth = createAuth({
    storage,
    issuer: config.issuer,
    audience: config.audience,
    secrets: config.secrets,
    tokenStateCacheSeconds: 60,
    revocationChannel,
    now: () => Date.now() + offset,
    sweepInterval: false,
    onInternalError: () => {},
  });
  auth.events.on("*", (event) => {
    if (event.type.startsWith("revocation_channel.")) send({ type: "event", event });
  });
  while (revocationChannelStatus(auth) !== "connected") await new Promise((resolve) => setTimeout(resolve, 10));
  process.on("message", async (message: InstanceMessage) => {
    if (message.type === "verify") {
      try {
        await verifyAccessToken(auth, { token: message.token });
        send({ type: "verified", outcome: "fulfilled" });
      } catch (error) {
        send({ type: "verified", outcome: isAuthError(error) ? error.code : -1 });
      }
    } else if (message.type === "advance") {
      offset += message.ms;
      send({ type: "advanced" });
    }
  });
  process.on("disconnect", () => {
    revocationChannel.close();
    client.destroy();
    void storage.close().finally(() => process.exit(0));
  });
  send({ type: "ready" });
}

process.once("message", (message: InstanceMessage) => {
  if (message.type !== "start") return;
  start(message.config).catch((error: unknown) => {
    send({ type: "failed", message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    process.exit(1);
  });
});
