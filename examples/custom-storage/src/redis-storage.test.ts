// Proves redisStorage() with the public storage conformance suite, against a real Redis.
import { randomBytes } from "node:crypto";
import { ErrorCode, isAuthError } from "@portcullis/core";
import { runStorageConformance } from "@portcullis/core/testing";
import { ClientClosedError, createClient } from "redis";
import { afterAll, describe, expect, it } from "vitest";
import { describeNeedingService } from "../../../test/fixtures/required-service.js";
import { escapeGlob, redisStorage } from "./redis-storage.js";

const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** Why no Redis answers at `url`, or null when one does. */
async function redisMissing(): Promise<string | null> {
  const probe = createClient({ url, socket: { connectTimeout: 1000, reconnectStrategy: false } });
  probe.on("error", () => {});
  try {
    await probe.connect();
    await probe.ping();
    return null;
  } catch (error) {
    return `no Redis answers at ${url} (${error instanceof Error ? error.message : String(error)}); set REDIS_URL to use another`;
  } finally {
    if (probe.isOpen) probe.destroy();
  }
}

const describeWithRedis = describeNeedingService("examples/custom-storage/src/redis-storage.test.ts", await redisMissing());

/** Every run gets its own keys, deleted afterwards: the suite never needs an empty Redis. */
const prefix = `portcullis-test-${randomBytes(8).toString("hex")}`;
const client = createClient({ url });
client.on("error", (error) => console.error("redis client:", error));
let connected: Promise<unknown> | undefined;

describeWithRedis("redisStorage", () => {
  runStorageConformance({
    name: "redis",
    makeStorage: async () => {
      connected ??= client.connect();
      await connected;
      return redisStorage({ client, prefix });
    },
    test: { describe, it, expect },
  });

  afterAll(async () => {
    if (connected === undefined) return;
    for await (const keys of client.scanIterator({ MATCH: `${escapeGlob(prefix)}:*`, COUNT: 500 })) {
      if (keys.length > 0) await client.del(keys);
    }
    await client.close();
  });
});

describe("redisStorage without a connection", () => {
  it("throws storageUnavailable (50300), with the client's error as the cause", async () => {
    const closed = createClient({ url });
    const error = await redisStorage({ client: closed, prefix })
      .challenges.consume("id", "totp_login", Date.now())
      .catch((caught) => caught);
    expect(isAuthError(error, ErrorCode.Unavailable)).toBe(true);
    expect((error as Error).cause).toBeInstanceOf(ClientClosedError);
  });
});
