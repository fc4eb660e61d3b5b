import type { CreateAuthOptions } from "@portcullis/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestAuth, type TestUser, createTestUser, generousThrottle, makeTestAuth, testPassword } from "../fixtures/auth.js";
import { call, post } from "./client.js";
import { expectEnvelope } from "./contract-suite.js";
import { describeOpenApiDrift } from "./openapi-drift.js";
import { type RunningServer, adapters } from "./servers.js";

const base = "/api/v1/auth";

/** Alice's user object as the contract shows it, with what the hook added. */
const aliceWith = (alice: TestUser, added: Record<string, unknown>) => ({
  id: alice.id,
  username: "alice",
  roles: ["editor", "user"],
  totpEnabled: false,
  email: null,
  emailVerified: false,
  createdAt: alice.createdAt,
  ...added,
});

/** A server whose auth has the given `publicUser` hook, with the internal errors it reported. */
function useHookServer(start: (typeof adapters)[number][1], publicUser: CreateAuthOptions["publicUser"]) {
  const context = { reported: [] as [unknown, string][] } as {
    testAuth: TestAuth;
    server: RunningServer;
    reported: [unknown, string][];
    alice: TestUser;
  };
  beforeAll(async () => {
    context.testAuth = makeTestAuth({
      throttle: generousThrottle,
      publicUser,
      onInternalError: (error, requestId) => context.reported.push([error, requestId]),
    });
    context.server = await start(context.testAuth.auth);
    context.alice = await createTestUser(context.testAuth.auth, "alice", ["editor", "user"]);
  });
  afterAll(async () => {
    await context.server?.close();
  });
  return context;
}

describe.each(adapters)("the publicUser hook on %s", (_name, start) => {
  describe("a hook that adds a single role, for clients built for the original service", () => {
    const context = useHookServer(start, (user) => ({ role: user.roles[0] ?? null, department: "sales" }));

    it("its fields are in the token set of a sign-in and of a refresh, and in /me, beside the contract's", async () => {
      const { alice } = context;
      const expected = aliceWith(alice, { role: "editor", department: "sales" });
      const signedIn = await post(context.server, `${base}/login`, { username: "alice", password: testPassword });
      expectEnvelope(signedIn, 0);
      expect(signedIn.body.data.user).toEqual(expected);
      const refreshed = await post(context.server, `${base}/refresh`, { refreshToken: signedIn.body.data.refreshToken });
      expectEnvelope(refreshed, 0);
      expect(refreshed.body.data.user).toEqual(expected);
      const me = await call(context.server, "GET", `${base}/me`, { token: refreshed.body.data.accessToken });
      expectEnvelope(me, 0);
      expect(me.body.data).toEqual(expected);
    });
  });

  describe("a hook that answers the contract's own fields", () => {
    const context = useHookServer(start, () => ({
      id: "someone-else",
      username: "root",
      roles: ["admin"],
      totpEnabled: true,
      email: "root@evil.example",
      emailVerified: true,
      createdAt: 0,
      role: "admin",
    }));

    it("cannot change them: id, username, roles, totpEnabled and createdAt stay the user's, and the token's roles too", async () => {
      const { alice } = context;
      const signedIn = await post(context.server, `${base}/login`, { username: "alice", password: testPassword });
      expectEnvelope(signedIn, 0);
      const expected = aliceWith(alice, { role: "admin" });
      expect(signedIn.body.data.user).toEqual(expected);
      const me = await call(context.server, "GET", `${base}/me`, { token: signedIn.body.data.accessToken });
      expect(me.body.data).toEqual(expected);
      const claims = JSON.parse(Buffer.from(signedIn.body.data.accessToken.split(".")[1], "base64url").toString());
      expect(claims).toMatchObject({ sub: alice.id, roles: ["editor", "user"] });
    });
  });

  describe("a hook that throws", () => {
    const context = useHookServer(start, () => {
      throw new Error("profile service down");
    });

    it("a sign-in is 50000 with a request id given to onInternalError, and no token in the answer", async () => {
      context.reported.length = 0;
      const signedIn = await post(context.server, `${base}/login`, { username: "alice", password: testPassword });
      expectEnvelope(signedIn, 50000);
      expect(signedIn.text).not.toMatch(/accessToken|refreshToken|profile service/);
      expect(context.reported).toEqual([[new Error("profile service down"), signedIn.body.requestId]]);
    });
  });

  const notObjects: [string, unknown][] = [
    ["null", null],
    ["undefined", undefined],
    ["an array", ["role"]],
    ["a string", "editor"],
    ["a number", 42],
    ["a Date", new Date(0)],
    ["a Map", new Map([["role", "editor"]])],
    ["a promise of null", Promise.resolve(null)],
  ];
  for (const [what, answer] of notObjects) {
    describe(`a hook that answers ${what}`, () => {
      const context = useHookServer(start, () => answer as Record<string, unknown>);

      it("a sign-in is 50000, told to onInternalError, never a half-built user", async () => {
        context.reported.length = 0;
        const signedIn = await post(context.server, `${base}/login`, { username: "alice", password: testPassword });
        expectEnvelope(signedIn, 50000);
        expect(signedIn.text).not.toMatch(/accessToken/);
        expect(context.reported).toHaveLength(1);
        expect(String(context.reported[0]?.[0])).toMatch(/publicUser/);
      });
    });
  }

  describe("an async hook", () => {
    const context = useHookServer(start, async (user) => ({ role: user.roles.at(-1) }));

    it("is awaited", async () => {
      const signedIn = await post(context.server, `${base}/login`, { username: "alice", password: testPassword });
      expectEnvelope(signedIn, 0);
      expect(signedIn.body.data.user.role).toBe("user");
    });
  });
});

describeOpenApiDrift({ exercises: ["login", "refresh", "getPublicUser"] });
