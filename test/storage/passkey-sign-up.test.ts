// Issue 42 item 4 on every store: memory, PGlite, PostgreSQL, MariaDB, the Redis example store
// (examples/custom-storage) and a host's users table of integer ids on PGlite, PostgreSQL and
// MariaDB, where the store, not Portcullis, chooses the account's id. A passkey sign-up stores the
// account and its passkey as one, under a user handle of its own; the passkey then signs in with
// and without a username (the handle it sends is found: PL-15); 20 concurrent finishes of one
// ceremony, or sign-ups for one name, make one account, and a refused finish stores nothing (PL-16).

import {
  type Auth,
  type Storage,
  beginPasskeySignUp,
  createAuth,
  createUser,
  finishPasskeySignUp,
  reauthenticateWithPasskeyBegin,
  reauthenticateWithPasskeyFinish,
  revokePasskey,
  verifyAccessToken,
  webauthnBegin,
  webauthnFinish,
  webauthnRegisterBegin,
  webauthnRegisterFinish,
} from "@portcullis/core";
import { migrate } from "@portcullis/kysely";
import type { SoftwareAuthenticator } from "@portcullis/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { redisStorage } from "../../examples/custom-storage/src/redis-storage.js";
import { everyDatabase, serverMissing } from "../../packages/kysely/src/databases.test-support.js";
import { type HostScratch, hostScratch } from "../../packages/kysely/src/users-table.test-support.js";
import { connectRedis, deleteKeys, redisMissing, uniquePrefix } from "../../packages/redis/src/redis.test-support.js";
import { makeTestAuthenticator, testAudience, testIssuer, testPasskeys, testPassword } from "../fixtures/auth.js";
import { describeNeedingService } from "../fixtures/required-service.js";
import { type Store, stores } from "./stores.js";

/** The form of the ids each store gives a new account: a host table's are its own integers. */
interface SignUpStore extends Store {
  ids: RegExp;
}

const randomIds = /^[A-Za-z0-9_-]{22}$/;

/** A host's own users table of integer ids, `people`, with a column Portcullis never names. */
const peopleTable = {
  postgres: "create table people (id serial primary key, email varchar(320), nickname text not null default 'new')",
  mysql:
    "create table people (id int unsigned auto_increment primary key, email varchar(320), nickname varchar(40) not null default 'new') engine=InnoDB",
};

const everyStore: SignUpStore[] = [
  ...stores.map((store) => ({ ...store, ids: randomIds })),
  {
    name: "the Redis example store (examples/custom-storage)",
    ids: randomIds,
    missing: () => redisMissing(),
    async open() {
      const client = await connectRedis();
      const prefix = uniquePrefix("passkey-sign-up");
      return {
        storage: redisStorage({ client: client as never, prefix }),
        close: async () => {
          await deleteKeys(client, prefix);
          client.destroy();
        },
      };
    },
  },
  ...everyDatabase.map(({ name, url }) => ({
    name: `a host users table of integer ids on ${name}`,
    ids: /^[1-9][0-9]*$/,
    missing: async () => (url === null ? null : serverMissing(url)),
    async open() {
      const scratch: HostScratch = await hostScratch(name);
      await scratch.run(peopleTable[scratch.dialect]);
      const storage = await scratch.storage({
        prefix: "auth_",
        users: { table: "people", id: { type: "integer" }, columns: { email: "email" } },
      });
      await migrate(storage);
      return { storage, close: () => scratch.drop() };
    },
  })),
];

const throttle = {
  account: [{ limit: 1000, window: "15m" as const }],
  ip: [{ limit: 100_000, window: "15m" as const }],
  unauthenticatedWrites: [{ limit: 1000, window: "15m" as const }],
};

for (const store of everyStore) {
  const describeStore = describeNeedingService("test/storage/passkey-sign-up.test.ts", await store.missing());

  describeStore(`passkey sign-up on ${store.name}`, () => {
    let opened: Awaited<ReturnType<Store["open"]>> | undefined;
    let auth: Auth;
    const clock = { now: Date.parse("2030-01-01T00:00:00Z") };

    beforeAll(async () => {
      opened = await store.open();
      auth = createAuth({
        storage: opened.storage as Storage,
        issuer: testIssuer,
        audience: testAudience,
        secrets: {
          signing: "passkey-sign-up-storage-signing-secret-0123456789",
          encryption: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        },
        now: () => clock.now,
        throttle,
        passkeys: testPasskeys,
        signUp: { enabled: true, defaultRoles: ["member"] },
      });
    });

    afterAll(async () => {
      await opened?.close();
    });

    /** A whole sign-up: the finish's tokens and the credential made. */
    async function signUp(username: string, authenticator: SoftwareAuthenticator) {
      const { ceremonyId, options } = await beginPasskeySignUp(auth, { username });
      const response = authenticator.register(options);
      const result = await finishPasskeySignUp(auth, { ceremonyId, response });
      if (result.status !== "authenticated") throw new Error(`expected tokens, got ${result.status}`);
      return { tokens: result.tokens, credentialId: response.id };
    }

    /** A passkey sign-in, discoverable unless `username` is given: the signed-in user's id. */
    async function signIn(authenticator: SoftwareAuthenticator, username?: string) {
      const { ceremonyId, options } = await webauthnBegin(auth, { username });
      const result = await webauthnFinish(auth, { ceremonyId, response: authenticator.authenticate(options) });
      if (result.status !== "authenticated") throw new Error(`expected tokens, got ${result.status}`);
      return result.tokens.user.id;
    }

    it("PL-15: the account and its passkey are stored as one, under the store's id and the ceremony's handle; the passkey signs in discoverably and by username", async () => {
      const authenticator = makeTestAuthenticator();
      const { tokens, credentialId } = await signUp("Newcomer", authenticator);
      const userId = tokens.user.id;
      expect(userId).toMatch(store.ids);
      expect(await auth.storage.users.findById(userId)).toMatchObject({
        username: "Newcomer",
        passwordHash: null,
        roles: ["member"],
        source: "local",
      });
      const [credential] = authenticator.credentials();
      const passkey = await auth.storage.passkeys.findById(credentialId);
      expect(passkey).toMatchObject({ userId, label: "Passkey", userHandle: credential?.userHandle });
      expect(await auth.storage.passkeys.listByUser(userId)).toEqual([passkey]);
      expect(await signIn(authenticator)).toBe(userId);
      expect(await signIn(authenticator, "newcomer")).toBe(userId);
    });

    it("PL-15: it re-authenticates with the passkey, registers a second one, and keeps its last (40900)", async () => {
      const laptop = makeTestAuthenticator();
      const { tokens, credentialId } = await signUp("keeper", laptop);
      const userId = tokens.user.id;
      const { sessionId } = await verifyAccessToken(auth, { token: tokens.accessToken });
      clock.now += 10 * 60_000;
      const begun = await reauthenticateWithPasskeyBegin(auth, { userId, sessionId });
      const renewed = await reauthenticateWithPasskeyFinish(auth, {
        userId,
        sessionId,
        ceremonyId: begun.ceremonyId,
        response: laptop.authenticate(begun.options),
      });
      const fresh = (await verifyAccessToken(auth, { token: renewed.accessToken })).sessionId;
      await expect(revokePasskey(auth, { userId, sessionId: fresh, id: credentialId })).rejects.toMatchObject({ code: 40900 });
      const phone = makeTestAuthenticator();
      const registering = await webauthnRegisterBegin(auth, { userId, sessionId: fresh, label: "Phone" });
      const second = await webauthnRegisterFinish(auth, {
        userId,
        sessionId: fresh,
        ceremonyId: registering.ceremonyId,
        response: phone.register(registering.options),
      });
      await revokePasskey(auth, { userId, sessionId: fresh, id: credentialId });
      await expect(revokePasskey(auth, { userId, sessionId: fresh, id: second.id })).rejects.toMatchObject({ code: 40900 });
      expect(await signIn(phone)).toBe(userId);
    });

    it("PL-16: of 20 concurrent finishes of one ceremony one makes the account; of 20 sign-ups for one name one does, with one passkey", async () => {
      const one = await beginPasskeySignUp(auth, { username: "racer" });
      const response = makeTestAuthenticator().register(one.options);
      const finishes = await Promise.allSettled(
        Array.from({ length: 20 }, () => finishPasskeySignUp(auth, { ceremonyId: one.ceremonyId, response })),
      );
      expect(finishes.filter((settled) => settled.status === "fulfilled")).toHaveLength(1);
      expect(await auth.storage.passkeys.findById(response.id)).not.toBeNull();

      const begun = await Promise.all(Array.from({ length: 20 }, () => beginPasskeySignUp(auth, { username: "crowd" })));
      const responses = begun.map(({ options }) => makeTestAuthenticator().register(options));
      const settled = await Promise.allSettled(
        begun.map(({ ceremonyId }, index) => finishPasskeySignUp(auth, { ceremonyId, response: responses[index] })),
      );
      const refusals = settled.flatMap((outcome) => (outcome.status === "rejected" ? [outcome.reason.code] : []));
      expect(refusals).toEqual(Array(19).fill(40900));
      const account = await auth.storage.users.findByUsernameKey("crowd");
      const stored = await Promise.all(responses.map((made) => auth.storage.passkeys.findById(made.id)));
      expect(stored.filter((passkey) => passkey !== null).map((passkey) => passkey?.userId)).toEqual([account?.id]);
    });

    it("PL-16: a credential id registered to another account stores no account; a refused attestation stores nothing", async () => {
      const holder = await createUser(auth, { username: "holder", password: testPassword });
      const held = makeTestAuthenticator();
      const registering = await webauthnRegisterBegin(auth, { userId: holder.id, label: "Key", password: testPassword });
      const registered = await webauthnRegisterFinish(auth, {
        userId: holder.id,
        ceremonyId: registering.ceremonyId,
        response: held.register(registering.options),
      });
      const { ceremonyId, options } = await beginPasskeySignUp(auth, { username: "copycat" });
      const copy = makeTestAuthenticator().register(options, { credentialId: registered.id });
      await expect(finishPasskeySignUp(auth, { ceremonyId, response: copy })).rejects.toMatchObject({ code: 40900 });
      expect(await auth.storage.users.findByUsernameKey("copycat")).toBeNull();
      expect((await auth.storage.passkeys.findById(registered.id))?.userId).toBe(holder.id);

      const refused = await beginPasskeySignUp(auth, { username: "refused" });
      const wrong = makeTestAuthenticator().register(refused.options, { origin: "https://evil.example" });
      await expect(finishPasskeySignUp(auth, { ceremonyId: refused.ceremonyId, response: wrong })).rejects.toMatchObject({
        code: 40100,
      });
      expect(await auth.storage.users.findByUsernameKey("refused")).toBeNull();
      expect(await auth.storage.passkeys.findById(wrong.id)).toBeNull();
    });
  });
}
