// Issue 42 item 1 on every store (memory, PGlite, PostgreSQL, MariaDB, and PostgreSQL with the
// Redis challenge store): of 20 concurrent finishes with the right code or link, exactly one signs
// in (PL-1), the challenge's attempt cap holds under concurrency, and a sign-up by code makes one
// account however many race for it.
import {
  type Auth,
  type EmailMessage,
  type Storage,
  beginEmailSignIn,
  createAuth,
  emailDeliveriesSettled,
  finishEmailSignIn,
} from "@portcullis/core";
import { redisStores } from "@portcullis/redis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { connectRedis, deleteKeys, redisMissing, uniquePrefix } from "../../packages/redis/src/redis.test-support.js";
import { createUserWithVerifiedEmail, testAudience, testIssuer } from "../fixtures/auth.js";
import { describeNeedingService } from "../fixtures/required-service.js";
import { codeOf } from "./flow-code.js";
import { type Store, stores } from "./stores.js";

const throttle = {
  account: [{ limit: 1000, window: "15m" as const }],
  ip: [{ limit: 100_000, window: "15m" as const }],
  emailSignInRequests: [{ limit: 1000, window: "15m" as const }],
  unauthenticatedWrites: [{ limit: 1000, window: "15m" as const }],
};

/** The stores of this file: every store of `stores`, and the PostgreSQL one with Redis for the challenges. */
const everyStore: Store[] = [
  ...stores,
  ...stores
    .filter((store) => store.name.startsWith("PostgreSQL"))
    .map((store) => {
      let closeRedis = async () => {};
      return {
        name: `${store.name} with Redis challenges`,
        missing: async () => (await store.missing()) ?? (await redisMissing()),
        async open() {
          const opened = await store.open();
          const client = await connectRedis();
          const prefix = uniquePrefix("email-sign-in");
          closeRedis = async () => {
            await deleteKeys(client, prefix);
            client.destroy();
          };
          const { challenges, counters } = redisStores({ client, prefix, durable: opened.storage });
          return {
            storage: { ...opened.storage, challenges, counters },
            close: async () => {
              await closeRedis();
              await opened.close();
            },
          };
        },
      } satisfies Store;
    }),
];

for (const store of everyStore) {
  const describeStore = describeNeedingService("test/storage/email-sign-in.test.ts", await store.missing());

  describeStore(`email sign-in on ${store.name}`, () => {
    let opened: Awaited<ReturnType<Store["open"]>> | undefined;
    let auth: Auth;
    const clock = { now: Date.parse("2030-01-01T00:00:00Z") };
    const outbox: EmailMessage[] = [];

    beforeAll(async () => {
      opened = await store.open();
      auth = createAuth({
        storage: opened.storage as Storage,
        issuer: testIssuer,
        audience: testAudience,
        secrets: {
          signing: "email-sign-in-storage-signing-secret-0123456789abc",
          encryption: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        },
        now: () => clock.now,
        throttle,
        signUp: { enabled: true },
        email: {
          send: (message) => {
            outbox.push(message);
          },
          resetUrl: "https://app.example.com/reset-password",
          verifyUrl: "https://app.example.com/verify-email",
          signInUrl: "https://app.example.com/email-sign-in",
          recipientLimit: [{ limit: 1000, window: "1h" }],
        },
        emailSignIn: { enabled: true, method: "both", signUp: true, maxAttempts: 3 },
      });
    });

    afterAll(async () => {
      if (auth) await emailDeliveriesSettled(auth);
      await opened?.close();
    });

    /** Begins a sign-in for `email`; the binding, and the code and link token of the message it caused. */
    async function begin(email: string) {
      outbox.length = 0;
      const { binding } = await beginEmailSignIn(auth, { email });
      await emailDeliveriesSettled(auth);
      const message = outbox.at(-1);
      const token = message?.link ? new URL(message.link).hash.replace("#token=", "") : undefined;
      return { binding, code: message?.code as string, token, kind: message?.kind };
    }

    const race = (input: Parameters<typeof finishEmailSignIn>[1]) =>
      Promise.all(Array.from({ length: 20 }, () => codeOf(finishEmailSignIn(auth, input))));

    it("PL-1: 20 concurrent finishes with the right code give exactly one sign-in; the others 40100", async () => {
      await createUserWithVerifiedEmail(auth, "coder");
      const { binding, code } = await begin("coder@example.com");
      const codes = await race({ binding, code });
      expect(codes.filter((value) => value === 0)).toHaveLength(1);
      expect(codes.filter((value) => value === 40100)).toHaveLength(19);
    });

    it("PL-1: 20 concurrent finishes with the right link give exactly one sign-in, and the code is spent with it", async () => {
      await createUserWithVerifiedEmail(auth, "linker");
      const { binding, code, token } = await begin("linker@example.com");
      const codes = await race({ binding, token: token as string });
      expect(codes.filter((value) => value === 0)).toHaveLength(1);
      expect(await codeOf(finishEmailSignIn(auth, { binding, code }))).toBe(40100);
    });

    it("PL-5: 20 concurrent wrong codes take the cap of 3 and no more: the right code is refused after them", async () => {
      await createUserWithVerifiedEmail(auth, "guessed");
      const { binding, code } = await begin("guessed@example.com");
      const wrong = code === "000000" ? "000001" : "000000";
      const codes = await race({ binding, code: wrong });
      expect(codes.every((value) => value === 40100)).toBe(true);
      expect(await codeOf(finishEmailSignIn(auth, { binding, code }))).toBe(40100);
    });

    it("PL-8: 20 concurrent sign-ups with one code make one account", async () => {
      const { binding, code, kind } = await begin("fresh@example.com");
      expect(kind).toBe("sign_up");
      const codes = await race({ binding, code });
      expect(codes.filter((value) => value === 0)).toHaveLength(1);
      expect(codes.filter((value) => value === 40100)).toHaveLength(19);
      const made = await auth.storage.users.findByVerifiedEmail("fresh@example.com");
      expect(made).toMatchObject({ username: "fresh@example.com", emailVerified: true, passwordHash: null });
    });
  });
}
