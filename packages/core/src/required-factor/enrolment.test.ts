import { describe, expect, it } from "vitest";
import { sha256 } from "../crypto/random.js";
import { fakeDirectory, groupsDn, person, workingPolicy } from "../directory/directory.test-support.js";
import { changePassword, setPassword } from "../flows/change-password.js";
import { saveDirectoryPolicy } from "../flows/directory-policy.js";
import {
  type AuthOverrides,
  type Harness,
  addUser,
  authError,
  codeAt,
  decodeBase32,
  enrolTotp,
  generousThrottle,
  goodPassword,
  makeAuth,
  nextCode,
  signIn,
  slowStorage,
  tally,
  wrongCodeAt,
} from "../flows/fixtures.test-support.js";
import { type LoginResult, login } from "../flows/login.js";
import { setUserDisabled, setUserRoles } from "../flows/manage-users.js";
import { makeAuthenticator, makePasskeyAuth, passkeySignIn, registerPasskey } from "../flows/passkeys.test-support.js";
import { refresh } from "../flows/refresh.js";
import { register } from "../flows/register.js";
import { beginTotpSetup, enableTotp } from "../flows/totp-enrolment.js";
import { useRecoveryCode } from "../flows/use-recovery-code.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { verifyTotp } from "../flows/verify-totp.js";
import { webauthnBegin, webauthnFinish } from "../flows/webauthn-login.js";
import { signInWithIdentity } from "../oauth/identity-sign-in.js";
import { resolveOAuthConfig } from "../oauth/provider-config.js";
import { memoryStorage } from "../storage/memory.js";
import type { SessionRecord } from "../storage/types.js";
import type { PasskeyConfig } from "../webauthn/passkey-config.js";
import { beginPasskeyEnrolment, finishPasskeyEnrolment, passkeyEnrolmentOffered } from "./enrol-passkey.js";
import { beginTotpEnrolment, finishTotpEnrolment } from "./enrol-totp.js";
import type { SecondFactorConfig } from "./required-factor-config.js";

const minutes = (count: number) => count * 60_000;

/** An auth requiring a second factor of the `admin` role (or as `secondFactor` says), with passkeys. */
function requiringAuth(
  secondFactor: SecondFactorConfig = { required: { roles: ["admin"] } },
  overrides: AuthOverrides = {},
  passkeys: Partial<PasskeyConfig> = {},
): Harness {
  return makePasskeyAuth({ throttle: generousThrottle, secondFactor, ...overrides }, passkeys);
}

/** The temporary token of a result that must be `enrolment_required`. */
function enrolmentToken(result: LoginResult): string {
  if (result.status !== "enrolment_required") throw new Error(`expected enrolment_required, got ${result.status}`);
  return result.tempToken;
}

/** Signs `username` in with the password and answers the enrolment token. */
async function enrolmentOf(harness: Harness, username: string): Promise<string> {
  return enrolmentToken(await login(harness.auth, { username, password: goodPassword }));
}

/** The stored session of a live access token: its `amr` is the methods the sign-in proved, as flows recorded them. */
async function sessionOf(harness: Harness, accessToken: string): Promise<SessionRecord> {
  const { sessionId } = await verifyAccessToken(harness.auth, { token: accessToken });
  return (await harness.storage.sessions.findSession(sessionId)) as SessionRecord;
}

/** Enrols TOTP with an enrolment token: the secret, and what the finish answered. */
async function enrolTotpWith(harness: Harness, tempToken: string) {
  const setup = await beginTotpEnrolment(harness.auth, { tempToken });
  const secret = decodeBase32(setup.secret);
  const finished = await finishTotpEnrolment(harness.auth, { tempToken, code: codeAt(secret, harness.clock.now) });
  return { secret, ...finished };
}

describe("a sign-in that must enrol a second factor first (40105)", () => {
  it("STUP-4, ASVS 6.3.3: a required user without a second factor gets an enrolment token, no session; a user not required gets tokens", async () => {
    const harness = requiringAuth();
    await addUser(harness.auth, "root", goodPassword, ["admin"]);
    await addUser(harness.auth, "plain", goodPassword, ["user"]);
    const result = await login(harness.auth, { username: "root", password: goodPassword, ip: "203.0.113.9" });
    expect(result).toEqual({ status: "enrolment_required", tempToken: expect.any(String) });
    const rootId = (await harness.storage.users.findByUsernameKey("root"))?.id as string;
    expect(await harness.storage.sessions.listByUser(rootId, harness.clock.now, 10)).toEqual([]);
    expect(harness.events.map((event) => event.type)).not.toContain("login.succeeded");
    expect(harness.events.at(-1)).toEqual({
      type: "second_factor.enrolment_required",
      userId: rootId,
      at: harness.clock.now,
      ip: "203.0.113.9",
    });
    expect(JSON.stringify(harness.events)).not.toContain(enrolmentToken(result));
    expect((await login(harness.auth, { username: "plain", password: goodPassword })).status).toBe("authenticated");
  });

  it("STUP-4, ASVS 6.3.3: the token enrols TOTP, and the sign-in completes with a new session (amr pwd, otp), ten recovery codes shown once; the next sign-in asks for the code", async () => {
    const harness = requiringAuth();
    const userId = await addUser(harness.auth, "root", goodPassword, ["admin"]);
    const tempToken = await enrolmentOf(harness, "root");
    const setup = await beginTotpEnrolment(harness.auth, { tempToken });
    expect(setup.otpauthUrl).toMatch(/^otpauth:\/\/totp\/.*root/);
    expect((await harness.storage.totp.get(userId))?.enabled).toBe(false);
    const secret = decodeBase32(setup.secret);
    const { tokens, recoveryCodes } = await finishTotpEnrolment(harness.auth, {
      tempToken,
      code: codeAt(secret, harness.clock.now),
      userAgent: "Enrolling browser",
    });
    expect(recoveryCodes).toHaveLength(10);
    expect(tokens.user).toMatchObject({ id: userId, totpEnabled: true });
    expect(tokens.deviceToken).toEqual(expect.any(String));
    const session = await sessionOf(harness, tokens.accessToken);
    expect(session).toMatchObject({ amr: ["pwd", "otp"], userAgent: "Enrolling browser" });
    expect(harness.events.map((event) => event.type)).toEqual(expect.arrayContaining(["totp.enabled", "login.succeeded"]));
    const next = await login(harness.auth, { username: "root", password: goodPassword });
    expect(next.status).toBe("totp_required");
    if (next.status !== "totp_required") return;
    const signedIn = await verifyTotp(harness.auth, { tempToken: next.tempToken, code: nextCode(harness, secret) });
    expect((await sessionOf(harness, signedIn.accessToken)).amr).toEqual(["pwd", "otp"]);
  });

  it("STUP-4, ASVS 6.3.3 (TMP-3): the token is spent by the completion: it then enrols nothing and completes nothing", async () => {
    const harness = requiringAuth();
    await addUser(harness.auth, "root", goodPassword, ["admin"]);
    const tempToken = await enrolmentOf(harness, "root");
    const { secret } = await enrolTotpWith(harness, tempToken);
    expect((await authError(beginTotpEnrolment(harness.auth, { tempToken }))).code).toBe(40100);
    const again = finishTotpEnrolment(harness.auth, { tempToken, code: nextCode(harness, secret) });
    expect((await authError(again)).code).toBe(40100);
  });

  it("STUP-4, ASVS 6.3.3 (TMP-3): of concurrent completions with a right code exactly one gets tokens", async () => {
    const harness = requiringAuth();
    const userId = await addUser(harness.auth, "root", goodPassword, ["admin"]);
    const tempToken = await enrolmentOf(harness, "root");
    const secret = decodeBase32((await beginTotpEnrolment(harness.auth, { tempToken })).secret);
    const code = codeAt(secret, harness.clock.now);
    const outcomes = await tally(Array.from({ length: 10 }, () => finishTotpEnrolment(harness.auth, { tempToken, code })));
    expect(outcomes.get("fulfilled")).toBe(1);
    expect((outcomes.get(40100) ?? 0) + (outcomes.get(40103) ?? 0)).toBe(9);
    expect(await harness.storage.sessions.listByUser(userId, harness.clock.now, 10)).toHaveLength(1);
  });

  it("STUP-4, ASVS 6.3.3 (TMP-3): an expired token enrols nothing, with a right code too", async () => {
    const harness = requiringAuth({ required: "always", enrolmentTtl: "2m" });
    await addUser(harness.auth, "alice");
    const tempToken = await enrolmentOf(harness, "alice");
    const secret = decodeBase32((await beginTotpEnrolment(harness.auth, { tempToken })).secret);
    harness.clock.advance(minutes(2) - 1);
    expect(await beginTotpEnrolment(harness.auth, { tempToken })).toMatchObject({ secret: expect.any(String) });
    const renewed = decodeBase32((await beginTotpEnrolment(harness.auth, { tempToken })).secret);
    expect(renewed).not.toEqual(secret);
    harness.clock.advance(1);
    const late = finishTotpEnrolment(harness.auth, { tempToken, code: codeAt(renewed, harness.clock.now) });
    expect((await authError(late)).code).toBe(40100);
  });

  it("STUP-4, ASVS 6.3.3 (TMP-4): every request takes one of the token's attempts; a wrong code is 40103, and past the limit even a right one is 40100", async () => {
    const harness = requiringAuth({ required: "always", enrolmentAttempts: 4 });
    await addUser(harness.auth, "alice");
    const tempToken = await enrolmentOf(harness, "alice");
    const secret = decodeBase32((await beginTotpEnrolment(harness.auth, { tempToken })).secret);
    const wrong = wrongCodeAt(secret, harness.clock.now);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      expect((await authError(finishTotpEnrolment(harness.auth, { tempToken, code: wrong }))).code).toBe(40103);
    }
    const right = finishTotpEnrolment(harness.auth, { tempToken, code: codeAt(secret, harness.clock.now) });
    expect((await authError(right)).code).toBe(40100);
    expect(harness.events.filter((event) => event.type === "second_factor.failed")).toHaveLength(3);
  });

  it("STUP-4, ASVS 6.3.3 (TMP-4): a password change, a raised token version or a disabled account voids the token", async () => {
    const harness = requiringAuth({ required: "always" });
    const changes: [string, (userId: string) => Promise<unknown>][] = [
      [
        "password changed",
        (userId) =>
          changePassword(harness.auth, { userId, currentPassword: goodPassword, newPassword: "another long passphrase" }),
      ],
      ["password set", (userId) => setPassword(harness.auth, { userId, newPassword: "another long passphrase" })],
      ["roles changed", (userId) => setUserRoles(harness.auth, { userId, roles: ["other"] })],
      ["disabled", (userId) => setUserDisabled(harness.auth, { userId, disabled: true })],
    ];
    for (const [name, change] of changes) {
      const userId = await addUser(harness.auth, name.replace(" ", "-"));
      const tempToken = await enrolmentOf(harness, name.replace(" ", "-"));
      await change(userId);
      expect({ name, code: (await authError(beginTotpEnrolment(harness.auth, { tempToken }))).code }).toEqual({
        name,
        code: 40100,
      });
    }
  });

  it("STUP-4, ASVS 6.3.3 (TMP-2): the token is its own kind: no access token, no 40102 step, and the enrolment takes no access or 40102 token", async () => {
    const harness = requiringAuth({ required: { roles: ["admin"] } });
    await addUser(harness.auth, "root", goodPassword, ["admin"]);
    const withTotp = await addUser(harness.auth, "carol", goodPassword, ["user"]);
    await enrolTotp(harness.auth, withTotp);
    await addUser(harness.auth, "plain", goodPassword, ["user"]);
    const tempToken = await enrolmentOf(harness, "root");
    expect((await authError(verifyAccessToken(harness.auth, { token: tempToken }))).code).toBe(40101);
    expect((await authError(verifyTotp(harness.auth, { tempToken, code: "123456" }))).code).toBe(40100);
    expect((await authError(useRecoveryCode(harness.auth, { tempToken, recoveryCode: "abcd-efgh" }))).code).toBe(40100);
    const pending = await login(harness.auth, { username: "carol", password: goodPassword });
    if (pending.status !== "totp_required") throw new Error(pending.status);
    expect((await authError(beginTotpEnrolment(harness.auth, { tempToken: pending.tempToken }))).code).toBe(40100);
    const { accessToken, refreshToken } = await signIn(harness, "plain");
    for (const token of [accessToken, refreshToken, "", 42 as unknown as string]) {
      expect([40001, 40002, 40100]).toContain((await authError(beginTotpEnrolment(harness.auth, { tempToken: token }))).code);
    }
    expect(await beginTotpEnrolment(harness.auth, { tempToken })).toMatchObject({ secret: expect.any(String) });
  });

  it("STUP-4, ASVS 6.3.3: the token enrols nothing once the account has a second factor another way", async () => {
    const harness = requiringAuth({ required: "always" });
    const userId = await addUser(harness.auth, "alice");
    const first = await enrolmentOf(harness, "alice");
    const second = await enrolmentOf(harness, "alice");
    await enrolTotpWith(harness, first);
    expect((await authError(beginTotpEnrolment(harness.auth, { tempToken: second }))).code).toBe(40100);
    expect((await harness.storage.totp.get(userId))?.enabled).toBe(true);
  });

  it("STUP-4, ASVS 6.3.3: the token registers a passkey (user verification required), and the sign-in completes; the password alone is then refused: sign in with the passkey", async () => {
    const harness = requiringAuth({ required: "always" });
    const userId = await addUser(harness.auth, "alice");
    const tempToken = await enrolmentOf(harness, "alice");
    const authenticator = makeAuthenticator();
    const { ceremonyId, options } = await beginPasskeyEnrolment(harness.auth, { tempToken, label: "Laptop" });
    expect(options.authenticatorSelection?.userVerification).toBe("required");
    const { tokens, passkey } = await finishPasskeyEnrolment(harness.auth, {
      tempToken,
      ceremonyId,
      response: authenticator.register(options),
    });
    expect(passkey).toMatchObject({ label: "Laptop" });
    expect((await harness.storage.passkeys.listByUser(userId)).map((stored) => stored.id)).toEqual([passkey.id]);
    expect((await sessionOf(harness, tokens.accessToken)).amr).toEqual(["pwd", "hwk", "user"]);
    expect((await authError(beginTotpEnrolment(harness.auth, { tempToken }))).code).toBe(40100);

    const refused = await authError(login(harness.auth, { username: "alice", password: goodPassword }));
    expect({ code: refused.code, message: refused.message }).toEqual({
      code: 40300,
      message: "This account's second factor is a passkey: sign in with the passkey",
    });
    expect(harness.events.at(-1)).toMatchObject({ type: "login.failed", userId, reason: "passkey_required" });
    expect((await passkeySignIn(harness.auth, authenticator)).status).toBe("authenticated");
  });

  it('STUP-4, ASVS 6.3.3: a passkey counts only where passkeys require user verification, so under "preferred" the token enrols TOTP only', async () => {
    const harness = requiringAuth({ required: "always" }, {}, { userVerification: "preferred" });
    await addUser(harness.auth, "alice");
    const tempToken = await enrolmentOf(harness, "alice");
    const refused = await authError(beginPasskeyEnrolment(harness.auth, { tempToken, label: "Laptop" }));
    expect(refused.code).toBe(40400);
    expect((await enrolTotpWith(harness, tempToken)).tokens.accessToken).toEqual(expect.any(String));
  });

  it("STUP-4, ASVS 6.3.3: a finish with another user's ceremony or a refused response completes nothing, and takes an attempt", async () => {
    const harness = requiringAuth({ required: "always", enrolmentAttempts: 3 });
    await addUser(harness.auth, "alice");
    await addUser(harness.auth, "bob");
    const alice = await enrolmentOf(harness, "alice");
    const bob = await enrolmentOf(harness, "bob");
    const authenticator = makeAuthenticator();
    const bobs = await beginPasskeyEnrolment(harness.auth, { tempToken: bob, label: "Bob's" });
    const stolen = finishPasskeyEnrolment(harness.auth, {
      tempToken: alice,
      ceremonyId: bobs.ceremonyId,
      response: authenticator.register(bobs.options),
    });
    expect((await authError(stolen)).code).toBe(40100);
    const own = await beginPasskeyEnrolment(harness.auth, { tempToken: alice, label: "Alice's" });
    expect(
      (await authError(finishPasskeyEnrolment(harness.auth, { tempToken: alice, ceremonyId: own.ceremonyId, response: {} })))
        .code,
    ).toBe(40002);
    expect((await authError(beginPasskeyEnrolment(harness.auth, { tempToken: alice, label: "Again" }))).code).toBe(40100);
  });

  it("STUP-4, ASVS 6.3.3: completing the enrolment ends the sessions begun before it (SE-2), reporting what was enrolled", async () => {
    const open = makeAuth({ throttle: generousThrottle });
    const userId = await addUser(open.auth, "alice");
    const bobId = await addUser(open.auth, "bob");
    const before = await signIn(open, "alice");
    await signIn(open, "bob");
    const harness = requiringAuth({ required: "always" }, { storage: open.storage, clock: open.clock });
    await enrolTotpWith(harness, await enrolmentOf(harness, "alice"));
    expect((await authError(refresh(harness.auth, { refreshToken: before.refreshToken }))).code).toBe(40101);
    expect(await harness.storage.sessions.listByUser(userId, harness.clock.now, 10)).toHaveLength(1);
    const tempToken = await enrolmentOf(harness, "bob");
    const { ceremonyId, options } = await beginPasskeyEnrolment(harness.auth, { tempToken, label: "Laptop" });
    const response = makeAuthenticator().register(options);
    const { passkey } = await finishPasskeyEnrolment(harness.auth, { tempToken, ceremonyId, response });
    const ended = harness.events.filter((event) => event.type === "sessions.ended");
    expect(ended.map((event) => [event.userId, event.reason, event.keptSessionId])).toEqual([
      [userId, "totp_enabled", null],
      [bobId, "passkey_registered", null],
    ]);
    expect(harness.events).toContainEqual({
      type: "passkey.registered",
      userId: bobId,
      credentialId: passkey.id,
      at: harness.clock.now,
    });
  });
});

describe("the enrolment flows' input and refusals", () => {
  it("STUP-4: a missing field is 40001 naming it; a refused token says it is invalid or expired", async () => {
    const harness = requiringAuth({ required: "always" });
    await addUser(harness.auth, "alice");
    const tempToken = await enrolmentOf(harness, "alice");
    const answers = async (promise: Promise<unknown>) => {
      const { code, message } = await authError(promise);
      return { code, message };
    };
    const missingToken = { code: 40001, message: "tempToken is required" };
    expect(await answers(beginTotpEnrolment(harness.auth, {} as never))).toEqual(missingToken);
    expect(await answers(finishTotpEnrolment(harness.auth, { code: "123456" } as never))).toEqual(missingToken);
    expect(await answers(finishTotpEnrolment(harness.auth, { tempToken } as never))).toEqual({
      code: 40001,
      message: "code is required",
    });
    expect(await answers(beginPasskeyEnrolment(harness.auth, { label: "Laptop" } as never))).toEqual(missingToken);
    expect(await answers(finishPasskeyEnrolment(harness.auth, { ceremonyId: "x", response: {} } as never))).toEqual(missingToken);
    expect(await answers(beginTotpEnrolment(harness.auth, { tempToken: "not-a-token" }))).toEqual({
      code: 40100,
      message: "The temporary token is invalid or expired",
    });
  });

  it("STUP-4: enabling before any setup is 40900; a wrong code reports second_factor.failed of kind totp", async () => {
    const harness = requiringAuth({ required: "always" });
    const userId = await addUser(harness.auth, "alice");
    const tempToken = await enrolmentOf(harness, "alice");
    const early = await authError(finishTotpEnrolment(harness.auth, { tempToken, code: "123456" }));
    expect({ code: early.code, message: early.message }).toEqual({ code: 40900, message: "Start TOTP setup first" });
    const secret = decodeBase32((await beginTotpEnrolment(harness.auth, { tempToken })).secret);
    const ip = "198.51.100.7";
    await authError(finishTotpEnrolment(harness.auth, { tempToken, code: wrongCodeAt(secret, harness.clock.now), ip }));
    expect(harness.events.at(-1)).toEqual({ type: "second_factor.failed", userId, kind: "totp", at: harness.clock.now, ip });
  });

  it("STUP-4 (RL-4): each request with the token takes one attempt from the client address", async () => {
    const harness = requiringAuth({ required: "always" }, { throttle: { ip: [{ limit: 3, window: "15m" }] } });
    await addUser(harness.auth, "alice");
    const ip = "198.51.100.7";
    const tempToken = enrolmentToken(await login(harness.auth, { username: "alice", password: goodPassword, ip }));
    await beginTotpEnrolment(harness.auth, { tempToken, ip });
    await beginTotpEnrolment(harness.auth, { tempToken, ip });
    expect((await authError(beginTotpEnrolment(harness.auth, { tempToken, ip }))).code).toBe(42900);
    expect(await beginTotpEnrolment(harness.auth, { tempToken, ip: "198.51.100.8" })).toMatchObject({
      secret: expect.any(String),
    });
  });

  it("STUP-4: a token whose user is gone is refused and spent", async () => {
    const harness = requiringAuth({ required: "always" });
    const tempToken = "a-token-of-a-user-who-is-gone";
    const challenge = {
      id: sha256(tempToken),
      kind: "second_factor_enrolment" as const,
      userId: "gone",
      data: { tokenVersion: 0, firstFactor: ["pwd"], budget: { scope: "account", usernameKey: "gone" }, passwordStamp: "" },
      attempts: 0,
      createdAt: harness.clock.now,
      expiresAt: harness.clock.now + 60_000,
    };
    await harness.storage.challenges.put(challenge);
    expect((await authError(beginTotpEnrolment(harness.auth, { tempToken }))).code).toBe(40100);
    expect(await harness.storage.challenges.find(challenge.id, challenge.kind, harness.clock.now)).toBeNull();
  });

  it("STUP-4: without passkeys configured, or with user verification only preferred, passkey enrolment is 40400 saying why", async () => {
    const none = makeAuth({ secondFactor: { required: "always" } });
    expect(passkeyEnrolmentOffered(none.auth)).toBe(false);
    const off = await authError(beginPasskeyEnrolment(none.auth, { tempToken: "x", label: "Laptop" }));
    expect({ code: off.code, message: off.message }).toEqual({ code: 40400, message: "Passkeys are not enabled" });
    const preferred = requiringAuth({ required: "always" }, {}, { userVerification: "preferred" });
    expect(passkeyEnrolmentOffered(preferred.auth)).toBe(false);
    const refused = await authError(finishPasskeyEnrolment(preferred.auth, { tempToken: "x", ceremonyId: "y", response: {} }));
    expect({ code: refused.code, message: refused.message }).toEqual({
      code: 40400,
      message: 'Passkeys are a second factor only with passkeys.userVerification "required"',
    });
  });

  it("STUP-4 (TMP-3): of two passkey registrations finishing at once on one token, one completes and the other is 40100 and stores nothing", async () => {
    const harness = requiringAuth({ required: "always" }, { storage: slowStorage(memoryStorage()) });
    const userId = await addUser(harness.auth, "alice");
    const tempToken = await enrolmentOf(harness, "alice");
    const first = await beginPasskeyEnrolment(harness.auth, { tempToken, label: "One" });
    const second = await beginPasskeyEnrolment(harness.auth, { tempToken, label: "Two" });
    const outcomes = await tally(
      [first, second].map(({ ceremonyId, options }) =>
        finishPasskeyEnrolment(harness.auth, { tempToken, ceremonyId, response: makeAuthenticator().register(options) }),
      ),
    );
    expect(Object.fromEntries(outcomes)).toEqual({ fulfilled: 1, 40100: 1 });
    expect(await harness.storage.passkeys.listByUser(userId)).toHaveLength(1);
  });

  it("STUP-4 (TOTP-4): of two tokens of one user enabling the same code at once, one completes and the other is 40103", async () => {
    const harness = requiringAuth({ required: "always" }, { storage: slowStorage(memoryStorage()) });
    await addUser(harness.auth, "alice");
    const one = await enrolmentOf(harness, "alice");
    const two = await enrolmentOf(harness, "alice");
    const secret = decodeBase32((await beginTotpEnrolment(harness.auth, { tempToken: two })).secret);
    const code = codeAt(secret, harness.clock.now);
    const outcomes = await tally([one, two].map((tempToken) => finishTotpEnrolment(harness.auth, { tempToken, code })));
    expect(Object.fromEntries(outcomes)).toEqual({ fulfilled: 1, 40103: 1 });
  });
});

describe("every sign-in path meets the requirement", () => {
  it("STUP-4, ASVS 6.3.3: a user with TOTP answers 40102 as before, and the code completes the sign-in", async () => {
    const harness = requiringAuth({ required: "always" });
    const userId = await addUser(harness.auth, "alice");
    const { secret } = await enrolTotp(harness.auth, userId);
    const result = await login(harness.auth, { username: "alice", password: goodPassword });
    if (result.status !== "totp_required") throw new Error(result.status);
    const tokens = await verifyTotp(harness.auth, { tempToken: result.tempToken, code: nextCode(harness, secret) });
    expect(tokens.user.totpEnabled).toBe(true);
  });

  it("STUP-4, ASVS 6.3.3: a user-verified passkey is two factors by itself: tokens without TOTP; without user verification a required user enrols", async () => {
    const verified = requiringAuth({ required: "always" });
    const verifiedUser = await addUser(verified.auth, "alice");
    const authenticator = makeAuthenticator();
    await registerPasskey(verified.auth, verifiedUser, authenticator);
    expect((await passkeySignIn(verified.auth, authenticator)).status).toBe("authenticated");

    const preferred = requiringAuth({ required: "always" }, {}, { userVerification: "preferred" });
    const bob = await addUser(preferred.auth, "bob");
    const withoutVerification = makeAuthenticator();
    await registerPasskey(preferred.auth, bob, withoutVerification);
    const { ceremonyId, options } = await webauthnBegin(preferred.auth, {});
    const response = withoutVerification.authenticate(options, { flags: { uv: false } });
    expect((await webauthnFinish(preferred.auth, { ceremonyId, response })).status).toBe("enrolment_required");
  });

  it("STUP-4, ASVS 6.3.3: a directory user of a required role enrols, and then signs in with the code", async () => {
    const directory = fakeDirectory([person("dana", [groupsDn.admins])]);
    const harness = requiringAuth({ required: { roles: ["admin"] } }, { directory });
    await saveDirectoryPolicy(harness.auth, workingPolicy);
    const password = "dana directory password";
    const first = await login(harness.auth, { username: "dana", password, provider: "directory" });
    const { secret, tokens } = await enrolTotpWith(harness, enrolmentToken(first));
    expect(tokens.user.roles).toEqual(["admin"]);
    const next = await login(harness.auth, { username: "dana", password, provider: "directory" });
    if (next.status !== "totp_required") throw new Error(next.status);
    expect((await verifyTotp(harness.auth, { tempToken: next.tempToken, code: nextCode(harness, secret) })).user.id).toBe(
      tokens.user.id,
    );
  });

  it("STUP-4, ASVS 6.3.3: a provider's user enrols, and the next provider sign-in asks for the code", async () => {
    const harness = requiringAuth({ required: "always" });
    const provider = resolveOAuthConfig({
      providers: { corp: { issuer: "https://id.example.com", clientId: "c", redirectUri: "https://app.example.com/cb" } },
    }).get("corp") as NonNullable<ReturnType<ReturnType<typeof resolveOAuthConfig>["get"]>>;
    const profile = { subject: "sub-erin", username: "erin", email: "erin@example.com", emailVerified: true };
    const first = await signInWithIdentity(harness.auth, provider, profile);
    const { tokens } = await enrolTotpWith(harness, enrolmentToken(first));
    expect((await sessionOf(harness, tokens.accessToken)).amr).toEqual(["fed", "otp"]);
    expect((await signInWithIdentity(harness.auth, provider, profile)).status).toBe("totp_required");
  });

  it("STUP-4, ASVS 6.3.3: sign-up under a requirement that names the new account answers the enrolment token, not a session", async () => {
    const harness = requiringAuth({ required: "always" }, { signUp: { enabled: true } });
    const result = await register(harness.auth, { username: "newcomer", password: goodPassword });
    const { tokens } = await enrolTotpWith(harness, enrolmentToken(result));
    expect(tokens.user.username).toBe("newcomer");
    const open = requiringAuth({ required: { roles: ["admin"] } }, { signUp: { enabled: true } });
    expect((await register(open.auth, { username: "newcomer", password: goodPassword })).status).toBe("authenticated");
  });

  it("STUP-4, ASVS 6.3.3: a session begun before the requirement ends at its next refresh while the account has no second factor; one whose account has a factor carries on", async () => {
    const open = makeAuth({ throttle: generousThrottle });
    const aliceId = await addUser(open.auth, "alice");
    const carolId = await addUser(open.auth, "carol");
    const alice = await signIn(open, "alice");
    const carol = await signIn(open, "carol");
    const { sessionId } = await verifyAccessToken(open.auth, { token: carol.accessToken });
    const setup = await beginTotpSetup(open.auth, { userId: carolId, sessionId });
    await enableTotp(open.auth, { userId: carolId, sessionId, code: codeAt(decodeBase32(setup.secret), open.clock.now) });
    const harness = makeAuth({
      storage: open.storage,
      clock: open.clock,
      throttle: generousThrottle,
      secondFactor: { required: "always" },
    });
    expect((await authError(refresh(harness.auth, { refreshToken: alice.refreshToken }))).code).toBe(40101);
    expect(harness.events).toContainEqual(
      expect.objectContaining({ type: "session.revoked", userId: aliceId, reason: "second_factor_required" }),
    );
    expect((await authError(verifyAccessToken(harness.auth, { token: alice.accessToken }))).code).toBe(40101);
    expect((await refresh(harness.auth, { refreshToken: carol.refreshToken })).user.id).toBe(carolId);
  });
});
