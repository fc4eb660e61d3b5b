import { openApiDocument } from "@portcullis/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestAuth, generousThrottle, makeTestAuth, testPassword } from "../fixtures/auth.js";
import { call, post } from "./client.js";
import { expectEnvelope } from "./contract-suite.js";
import { describeOpenApiDrift } from "./openapi-drift.js";
import { type RunningServer, type StartServer, adapters } from "./servers.js";

const base = "/api/v1/auth";
const register = (server: RunningServer, body: unknown) => post(server, `${base}/register`, body);

/** A server for one `describe`, its auth made with `config`. */
function useServer(start: StartServer, config: Parameters<typeof makeTestAuth>[0]) {
  const context = {} as { testAuth: TestAuth; server: RunningServer };
  beforeAll(async () => {
    context.testAuth = makeTestAuth(config);
    context.server = await start(context.testAuth.auth);
  });
  afterAll(async () => {
    await context.server?.close();
  });
  return context;
}

describe.each(adapters)("POST /auth/register on %s", (_name, start) => {
  describe("with the default configuration", () => {
    const context = useServer(start, { throttle: generousThrottle });

    it("SU-1: sign-up is off by default: 40400 like any feature that is off, the document does not list it, nothing is stored", async () => {
      const refused = await register(context.server, { username: "newcomer", password: testPassword });
      expectEnvelope(refused, 40400);
      expect(openApiDocument(context.testAuth.auth).paths).not.toHaveProperty(`${base}/register`);
      expect(await context.testAuth.auth.storage.users.findByUsernameKey("newcomer")).toBeNull();
    });
  });

  describe("with signUp.enabled", () => {
    const context = useServer(start, {
      throttle: generousThrottle,
      signUp: { enabled: true, defaultRoles: ["member"] },
    });

    it("SU-1: answers the token set of a new session with the device cookie; the account then signs in", async () => {
      const answer = await register(context.server, { username: "Newcomer", password: testPassword, email: "n@example.com" });
      expectEnvelope(answer, 0);
      const { user, accessToken, deviceToken } = answer.body.data;
      expect(user).toEqual({
        id: expect.any(String),
        username: "Newcomer",
        roles: ["member"],
        totpEnabled: false,
        email: "n@example.com",
        emailVerified: false,
        createdAt: context.testAuth.clock.now,
      });
      expect(deviceToken).toEqual(expect.any(String));
      expect(answer.headers.get("set-cookie")).toMatch(/^portcullis_device=[^;]+; .*HttpOnly/);
      const me = await call(context.server, "GET", `${base}/me`, { token: accessToken });
      expectEnvelope(me, 0);
      expect(me.body.data).toEqual(user);
      expectEnvelope(await post(context.server, `${base}/login`, { username: "newcomer", password: testPassword }), 0);
    });

    it("SU-1, EV-1: no role, id, token version or state is taken from the body, nor an address's verification", async () => {
      const answer = await register(context.server, {
        username: "mallory",
        password: testPassword,
        roles: ["admin"],
        id: "chosen-id",
        tokenVersion: 9,
        disabled: true,
        totpEnabled: true,
        source: "directory",
        email: "Mallory@Example.com",
        emailVerified: true,
      });
      expectEnvelope(answer, 0);
      expect(answer.body.data.user).toMatchObject({ username: "mallory", roles: ["member"], totpEnabled: false });
      expect(answer.body.data.user.id).not.toBe("chosen-id");
      const stored = await context.testAuth.auth.storage.users.findByUsernameKey("mallory");
      expect(stored).toMatchObject({
        id: answer.body.data.user.id,
        roles: ["member"],
        tokenVersion: 0,
        disabled: false,
        source: "local",
        email: "Mallory@Example.com",
        emailVerified: false,
      });
      expect(answer.body.data.user).toMatchObject({ email: "Mallory@Example.com", emailVerified: false });
      expect(await context.testAuth.auth.storage.users.findById("chosen-id")).toBeNull();
    });

    it("SU-1, PW-5: a __proto__ key anywhere in the body is 40002 and stores nothing", async () => {
      for (const body of [
        `{"username":"proto","password":"${testPassword}","__proto__":{"roles":["admin"]}}`,
        `{"username":"proto","password":"${testPassword}","profile":{"__proto__":{"isAdmin":true}}}`,
        `{"username":"proto","password":"${testPassword}","constructor":{"prototype":{"roles":["admin"]}}}`,
      ]) {
        const answer = await call(context.server, "POST", `${base}/register`, {
          body,
          headers: { "content-type": "application/json" },
        });
        expectEnvelope(answer, 40002);
      }
      expect(await context.testAuth.auth.storage.users.findByUsernameKey("proto")).toBeNull();
      expect(({} as Record<string, unknown>).roles).toBeUndefined();
    });

    it("SU-1, PW-3: the password policy applies with its reason; a taken username is 40900; bad types 40002", async () => {
      const common = await register(context.server, { username: "weak", password: "password1234" });
      expectEnvelope(common, 42200);
      expect(common.body.message).toBe("The password is too common; choose another");
      const short = await register(context.server, { username: "weak", password: "short" });
      expectEnvelope(short, 42200);
      expect(short.body.message).toBe("The password must be at least 8 characters long");
      expectEnvelope(await register(context.server, { username: "NEWCOMER", password: testPassword }), 40900);
      expectEnvelope(await register(context.server, { username: "typed", password: { $ne: "" } }), 40002);
      expectEnvelope(await register(context.server, { username: "typed", password: testPassword, email: ["x"] }), 40002);
      expectEnvelope(await register(context.server, { password: testPassword }), 40001);
      expect(await context.testAuth.auth.storage.users.findByUsernameKey("weak")).toBeNull();
    });
  });

  describe("with signUp.enabled and a tight per-address limit", () => {
    const context = useServer(start, {
      throttle: { ...generousThrottle, unauthenticatedWrites: [{ limit: 3, window: "10m" }] },
      signUp: { enabled: true },
    });

    it("SU-1, RL-7: each address signs up throttle.unauthenticatedWrites times, refusals included, then 42900 with Retry-After", async () => {
      expectEnvelope(await register(context.server, { username: "one", password: testPassword }), 0);
      expectEnvelope(await register(context.server, { username: "one", password: testPassword }), 40900);
      expectEnvelope(await register(context.server, { username: "two", password: "short" }), 42200);
      const throttled = await register(context.server, { username: "three", password: testPassword });
      expectEnvelope(throttled, 42900);
      expect(throttled.headers.get("retry-after")).toBe("600");
      expect(await context.testAuth.auth.storage.users.findByUsernameKey("three")).toBeNull();
      context.testAuth.clock.advance(10 * 60_000);
      expectEnvelope(await register(context.server, { username: "three", password: testPassword }), 0);
    });
  });
});

describeOpenApiDrift({ exercises: ["register", "getPublicUser", "login"] });
