// Issue 42 item 2 on every store (memory, PGlite, PostgreSQL, MariaDB, and PostgreSQL with the
// Redis challenge and counter stores): an autofill begin writes nothing, the challenge rows and
// counter rows (or Redis keys) counted before and after (PL-11), and of 20 concurrent finishes
// with one autofill ceremony id exactly one signs in (PL-12).
import {
  type Auth,
  type MemoryStorage,
  type Storage,
  createAuth,
  webauthnBegin,
  webauthnFinish,
  webauthnRegisterBegin,
  webauthnRegisterFinish,
} from "@portcullis/core";
import type { KyselyStorage } from "@portcullis/kysely";
import { redisStores } from "@portcullis/redis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { connectRedis, deleteKeys, redisMissing, uniquePrefix } from "../../packages/redis/src/redis.test-support.js";
import { createTestUser, makeTestAuthenticator, testAudience, testIssuer, testPasskeys } from "../fixtures/auth.js";
import { describeNeedingService } from "../fixtures/required-service.js";
import { codeOf } from "./flow-code.js";
import { type Store, stores } from "./stores.js";

const throttle = {
  account: [{ limit: 1000, window: "15m" as const }],
  ip: [{ limit: 100_000, window: "15m" as const }],
  unauthenticatedWrites: [{ limit: 1000, window: "15m" as const }],
};

/** A store of this file: storage, and how many challenge and counter entries it holds now. */
interface CountedStore {
  name: string;
  missing: () => Promise<string | null>;
  open(): Promise<{ storage: Storage; entries(): Promise<number>; close(): Promise<void> }>;
}

/** The challenge and counter rows of a SQL storage, or the entries of a memory one. */
async function entriesOf(storage: Storage): Promise<number> {
  if ("sizes" in storage) {
    const sizes = (storage as MemoryStorage).sizes();
    return sizes.challenges + sizes.counters;
  }
  const { db, tables } = storage as KyselyStorage;
  let total = 0;
  for (const table of [tables.challenges, tables.counters]) {
    const row = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll().as("count"))
      .executeTakeFirst();
    total += Number(row?.count ?? 0);
  }
  return total;
}

const everyStore: CountedStore[] = [
  ...stores.map((store: Store) => ({
    name: store.name,
    missing: store.missing,
    async open() {
      const opened = await store.open();
      return { ...opened, entries: () => entriesOf(opened.storage) };
    },
  })),
  ...stores
    .filter((store) => store.name.startsWith("PostgreSQL"))
    .map((store) => ({
      name: `${store.name} with Redis challenges and counters`,
      missing: async () => (await store.missing()) ?? (await redisMissing()),
      async open() {
        const opened = await store.open();
        const client = await connectRedis();
        const prefix = uniquePrefix("passkey-autofill");
        const { challenges, counters } = redisStores({ client, prefix, durable: opened.storage });
        const keys = async () => {
          let count = 0;
          for await (const batch of client.scanIterator({ MATCH: `${prefix}:*`, COUNT: 1000 })) count += batch.length;
          return count;
        };
        return {
          storage: { ...opened.storage, challenges, counters },
          entries: async () => (await keys()) + (await entriesOf(opened.storage)),
          close: async () => {
            await deleteKeys(client, prefix);
            client.destroy();
            await opened.close();
          },
        };
      },
    })),
];

for (const store of everyStore) {
  const describeStore = describeNeedingService("test/storage/passkey-autofill.test.ts", await store.missing());

  describeStore(`passkey autofill on ${store.name}`, () => {
    let opened: Awaited<ReturnType<CountedStore["open"]>>;
    let auth: Auth;
    const clock = { now: Date.parse("2030-01-01T00:00:00Z") };

    beforeAll(async () => {
      opened = await store.open();
      auth = createAuth({
        storage: opened.storage,
        issuer: testIssuer,
        audience: testAudience,
        secrets: {
          signing: "passkey-autofill-storage-signing-secret-0123456789",
          encryption: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        },
        now: () => clock.now,
        throttle,
        passkeys: testPasskeys,
      });
    });

    afterAll(async () => {
      await opened.close();
    });

    it("PL-11: 20 autofill begins store nothing: the challenge and counter entries are as many after as before", async () => {
      const before = await opened.entries();
      for (let i = 0; i < 20; i += 1) await webauthnBegin(auth, { mediation: "conditional", ip: "203.0.113.7" });
      expect(await opened.entries()).toBe(before);
      // An ordinary begin does store: the count sees writes.
      await webauthnBegin(auth, { ip: "203.0.113.7" });
      expect(await opened.entries()).toBeGreaterThan(before);
    });

    it("PL-12: of 20 concurrent finishes with one autofill ceremony id, exactly one signs in; the others 40100", async () => {
      const user = await createTestUser(auth, `racer-${store.name.length}`);
      const authenticator = makeTestAuthenticator();
      const registration = await webauthnRegisterBegin(auth, { userId: user.id, label: "Laptop", password: user.password });
      await webauthnRegisterFinish(auth, {
        userId: user.id,
        ceremonyId: registration.ceremonyId,
        response: authenticator.register(registration.options),
      });
      const { ceremonyId, options } = await webauthnBegin(auth, { mediation: "conditional" });
      const response = authenticator.authenticate(options);
      const codes = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          codeOf(webauthnFinish(auth, { ceremonyId, response, ip: `192.0.2.${index + 1}` })),
        ),
      );
      expect(codes.filter((code) => code === 0)).toHaveLength(1);
      expect(codes.filter((code) => code === 40100)).toHaveLength(19);
    });
  });
}
