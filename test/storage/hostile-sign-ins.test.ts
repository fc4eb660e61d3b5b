// Issue 20 items 1, 3 and 10 over HTTP, on every adapter and every store whose counters and
// lookups they touch: a NUL or an invisible code point in a username never reaches storage (it
// answered 50000 on PostgreSQL and PGlite), a stranger who knows a username cannot keep its owner
// out (RL-5 device tokens, RL-6 passkeys), and login/begin does not tell who has passkeys (EN-4).
import {
  type Auth,
  type Storage,
  createAuth,
  memoryStorage,
  saveDirectoryPolicy,
  webauthnRegisterBegin,
  webauthnRegisterFinish,
} from "@portcullis/core";
import { type KyselyStorage, migrate, pgliteStorage } from "@portcullis/kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeDirectory, workingPolicy } from "../../packages/core/src/directory/directory.test-support.js";
import {
  mariadbScratch,
  mariadbUrl,
  postgresScratch,
  postgresUrl,
  serverMissing,
} from "../../packages/kysely/src/databases.test-support.js";
import { createTestUser, makeTestAuthenticator, testAudience, testIssuer, testPasskeys, testPassword } from "../fixtures/auth.js";
import { describeNeedingService } from "../fixtures/required-service.js";
import { type CallResult, post } from "../http/client.js";
import { type RunningServer, adapters } from "../http/servers.js";

const base = "/api/v1/auth";

/** A store under test: opened once per file, closed at the end. */
interface Store {
  name: string;
  missing: () => Promise<string | null>;
  open(): Promise<{ storage: Storage; close(): Promise<void> }>;
}

const sqlStore = async (open: () => Promise<{ storage: KyselyStorage; drop(): Promise<void> }>) => {
  const { storage, drop } = await open();
  await migrate(storage);
  return { storage, close: drop };
};

const stores: Store[] = [
  { name: "memory storage", missing: async () => null, open: async () => ({ storage: memoryStorage(), close: async () => {} }) },
  {
    name: "PGlite",
    missing: async () => null,
    async open() {
      const storage = await pgliteStorage({ dataDir: "memory://" });
      return { storage, close: () => storage.close() };
    },
  },
  { name: "PostgreSQL", missing: () => serverMissing(postgresUrl), open: () => sqlStore(postgresScratch) },
  { name: "MariaDB", missing: () => serverMissing(mariadbUrl), open: () => sqlStore(mariadbScratch) },
];

const secrets = {
  signing: "hostile-sign-ins-signing-secret-0123456789abcdef",
  encryption: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
};

/** The code of an answer, with the answer in the message of a failing assertion. */
const codeOf = (result: CallResult) => result.body?.code as number;

/** The `name=value` of a `Set-Cookie` header of an answer, or undefined. */
function cookieOf(result: CallResult, name: string): string | undefined {
  const cookie = result.headers.getSetCookie().find((header) => header.startsWith(`${name}=`));
  return cookie?.split(";", 1)[0];
}

for (const store of stores) {
  const describeStore = describeNeedingService("test/storage/hostile-sign-ins.test.ts", await store.missing());

  describeStore(`hostile sign-ins on ${store.name}`, () => {
    let opened: Awaited<ReturnType<Store["open"]>> | undefined;
    let auth: Auth;
    const clock = { now: Date.parse("2030-01-01T00:00:00Z") };
    const directory = fakeDirectory();

    beforeAll(async () => {
      opened = await store.open();
      auth = createAuth({
        storage: opened.storage,
        issuer: testIssuer,
        audience: testAudience,
        secrets,
        now: () => clock.now,
        passkeys: testPasskeys,
        directory,
        throttle: {
          account: [{ limit: 5, window: "15m" }],
          ip: [{ limit: 100_000, window: "15m" }],
          unauthenticatedWrites: [{ limit: 100_000, window: "15m" }],
        },
      });
    });

    afterAll(async () => {
      await opened?.close();
    });

    describe.each(adapters)("%s", (adapterName, start) => {
      let server: RunningServer;
      /** A username of this adapter's own, so the adapters sharing the store never meet. */
      const named = (name: string) => `${name}-${adapterName.replace(/\W/g, "").toLowerCase()}`;

      beforeAll(async () => {
        server = await start(auth);
      });

      afterAll(async () => {
        await server.close();
      });

      it("issue 20 item 10, RL-1: a NUL or an invisible code point in the username is 40100 at login, with or without the directory first, and decoys at login/begin; never a 50000", async () => {
        const user = await createTestUser(auth, named("nul"));
        await saveDirectoryPolicy(auth, { ...workingPolicy, loginOrder: "explicit" });
        for (const username of [
          `${user.username}\u0000`,
          `\u0000${user.username}`,
          `${user.username.slice(0, 2)}\u200b${user.username.slice(2)}`,
        ]) {
          const local = await post(server, `${base}/login`, { username, password: testPassword });
          expect(codeOf(local), JSON.stringify(local.body)).toBe(40100);
          const begun = await post(server, `${base}/public-key/login/begin`, { username });
          expect(codeOf(begun), JSON.stringify(begun.body)).toBe(0);
          expect(begun.body.data.options.allowCredentials.length).toBeGreaterThan(0);
        }
        await saveDirectoryPolicy(auth, { ...workingPolicy, loginOrder: "directory-first" });
        const viaDirectory = await post(server, `${base}/login`, { username: `${user.username}\u0000`, password: testPassword });
        expect(codeOf(viaDirectory), JSON.stringify(viaDirectory.body)).toBe(40100);
        expect(directory.calls.filter((call) => call.method === "authenticate")).toEqual([]);
        await saveDirectoryPolicy(auth, { ...workingPolicy, enabled: false });
      });

      it("RL-5: the device cookie of a sign-in lets its owner in after a stranger's failures lock the account; a client without cookies sends deviceToken", async () => {
        const user = await createTestUser(auth, named("owner"));
        const first = await post(server, `${base}/login`, { username: user.username, password: testPassword });
        expect(codeOf(first)).toBe(0);
        const cookie = cookieOf(first, "portcullis_device");
        expect(cookie).toBe(`portcullis_device=${first.body.data.deviceToken}`);
        expect(first.headers.getSetCookie()[0]).toMatch(/; HttpOnly; SameSite=Strict; Max-Age=7776000$/);
        for (let attempt = 0; attempt < 6; attempt += 1) {
          await post(server, `${base}/login`, { username: user.username, password: `stranger guess ${attempt}` });
        }
        const stranger = await post(server, `${base}/login`, { username: user.username, password: testPassword });
        expect(codeOf(stranger)).toBe(42900);
        const owner = await post(
          server,
          `${base}/login`,
          { username: user.username, password: testPassword },
          { headers: { cookie: cookie as string } },
        );
        expect(codeOf(owner), JSON.stringify(owner.body)).toBe(0);
        const apiClient = await post(server, `${base}/login`, {
          username: user.username,
          password: testPassword,
          deviceToken: owner.body.data.deviceToken,
        });
        expect(codeOf(apiClient), JSON.stringify(apiClient.body)).toBe(0);
        // The same cookie sent twice (one planted by a sibling site) is no device token.
        const doubled = await post(
          server,
          `${base}/login`,
          { username: user.username, password: testPassword },
          { headers: { cookie: `${cookie}; portcullis_device=planted` } },
        );
        expect(codeOf(doubled)).toBe(42900);
      });

      it("RL-6: failed passkey assertions leave the password budget whole, and a password lockout never stops the passkey", async () => {
        const user = await createTestUser(auth, named("keyholder"));
        const authenticator = makeTestAuthenticator();
        const { ceremonyId, options } = await webauthnRegisterBegin(auth, {
          userId: user.id,
          label: "Key",
          password: testPassword,
        });
        await webauthnRegisterFinish(auth, { userId: user.id, ceremonyId, response: authenticator.register(options) });
        const assert = async (overrides: Parameters<typeof authenticator.authenticate>[1] = {}) => {
          const begun = await post(server, `${base}/public-key/login/begin`, { username: user.username });
          const { ceremonyId: id, options: request } = begun.body.data;
          return post(server, `${base}/public-key/login/finish`, authenticator.authenticate(request, overrides), {
            headers: { "x-webauthn-ceremony": id },
          });
        };
        for (let attempt = 0; attempt < 6; attempt += 1)
          expect(codeOf(await assert({ origin: "https://evil.example" }))).toBe(40100);
        expect(codeOf(await post(server, `${base}/login`, { username: user.username, password: testPassword }))).toBe(0);
        for (let attempt = 0; attempt < 6; attempt += 1) {
          await post(server, `${base}/login`, { username: user.username, password: `stranger guess ${attempt}` });
        }
        expect(codeOf(await post(server, `${base}/login`, { username: user.username, password: testPassword }))).toBe(42900);
        const signedIn = await assert();
        expect(codeOf(signedIn), JSON.stringify(signedIn.body)).toBe(0);
        expect(cookieOf(signedIn, "portcullis_device")).toBe(`portcullis_device=${signedIn.body.data.deviceToken}`);
      });

      it("EN-4: login/begin for a name without passkeys answers credential ids shaped like a real account's", async () => {
        const user = await createTestUser(auth, named("nokeys"));
        for (const username of [user.username, named("nobody")]) {
          const begun = await post(server, `${base}/public-key/login/begin`, { username });
          const listed = begun.body.data.options.allowCredentials as { id: string; type: string }[];
          expect(listed.length).toBeGreaterThanOrEqual(1);
          for (const credential of listed) expect(await auth.storage.passkeys.findById(credential.id)).toBeNull();
        }
      });
    });
  });
}
