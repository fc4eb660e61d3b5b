import { signOutEverywhere, webauthnRegisterBegin, webauthnRegisterFinish } from "@portcullis/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type TestAuth,
  type TestUser,
  type TotpTestUser,
  createTestUser,
  createTotpUser,
  generousThrottle,
  makeTestAuth,
  makeTestAuthenticator,
  testPassword,
} from "../fixtures/auth.js";
import { type CallOptions, type CallResult, call, post } from "./client.js";
import { expectEnvelope } from "./contract-suite.js";
import { describeOpenApiDrift } from "./openapi-drift.js";
import { type RunningServer, type StartServer, adapters } from "./servers.js";

const base = "/api/v1/auth";
const users = `${base}/admin/users`;
const minutes = (count: number) => count * 60_000;

/** Field names that must never be in an admin answer (AD-1). */
const secretFields = /passwordHash|"secret"|otpauth|recoveryCodes|recoveryCode|tokenVersion|usernameKey|hasPassword|refreshToken/;

/** One admin route as a test calls it, with the body of a valid request. */
const adminCalls = (userId: string): [method: string, path: string, json?: unknown][] => [
  ["GET", users],
  ["POST", users, { username: "made-by-admin" }],
  ["GET", `${users}/${userId}`],
  ["PATCH", `${users}/${userId}`, { roles: ["user"] }],
  ["DELETE", `${users}/${userId}/sessions`],
  ["DELETE", `${users}/${userId}/totp`],
  ["DELETE", `${base}/admin/sessions`, { password: testPassword }],
];

interface AdminContext {
  testAuth: TestAuth;
  server: RunningServer;
  root: TestUser;
  alice: TestUser;
  tina: TotpTestUser;
  /** Root's access token, signed in right now. */
  rootToken: string;
  /** Every answer of an admin route in this describe. */
  answers: CallResult[];
}

/** An auth, a server, an administrator (root), a user (alice) and a TOTP user (tina). */
function useAdminServer(start: StartServer, config: Parameters<typeof makeTestAuth>[0] = {}) {
  const context = { answers: [] } as unknown as AdminContext;
  beforeAll(async () => {
    context.testAuth = makeTestAuth({ throttle: generousThrottle, ...config });
    context.server = await start(context.testAuth.auth);
    const { auth } = context.testAuth;
    [context.root, context.alice, context.tina] = await Promise.all([
      createTestUser(auth, "root", ["admin"]),
      createTestUser(auth, "alice"),
      createTotpUser(auth, "tina"),
    ]);
  });
  afterAll(async () => {
    await context.server?.close();
  });
  return context;
}

/** Signs a user without TOTP in and returns the access token. */
async function signIn(server: RunningServer, username: string): Promise<string> {
  const signedIn = await post(server, `${base}/login`, { username, password: testPassword });
  expectEnvelope(signedIn, 0);
  return signedIn.body.data.accessToken as string;
}

/** Calls an admin route as `token`, keeping the answer for the AD-1 check of every answer. */
async function admin(context: AdminContext, method: string, path: string, options: CallOptions = {}): Promise<CallResult> {
  const answer = await call(context.server, method, path, options);
  context.answers.push(answer);
  return answer;
}

describe.each(adapters)("the admin routes on %s", (_name, start) => {
  describe("access and AD-1", () => {
    const context = useAdminServer(start);

    it("AD-1: every admin route needs a live access token (40101) holding the admin role (40300)", async () => {
      const { alice, root } = context;
      const aliceToken = await signIn(context.server, "alice");
      const staleRoot = await signIn(context.server, "root");
      await signOutEverywhere(context.testAuth.auth, { userId: root.id });
      for (const [method, path, json] of adminCalls(alice.id)) {
        expectEnvelope(await admin(context, method, path, { json }), 40101);
        expectEnvelope(await admin(context, method, path, { json, token: "not.a.token" }), 40101);
        expectEnvelope(await admin(context, method, path, { json, token: staleRoot }), 40101);
        expectEnvelope(await admin(context, method, path, { json, token: aliceToken }), 40300);
      }
      expect(await context.testAuth.auth.storage.users.findByUsernameKey("made-by-admin")).toBeNull();
    });

    it("AD-1: an administrator cannot disable themselves nor take the admin role from themselves (40900); nothing changes", async () => {
      const { root } = context;
      const token = await signIn(context.server, "root");
      const before = await context.testAuth.auth.storage.users.findById(root.id);
      const disable = await admin(context, "PATCH", `${users}/${root.id}`, { token, json: { disabled: true } });
      expectEnvelope(disable, 40900);
      expect(disable.body.message).toBe("An administrator cannot disable their own account");
      for (const roles of [["user"], [], ["Admin"]]) {
        const demote = await admin(context, "PATCH", `${users}/${root.id}`, { token, json: { roles } });
        expectEnvelope(demote, 40900);
        expect(demote.body.message).toBe("An administrator cannot take the admin role from themselves");
      }
      expectEnvelope(
        await admin(context, "PATCH", `${users}/${root.id}`, { token, json: { roles: ["auditor"], disabled: false } }),
        40900,
      );
      expect(await context.testAuth.auth.storage.users.findById(root.id)).toEqual(before);
      expectEnvelope(await call(context.server, "GET", `${base}/me`, { token }), 0);

      // Keeping the admin role, an administrator may change their own roles; it ends their sessions, as any role change.
      const kept = await admin(context, "PATCH", `${users}/${root.id}`, { token, json: { roles: ["admin", "auditor"] } });
      expectEnvelope(kept, 0);
      expect(kept.body.data).toMatchObject({ id: root.id, roles: ["admin", "auditor"], disabled: false });
      expectEnvelope(await call(context.server, "GET", `${base}/me`, { token }), 40101);
    });

    it("AD-1: another administrator can be demoted and disabled; their tokens end at once", async () => {
      const other = await createTestUser(context.testAuth.auth, "other-admin", ["admin"]);
      const otherToken = await signIn(context.server, "other-admin");
      const token = await signIn(context.server, "root");
      const demoted = await admin(context, "PATCH", `${users}/${other.id}`, { token, json: { roles: ["user"], disabled: true } });
      expectEnvelope(demoted, 0);
      expect(demoted.body.data).toEqual({
        id: other.id,
        username: "other-admin",
        roles: ["user"],
        totpEnabled: false,
        email: null,
        emailVerified: false,
        createdAt: other.createdAt,
        disabled: true,
      });
      expectEnvelope(await admin(context, "GET", users, { token: otherToken }), 40101);
      expectEnvelope(await post(context.server, `${base}/login`, { username: "other-admin", password: testPassword }), 40300);
      const enabled = await admin(context, "PATCH", `${users}/${other.id}`, { token, json: { disabled: false } });
      expect(enabled.body.data).toMatchObject({ disabled: false, roles: ["user"] });
    });

    it("AD-1: PATCH and DELETE …/totp re-authenticate the administrator: recent sign-in, else their password or TOTP code", async () => {
      const { alice, tina } = context;
      const token = await signIn(context.server, "root");
      context.testAuth.clock.advance(minutes(6));
      const unproven = await admin(context, "PATCH", `${users}/${alice.id}`, { token, json: { roles: ["editor"] } });
      expectEnvelope(unproven, 40001);
      expect(unproven.body.message).toMatch(/password/);
      expectEnvelope(await admin(context, "DELETE", `${users}/${tina.id}/totp`, { token }), 40001);
      const wrong = { roles: ["editor"], password: "not root's password" };
      expectEnvelope(await admin(context, "PATCH", `${users}/${alice.id}`, { token, json: wrong }), 40100);
      expectEnvelope(
        await admin(context, "PATCH", `${users}/${alice.id}`, { token, json: { roles: ["editor"], totpCode: "123456" } }),
        40900,
      );
      const proven = await admin(context, "PATCH", `${users}/${alice.id}`, {
        token,
        json: { roles: ["editor"], password: testPassword },
      });
      expectEnvelope(proven, 0);
      expect(proven.body.data.roles).toEqual(["editor"]);
      const removed = await admin(context, "DELETE", `${users}/${tina.id}/totp`, { token, json: { password: testPassword } });
      expectEnvelope(removed, 0);
      expect(removed.body.data).toEqual({ removed: true });
      // A DELETE body that is not JSON is refused like any other (HTTP-2).
      const notJson = await admin(context, "DELETE", `${users}/${tina.id}/totp`, {
        token,
        body: "password=x",
        headers: { "content-type": "application/x-www-form-urlencoded" },
      });
      expectEnvelope(notJson, 40002);
    });

    it("AD-1: no admin route reads or sets a password, TOTP secret or recovery codes", async () => {
      const { alice, auth } = { alice: context.alice, auth: context.testAuth.auth };
      const tina = await createTotpUser(auth, "tina-two");
      const token = await signIn(context.server, "root");
      // `password` in a PATCH is the administrator's proof, never the user's new password.
      const attempt = await admin(context, "PATCH", `${users}/${alice.id}`, {
        token,
        json: { roles: ["user"], password: "a brand new password for alice" },
      });
      expectEnvelope(attempt, 40100);
      const patched = await admin(context, "PATCH", `${users}/${alice.id}`, {
        token,
        json: { roles: ["user"], password: testPassword, passwordHash: "x", secret: "y", recoveryCodes: ["z"] },
      });
      expectEnvelope(patched, 0);
      expectEnvelope(await post(context.server, `${base}/login`, { username: "alice", password: testPassword }), 0);
      expectEnvelope(
        await post(context.server, `${base}/login`, { username: "alice", password: "a brand new password for alice" }),
        40100,
      );
      const before = await auth.storage.totp.get(tina.id);
      expect(before?.enabled).toBe(true);
      const detail = await admin(context, "GET", `${users}/${tina.id}`, { token });
      expect(detail.body.data.totpEnabled).toBe(true);
      const removed = await admin(context, "DELETE", `${users}/${tina.id}/totp`, { token });
      expectEnvelope(removed, 0);
      expect(await auth.storage.totp.get(tina.id)).toBeNull();
      expect(await auth.storage.recoveryCodes.count(tina.id)).toBe(0);
      // Signing in no longer asks for the second factor; a recovery code of the old set is void.
      expectEnvelope(await post(context.server, `${base}/login`, { username: "tina-two", password: testPassword }), 0);
      expectEnvelope(await admin(context, "DELETE", `${users}/${tina.id}/totp`, { token }), 40900);

      const created = await admin(context, "POST", users, {
        token,
        json: { username: "with-password", password: testPassword, roles: ["user"] },
      });
      expectEnvelope(created, 0);
      for (const [method, path] of adminCalls(alice.id).filter(([method]) => method === "GET")) {
        expectEnvelope(await admin(context, method, path, { token }), 0);
      }
      expect(context.answers.length).toBeGreaterThan(20);
      for (const answer of context.answers) expect(answer.text).not.toMatch(secretFields);
    });
  });

  describe("creating, reading, listing, ending sessions", () => {
    const context = useAdminServer(start);

    it("POST makes a local account, with no session; the admin role is not granted here (42200)", async () => {
      const token = await signIn(context.server, "root");
      const created = await admin(context, "POST", users, {
        token,
        json: { username: "Newcomer", password: testPassword, email: "n@example.com", roles: ["editor", "editor"] },
      });
      expectEnvelope(created, 0);
      expect(created.body.data).toEqual({
        id: expect.any(String),
        username: "Newcomer",
        roles: ["editor"],
        totpEnabled: false,
        email: "n@example.com",
        emailVerified: false,
        createdAt: context.testAuth.clock.now,
        disabled: false,
      });
      expect(created.headers.get("set-cookie")).toBeNull();
      expect(
        await context.testAuth.auth.storage.sessions.listByUser(created.body.data.id, context.testAuth.clock.now, 10),
      ).toEqual([]);
      expectEnvelope(await post(context.server, `${base}/login`, { username: "newcomer", password: testPassword }), 0);

      const asAdmin = await admin(context, "POST", users, { token, json: { username: "sneaky", roles: ["admin"] } });
      expectEnvelope(asAdmin, 42200);
      expect(asAdmin.body.message).toMatch(/PATCH/);
      expectEnvelope(await admin(context, "POST", users, { token, json: { username: "NEWCOMER" } }), 40900);
      expectEnvelope(await admin(context, "POST", users, { token, json: { username: "weak", password: "short" } }), 42200);
      expectEnvelope(await admin(context, "POST", users, { token, json: { password: testPassword } }), 40001);
      expectEnvelope(await admin(context, "POST", users, { token, json: { username: ["x"] } }), 40002);
      const noPassword = await admin(context, "POST", users, { token, json: { username: "passwordless" } });
      expectEnvelope(noPassword, 0);
      expect((await context.testAuth.auth.storage.users.findById(noPassword.body.data.id))?.passwordHash).toBeNull();
    });

    it("AD-2: 50 roles of 64 characters (the bound) give an access token every route accepts; one role more, 3,000 roles, or roles over 4,096 bytes are refused at the write (POST, PATCH: 42200), nothing changed", async () => {
      const { auth } = context.testAuth;
      const token = await signIn(context.server, "root");
      const fifty = Array.from({ length: 50 }, (_, index) => `${index}`.padStart(64, "r"));
      const created = await admin(context, "POST", users, {
        token,
        json: { username: "many-roles", password: testPassword, roles: fifty },
      });
      expectEnvelope(created, 0);
      const signedIn = await post(context.server, `${base}/login`, { username: "many-roles", password: testPassword });
      expectEnvelope(signedIn, 0);
      const accessToken = signedIn.body.data.accessToken as string;
      expect(accessToken.length).toBeLessThan(5 * 1024);
      const me = await call(context.server, "GET", `${base}/me`, { token: accessToken });
      expectEnvelope(me, 0);
      expect(me.body.data.roles).toEqual(fifty);

      const id = created.body.data.id as string;
      const before = await auth.storage.users.findById(id);
      const refused = [
        [...fifty, "one more"],
        Array.from({ length: 3000 }, (_, index) => `role-${index}`),
        Array.from({ length: 40 }, (_, index) => `${index}`.padStart(64, "é")),
      ];
      for (const roles of refused) {
        expectEnvelope(await admin(context, "POST", users, { token, json: { username: "too-many-roles", roles } }), 42200);
        const patched = await admin(context, "PATCH", `${users}/${id}`, { token, json: { roles } });
        expectEnvelope(patched, 42200);
        expect(patched.body.message).toMatch(/^roles must (be at most 50 names|take at most 4096 bytes)/);
      }
      expect(await auth.storage.users.findByUsernameKey("too-many-roles")).toBeNull();
      expect(await auth.storage.users.findById(id)).toEqual(before);
    });

    it("EV-1: POST stores an address the administrator vouches for as verified; one another account holds verified is 40900, one that is no address 40002", async () => {
      const token = await signIn(context.server, "root");
      const vouched = await admin(context, "POST", users, {
        token,
        json: { username: "vouched", email: "Val@Example.com", emailVerified: true },
      });
      expectEnvelope(vouched, 0);
      expect(vouched.body.data).toMatchObject({ username: "vouched", email: "Val@Example.com", emailVerified: true });
      const twin = await admin(context, "POST", users, {
        token,
        json: { username: "twin", email: "val@EXAMPLE.com", emailVerified: true },
      });
      expectEnvelope(twin, 40900);
      expect(await context.testAuth.auth.storage.users.findByUsernameKey("twin")).toBeNull();
      const unverified = await admin(context, "POST", users, { token, json: { username: "twin", email: "val@example.com" } });
      expectEnvelope(unverified, 0);
      expect(unverified.body.data).toMatchObject({ email: "val@example.com", emailVerified: false });
      for (const json of [
        { username: "bad-1", email: "no-at-sign" },
        { username: "bad-2", email: "a b@example.com" },
        { username: "bad-3", email: "a@example.com", emailVerified: "true" },
      ]) {
        const refused = await admin(context, "POST", users, { token, json });
        expectEnvelope(refused, 40002);
        expect(refused.body.message, JSON.stringify(json)).toMatch(/^email/);
      }
      const details = await admin(context, "GET", `${users}/${vouched.body.data.id}`, { token });
      expect(details.body.data).toMatchObject({ email: "Val@Example.com", emailVerified: true });
    });

    it("GET …/:id shows the live sessions, passkeys and linked providers; an unknown id is 40400", async () => {
      const { alice, testAuth } = context;
      const token = await signIn(context.server, "root");
      const authenticator = makeTestAuthenticator();
      const { ceremonyId, options } = await webauthnRegisterBegin(testAuth.auth, {
        userId: alice.id,
        label: "Key",
        password: testPassword,
      });
      await webauthnRegisterFinish(testAuth.auth, { userId: alice.id, ceremonyId, response: authenticator.register(options) });
      // Two sessions, one of them ended by logout: one is live.
      await signIn(context.server, "alice");
      const ended = await post(context.server, `${base}/login`, { username: "alice", password: testPassword });
      expectEnvelope(await post(context.server, `${base}/logout`, { refreshToken: ended.body.data.refreshToken }), 0);
      for (const provider of ["corp", "github"]) {
        await testAuth.auth.storage.identities.link({
          provider,
          subject: `alice-at-${provider}`,
          userId: alice.id,
          email: null,
          emailVerified: false,
          createdAt: testAuth.clock.now,
          lastUsedAt: null,
        });
      }
      const detail = await admin(context, "GET", `${users}/${alice.id}`, { token });
      expectEnvelope(detail, 0);
      expect(detail.body.data).toEqual({
        id: alice.id,
        username: "alice",
        roles: ["user"],
        totpEnabled: false,
        email: null,
        emailVerified: false,
        createdAt: alice.createdAt,
        disabled: false,
        sessions: 1,
        passkeys: 1,
        identities: ["corp", "github"],
      });
      expectEnvelope(await admin(context, "GET", `${users}/nobody`, { token }), 40400);
      expectEnvelope(await admin(context, "PATCH", `${users}/nobody`, { token, json: { disabled: true } }), 40400);
      expectEnvelope(await admin(context, "DELETE", `${users}/nobody/sessions`, { token }), 40400);
      expectEnvelope(await admin(context, "DELETE", `${users}/nobody/totp`, { token }), 40400);
    });

    it("DELETE …/sessions ends every session of the user at once and says how many", async () => {
      const token = await signIn(context.server, "root");
      const bob = await createTestUser(context.testAuth.auth, "bob");
      const sessions = await Promise.all(
        [1, 2, 3].map(() => post(context.server, `${base}/login`, { username: "bob", password: testPassword })),
      );
      const ended = await admin(context, "DELETE", `${users}/${bob.id}/sessions`, { token });
      expectEnvelope(ended, 0);
      expect(ended.body.data).toEqual({ ended: 3 });
      for (const session of sessions) {
        expectEnvelope(await call(context.server, "GET", `${base}/me`, { token: session.body.data.accessToken }), 40101);
        expectEnvelope(await post(context.server, `${base}/refresh`, { refreshToken: session.body.data.refreshToken }), 40101);
      }
      expect((await admin(context, "GET", `${users}/${bob.id}`, { token })).body.data.sessions).toBe(0);
      expect((await admin(context, "DELETE", `${users}/${bob.id}/sessions`, { token })).body.data).toEqual({ ended: 0 });
    });

    it("GET lists a page in username order with a cursor; bad limits, repeated parameters and foreign cursors are 40002", async () => {
      const token = await signIn(context.server, "root");
      const first = await admin(context, "GET", `${users}?limit=2`, { token });
      expectEnvelope(first, 0);
      const names = (result: CallResult) => result.body.data.users.map((user: { username: string }) => user.username);
      const all = await admin(context, "GET", `${users}?limit=100`, { token });
      expect(all.body.data.nextCursor).toBeNull();
      expect(names(first)).toEqual(names(all).slice(0, 2));
      const second = await admin(context, "GET", `${users}?limit=2&cursor=${first.body.data.nextCursor}`, { token });
      expect(names(second)).toEqual(names(all).slice(2, 4));
      for (const query of [
        "limit=0",
        "limit=101",
        "limit=-1",
        "limit=2.5",
        "limit=ten",
        "limit=1&limit=2",
        "q=a&q=b",
        "cursor=abc",
      ]) {
        expectEnvelope(await admin(context, "GET", `${users}?${query}`, { token }), 40002);
      }
      const other = await admin(context, "GET", `${users}?limit=2&q=a&cursor=${first.body.data.nextCursor}`, { token });
      expectEnvelope(other, 40002);
    });

    it("GET: limit is 1 to 3 plain digits; what Number() would still read (' 5', '1e1', '0x10') is 40002 naming the range", async () => {
      const token = await signIn(context.server, "root");
      for (const limit of ["1", "007", "100"]) {
        expectEnvelope(await admin(context, "GET", `${users}?limit=${limit}`, { token }), 0);
      }
      for (const limit of ["5x", "%205", "+5", "5%20", "1e1", "0x10", "-1", "0100", "1000", "0", "2.5"]) {
        const refused = await admin(context, "GET", `${users}?limit=${limit}`, { token });
        expectEnvelope(refused, 40002);
        expect(refused.body.message, limit).toBe("limit must be a whole number from 1 to 100");
      }
      for (const name of ["limit", "q", "cursor"]) {
        const repeated = await admin(context, "GET", `${users}?${name}=1&${name}=2`, { token });
        expectEnvelope(repeated, 40002);
        expect(repeated.body.message).toBe(`${name} must be given once`);
      }
    });
  });

  describe("with a publicUser hook", () => {
    const context = useAdminServer(start, { publicUser: (user) => ({ role: user.roles[0] ?? null, disabled: "hook" }) });

    it("the admin views carry the hook's fields; disabled and the contract's fields win", async () => {
      const token = await signIn(context.server, "root");
      const detail = await admin(context, "GET", `${users}/${context.alice.id}`, { token });
      expect(detail.body.data).toMatchObject({ id: context.alice.id, role: "user", disabled: false });
      const page = await admin(context, "GET", users, { token });
      expect(page.body.data.users.map((user: { role: string }) => user.role).sort()).toEqual(["admin", "user", "user"]);
    });
  });
});

describeOpenApiDrift({
  exercises: ["listUsers", "adminCreateUser", "getUserDetails", "updateUser", "endUserSessions", "removeTotp"],
});
