import { describe, expect, it } from "vitest";
import { createAuth } from "../auth.js";
import { ErrorCode } from "../errors/codes.js";
import { memoryStorage } from "../storage/memory.js";
import { deviceIdOf } from "../throttle/device-token.js";
import { createUser } from "./create-user.js";
import {
  type AuthOverrides,
  authError,
  encryptionKey,
  goodPassword,
  makeAuth,
  signingSecret,
  tokensOf,
} from "./fixtures.test-support.js";
import { login } from "./login.js";
import { refresh } from "./refresh.js";
import { register } from "./register.js";
import { verifyAccessToken } from "./verify-access-token.js";

const address = "203.0.113.7";

/** An auth with sign-up on (and the given further options). */
const signUpAuth = (overrides: AuthOverrides = {}) => makeAuth({ signUp: { enabled: true }, ...overrides });

describe("register (sign-up)", () => {
  it("SU-1: sign-up is off by default: 40400, and nothing is stored or counted", async () => {
    const harness = makeAuth();
    const refused = await authError(register(harness.auth, { username: "newcomer", password: goodPassword, ip: address }));
    expect([refused.code, refused.message]).toEqual([ErrorCode.NotFound, "Sign-up is not enabled"]);
    expect(await harness.storage.users.findByUsernameKey("newcomer")).toBeNull();
    expect(harness.events).toEqual([]);
    const off = makeAuth({ signUp: { enabled: false, defaultRoles: ["member"] } });
    expect((await authError(register(off.auth, { username: "newcomer", password: goodPassword }))).code).toBe(ErrorCode.NotFound);
  });

  it("SU-1: on, it makes a local account with the default roles and signs it in: a new session with a device token", async () => {
    const harness = signUpAuth({ signUp: { enabled: true, defaultRoles: ["member", "reader"] } });
    const tokens = tokensOf(await register(harness.auth, { username: "Newcomer", password: goodPassword, ip: address }));
    const stored = await harness.storage.users.findByUsernameKey("newcomer");
    expect(stored).toMatchObject({
      username: "Newcomer",
      roles: ["member", "reader"],
      disabled: false,
      tokenVersion: 0,
      source: "local",
      createdAt: harness.clock.now,
    });
    expect(tokens.user).toEqual({
      id: stored?.id,
      username: "Newcomer",
      roles: ["member", "reader"],
      totpEnabled: false,
      email: null,
      emailVerified: false,
      createdAt: harness.clock.now,
    });
    const access = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
    expect(access).toMatchObject({ userId: stored?.id, roles: ["member", "reader"], amr: ["pwd"] });
    expect(deviceIdOf(harness.auth, tokens.deviceToken, "newcomer")).not.toBeNull();
    expect(harness.events.map((event) => event.type)).toEqual(["user.created", "login.succeeded"]);
    expect(harness.events[0]).toEqual({ type: "user.created", userId: stored?.id, by: "sign_up", at: harness.clock.now });
    expect(harness.events[1]).toMatchObject({ userId: stored?.id, sessionId: access.sessionId, amr: ["pwd"], ip: address });
    await refresh(harness.auth, { refreshToken: tokens.refreshToken });
    expect((await login(harness.auth, { username: "newcomer", password: goodPassword })).status).toBe("authenticated");
  });

  it("SU-1: no role, id, token version or disabled state is taken from the input; roles default to none", async () => {
    const harness = signUpAuth();
    const input = {
      username: "mallory",
      password: goodPassword,
      roles: ["admin"],
      id: "chosen-id",
      tokenVersion: 7,
      disabled: true,
      source: "directory",
      createdAt: 0,
    };
    const tokens = tokensOf(await register(harness.auth, input as never));
    const stored = await harness.storage.users.findByUsernameKey("mallory");
    expect(stored).toMatchObject({ roles: [], tokenVersion: 0, disabled: false, source: "local", createdAt: harness.clock.now });
    expect(stored?.id).not.toBe("chosen-id");
    expect(await harness.storage.users.findById("chosen-id")).toBeNull();
    expect(tokens.user.roles).toEqual([]);
    expect((await verifyAccessToken(harness.auth, { token: tokens.accessToken })).roles).toEqual([]);
  });

  it("SU-1, RL-7: each address may sign up throttle.unauthenticatedWrites times, refusals included; another address is not held back", async () => {
    const harness = signUpAuth({ throttle: { unauthenticatedWrites: [{ limit: 3, window: "1m" }] } });
    await register(harness.auth, { username: "first", password: goodPassword, ip: address });
    expect((await authError(register(harness.auth, { username: "FIRST", password: goodPassword, ip: address }))).code).toBe(
      ErrorCode.Conflict,
    );
    expect((await authError(register(harness.auth, { username: "second", password: "short", ip: address }))).code).toBe(
      ErrorCode.ValidationFailed,
    );
    harness.events.length = 0;
    const throttled = await authError(register(harness.auth, { username: "third", password: goodPassword, ip: address }));
    expect([throttled.code, throttled.retryAfterSeconds]).toEqual([ErrorCode.TooManyAttempts, 60]);
    expect(await harness.storage.users.findByUsernameKey("third")).toBeNull();
    expect(harness.events).toEqual([
      {
        type: "throttled",
        scope: "unauthenticatedWrites",
        key: expect.any(String),
        retryAfterSeconds: 60,
        at: harness.clock.now,
        ip: address,
      },
    ]);
    await register(harness.auth, { username: "third", password: goodPassword, ip: "198.51.100.9" });
    harness.clock.advance(60_000);
    await register(harness.auth, { username: "fourth", password: goodPassword, ip: address });
  });

  it("SU-1, PW-3: the password policy applies, with the reason; the username rule too; nothing is stored", async () => {
    const harness = signUpAuth({ password: { minLength: 12 } });
    const short = await authError(register(harness.auth, { username: "weak", password: "elevenchars" }));
    expect([short.code, short.message]).toEqual([ErrorCode.ValidationFailed, "The password must be at least 12 characters long"]);
    const common = await authError(register(harness.auth, { username: "weak", password: "password1234" }));
    expect(common.code).toBe(ErrorCode.ValidationFailed);
    expect(common.message).toMatch(/common/);
    const name = await authError(register(harness.auth, { username: " weak", password: goodPassword }));
    expect([name.code, name.message]).toEqual([ErrorCode.ValidationFailed, "The username must not start or end with a space"]);
    expect(await harness.storage.users.findByUsernameKey("weak")).toBeNull();
    expect(harness.events).toEqual([]);
  });

  it("SU-1: a taken username is 40900 whatever its case, and the account is left as it was", async () => {
    const harness = signUpAuth();
    const first = tokensOf(await register(harness.auth, { username: "Alice", password: goodPassword }));
    const before = await harness.storage.users.findById(first.user.id);
    const taken = await authError(register(harness.auth, { username: "alice", password: "another long passphrase" }));
    expect([taken.code, taken.message]).toEqual([ErrorCode.Conflict, "The username is taken"]);
    expect(await harness.storage.users.findById(first.user.id)).toEqual(before);
  });

  it("PW-5: a missing username or password is 40001, a non-string field 40002; email is checked and stored unverified", async () => {
    const harness = signUpAuth();
    const answer = async (input: Record<string, unknown>) => {
      const error = await authError(register(harness.auth, input as never));
      return [error.code, error.message];
    };
    expect(await answer({ password: goodPassword })).toEqual([ErrorCode.MissingParameter, "username is required"]);
    expect(await answer({ username: "x", password: "" })).toEqual([ErrorCode.MissingParameter, "password is required"]);
    expect(await answer({ username: { $ne: "" }, password: goodPassword })).toEqual([
      ErrorCode.MalformedParameter,
      "username must be a string",
    ]);
    expect(await answer({ username: "x", password: [goodPassword] })).toEqual([
      ErrorCode.MalformedParameter,
      "password must be a string",
    ]);
    expect(await answer({ username: "x", password: goodPassword, email: 5 })).toEqual([
      ErrorCode.MalformedParameter,
      "email must be a string",
    ]);
    expect(harness.events).toEqual([]);
    const tokens = tokensOf(
      await register(harness.auth, { username: "mailer", password: goodPassword, email: "mailer@example.com" }),
    );
    expect(await harness.storage.users.findById(tokens.user.id)).toMatchObject({
      email: "mailer@example.com",
      emailVerified: false,
    });
  });

  it("signUp options: defaultRoles are role names, never the admin role; enabled is a boolean", () => {
    const base = {
      storage: memoryStorage(),
      issuer: "https://api.example.com",
      audience: "example-api",
      secrets: { signing: signingSecret, encryption: encryptionKey },
    };
    const make = (signUp: unknown, adminRole?: string) => () => createAuth({ ...base, adminRole, signUp: signUp as never });
    expect(createAuth(base).config.signUp).toEqual({ enabled: false, defaultRoles: [] });
    expect(createAuth({ ...base, signUp: { enabled: true, defaultRoles: ["a", "a", "b"] } }).config.signUp).toEqual({
      enabled: true,
      defaultRoles: ["a", "b"],
    });
    expect(make({ enabled: true, defaultRoles: ["member", "admin"] })).toThrow(
      'Portcullis configuration: signUp.defaultRoles must not hold the admin role "admin": every stranger would be an administrator',
    );
    expect(make({ defaultRoles: ["staff"] }, "staff")).toThrow(/must not hold the admin role "staff"/);
    for (const defaultRoles of ["member", [""], ["x".repeat(65)], [5]]) {
      expect(make({ defaultRoles }), JSON.stringify(defaultRoles)).toThrow(
        /^Portcullis configuration: signUp.defaultRoles must be a list of names of 1 to 64 characters/,
      );
    }
    for (const enabled of ["yes", 1, null]) {
      expect(make({ enabled }), String(enabled)).toThrow(/^Portcullis configuration: signUp.enabled must be true or false/);
    }
    for (const signUp of [true, "on", null, []]) {
      expect(make(signUp), String(signUp)).toThrow(/^Portcullis configuration: signUp must be an object/);
    }
  });

  it("EV-1: an email given at sign-up is stored unverified, even one another account holds verified; not an address is 40002 before any attempt is counted", async () => {
    const harness = signUpAuth({ throttle: { unauthenticatedWrites: [{ limit: 1, window: "1m" }] } });
    const holder = await createUser(harness.auth, { username: "holder", email: "Owner@Example.com", emailVerified: true });
    const refused = await authError(
      register(harness.auth, { username: "x", password: goodPassword, email: "nope", ip: address }),
    );
    expect([refused.code, refused.message]).toEqual([
      ErrorCode.MalformedParameter,
      "email must be an address with one @ between a name and a domain",
    ]);
    const tokens = tokensOf(
      await register(harness.auth, {
        username: "copycat",
        password: goodPassword,
        email: "owner@example.com",
        ip: address,
      }),
    );
    expect(tokens.user).toMatchObject({ email: "owner@example.com", emailVerified: false });
    expect((await harness.storage.users.findById(tokens.user.id))?.emailVerified).toBe(false);
    expect((await harness.storage.users.findByVerifiedEmail("owner@example.com"))?.id).toBe(holder.id);
  });
});
