import type { SoftwareAuthenticator } from "@portcullis/testing";
import { describe, expect, it, vi } from "vitest";
import { emailDeliveriesSettled } from "../email/deliver.js";
import { makeEmailAuth, sentTo } from "../email/email.test-support.js";
import { ErrorCode } from "../errors/codes.js";
import {
  type AuthOverrides,
  type Harness,
  addUser,
  authError,
  goodPassword,
  makeAuth,
  outcome,
  slowStorage,
  tally,
  tokensOf,
} from "../flows/fixtures.test-support.js";
import { revokePasskey } from "../flows/passkey-management.js";
import { makeAuthenticator, makePasskeyAuth, passkeySignIn, passkeys, registerPasskey } from "../flows/passkeys.test-support.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { webauthnBegin, webauthnFinish } from "../flows/webauthn-login.js";
import { webauthnRegisterBegin, webauthnRegisterFinish } from "../flows/webauthn-register.js";
import { reauthenticateWithPasskeyBegin, reauthenticateWithPasskeyFinish } from "../step-up/reauthenticate-session.js";
import { memoryStorage } from "../storage/memory.js";
import type { ChallengeRecord } from "../storage/types.js";
import { field } from "../user-fields/field.js";
import { userHandleOf } from "../webauthn/ceremony.js";
import { type BeginPasskeySignUpInput, beginPasskeySignUp, finishPasskeySignUp } from "./passkey-sign-up.js";

const address = "203.0.113.7";
const minutes = (count: number) => count * 60_000;

/** An auth with sign-up on and passkeys configured (both merged with the overrides). */
const signUpAuth = (overrides: AuthOverrides = {}, passkeysOverrides: Parameters<typeof makePasskeyAuth>[1] = {}) =>
  makePasskeyAuth({ signUp: { enabled: true }, ...overrides }, passkeysOverrides);

/** Signs up with a passkey through begin and finish: the result, and the new account's id and passkey. */
async function signUp(
  harness: Harness,
  input: Partial<BeginPasskeySignUpInput> & { username: string },
  authenticator: SoftwareAuthenticator = makeAuthenticator(),
  flags?: { uv?: boolean },
) {
  const { ceremonyId, options } = await beginPasskeySignUp(harness.auth, input);
  const response = authenticator.register(options, flags === undefined ? {} : { flags });
  const result = await finishPasskeySignUp(harness.auth, { ceremonyId, response, ip: input.ip });
  const user = await harness.storage.users.findByUsernameKey(input.username.toLowerCase());
  return { result, user, credentialId: response.id, authenticator };
}

/** The usernames of every stored account. */
async function accounts(harness: Harness): Promise<string[]> {
  return (await harness.storage.users.list({ limit: 100 })).map((user) => user.username);
}

/** A challenge-store `put` spy: the ceremonies stored while it is active. */
function ceremoniesStored(harness: Harness) {
  const put = vi.spyOn(harness.storage.challenges, "put");
  return () => put.mock.calls.map(([record]) => record as ChallengeRecord);
}

describe("passkey sign-up", () => {
  it("PL-15: begin asks for a discoverable, user-verified passkey under a fresh 32-byte handle, and stores only the ceremony", async () => {
    const harness = signUpAuth();
    const stored = ceremoniesStored(harness);
    const { options } = await beginPasskeySignUp(harness.auth, { username: "Newcomer", ip: address });
    expect(options).toMatchObject({
      rp: { id: passkeys.rpId, name: passkeys.rpName },
      user: { name: "Newcomer", displayName: "Newcomer" },
      attestation: "none",
      excludeCredentials: [],
      authenticatorSelection: { residentKey: "required", requireResidentKey: true, userVerification: "required" },
      timeout: 300_000,
    });
    expect(options.pubKeyCredParams.map((param) => param.alg)).toEqual([-7, -8, -257]);
    expect(Buffer.from(options.user.id, "base64url")).toHaveLength(32);
    expect(stored()).toEqual([
      expect.objectContaining({
        kind: "webauthn_sign_up",
        userId: null,
        data: {
          challenge: options.challenge,
          username: "Newcomer",
          email: null,
          label: "Passkey",
          fields: {},
          userHandle: options.user.id,
        },
      }),
    ]);
    const again = await beginPasskeySignUp(harness.auth, { username: "Newcomer" });
    expect(again.options.user.id).not.toBe(options.user.id);
    expect(await accounts(harness)).toEqual([]);
    expect(harness.events).toEqual([]);
  });

  it("PL-15: finish makes a local account without a password, with its passkey under the ceremony's handle, and signs it in", async () => {
    const harness = signUpAuth({ signUp: { enabled: true, defaultRoles: ["member"] } });
    const { result, user, credentialId, authenticator } = await signUp(harness, { username: "Newcomer", ip: address });
    const tokens = tokensOf(result);
    expect(user).toMatchObject({
      username: "Newcomer",
      passwordHash: null,
      roles: ["member"],
      disabled: false,
      tokenVersion: 0,
      source: "local",
      email: null,
      emailVerified: false,
    });
    const userId = user?.id as string;
    const [credential] = authenticator.credentials();
    const passkey = await harness.storage.passkeys.findById(credentialId);
    expect(passkey).toMatchObject({ userId, label: "Passkey", userHandle: credential?.userHandle, counter: 0 });
    expect(passkey?.userHandle).not.toBe(userHandleOf(userId));
    const access = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
    expect(access).toMatchObject({ userId, roles: ["member"], amr: ["hwk", "user", "mfa"] });
    expect(tokens.deviceToken).toEqual(expect.any(String));
    // PL-13: a passkey sign-in is never followed by the offer of one.
    expect(tokens.offerPasskey).toBe(false);
    expect(harness.events.map((event) => event.type)).toEqual(["user.created", "passkey.registered", "login.succeeded"]);
    expect(harness.events[0]).toEqual({ type: "user.created", userId, by: "sign_up", at: harness.clock.now });
    expect(harness.events[1]).toEqual({ type: "passkey.registered", userId, credentialId, at: harness.clock.now });
  });

  it("PL-15: the new account has no second factor and no recovery codes; an address is stored unverified, its link sent only where email is configured", async () => {
    const plain = signUpAuth();
    const { user } = await signUp(plain, { username: "no-mail", email: "No-Mail@Example.com" });
    expect(user).toMatchObject({ email: "No-Mail@Example.com", emailVerified: false });
    expect(await plain.storage.recoveryCodes.count(user?.id as string)).toBe(0);
    expect(await plain.storage.totp.get(user?.id as string)).toBeNull();

    const mailing = makeEmailAuth({ passkeys, signUp: { enabled: true } });
    await signUp(mailing, { username: "without-address" });
    await signUp(mailing, { username: "with-address", email: "with@example.com" });
    await emailDeliveriesSettled(mailing.auth);
    expect(mailing.outbox.map((message) => [message.kind, message.to])).toEqual([["email_verification", "with@example.com"]]);
  });

  it("PL-15: the passkey-only account signs in with its passkey, discoverably and by username; the handle it sends is its passkey's", async () => {
    const harness = signUpAuth();
    const { user, authenticator } = await signUp(harness, { username: "newcomer" });
    for (const username of [undefined, "newcomer"]) {
      const signedIn = tokensOf(await passkeySignIn(harness.auth, authenticator, username));
      expect(signedIn.user.id).toBe(user?.id);
    }
    const { ceremonyId, options } = await webauthnBegin(harness.auth, {});
    const response = authenticator.authenticate(options, { userHandle: userHandleOf(user?.id as string) });
    expect(await outcome(webauthnFinish(harness.auth, { ceremonyId, response }))).toBe(ErrorCode.AuthenticationFailed);
  });

  it("PL-15: re-authentication uses the passkey: after the window a change needs it, and then goes on", async () => {
    const harness = signUpAuth();
    const { result, user, authenticator } = await signUp(harness, { username: "newcomer" });
    const userId = user?.id as string;
    const { sessionId } = await verifyAccessToken(harness.auth, { token: tokensOf(result).accessToken });
    harness.clock.advance(minutes(10));
    const late = await authError(webauthnRegisterBegin(harness.auth, { userId, sessionId, label: "Phone" }));
    expect(late.code).toBe(ErrorCode.MissingParameter);
    const begun = await reauthenticateWithPasskeyBegin(harness.auth, { userId, sessionId });
    const renewed = await reauthenticateWithPasskeyFinish(harness.auth, {
      userId,
      sessionId,
      ceremonyId: begun.ceremonyId,
      response: authenticator.authenticate(begun.options),
    });
    const fresh = (await verifyAccessToken(harness.auth, { token: renewed.accessToken })).sessionId;
    const phone = makeAuthenticator();
    const second = await webauthnRegisterBegin(harness.auth, { userId, sessionId: fresh, label: "Phone" });
    const registered = await webauthnRegisterFinish(harness.auth, {
      userId,
      sessionId: fresh,
      ceremonyId: second.ceremonyId,
      response: phone.register(second.options),
    });
    expect(registered.label).toBe("Phone");
    expect(tokensOf(await passkeySignIn(harness.auth, phone)).user.id).toBe(userId);
  });

  it("PL-15, WA-6: its last passkey cannot be revoked (40900) until it has another: a second passkey", async () => {
    const harness = signUpAuth();
    const { result, user, credentialId } = await signUp(harness, { username: "newcomer" });
    const userId = user?.id as string;
    const { sessionId } = await verifyAccessToken(harness.auth, { token: tokensOf(result).accessToken });
    const last = await authError(revokePasskey(harness.auth, { userId, sessionId, id: credentialId }));
    expect([last.code, last.message]).toEqual([
      ErrorCode.Conflict,
      "This passkey is the only way to sign in to the account; add another first",
    ]);
    expect(await harness.storage.passkeys.findById(credentialId)).not.toBeNull();
    const phone = makeAuthenticator();
    const begun = await webauthnRegisterBegin(harness.auth, { userId, sessionId, label: "Phone" });
    const second = await webauthnRegisterFinish(harness.auth, {
      userId,
      sessionId,
      ceremonyId: begun.ceremonyId,
      response: phone.register(begun.options),
    });
    await revokePasskey(harness.auth, { userId, sessionId, id: credentialId });
    expect(await harness.storage.passkeys.findById(credentialId)).toBeNull();
    expect((await authError(revokePasskey(harness.auth, { userId, sessionId, id: second.id }))).code).toBe(ErrorCode.Conflict);
  });

  it("PL-15, WA-6: with email sign-in on, a verified address is another way in: the last passkey may then go", async () => {
    const harness = makeEmailAuth({
      signUp: { enabled: true },
      passkeys,
      emailSignIn: { enabled: true },
      throttle: { emailSignInRequests: [{ limit: 100, window: "15m" }] },
    });
    const { result, user, credentialId } = await signUp(harness, { username: "newcomer", email: "New@Example.com" });
    const userId = user?.id as string;
    const { sessionId } = await verifyAccessToken(harness.auth, { token: tokensOf(result).accessToken });
    expect(user).toMatchObject({ email: "New@Example.com", emailVerified: false });
    expect((await authError(revokePasskey(harness.auth, { userId, sessionId, id: credentialId }))).code).toBe(ErrorCode.Conflict);
    await emailDeliveriesSettled(harness.auth);
    expect(sentTo(harness, "New@Example.com", "email_verification")).toHaveLength(1);
    await harness.storage.users.setEmail(userId, { email: "New@Example.com", verified: true }, harness.clock.now);
    await revokePasskey(harness.auth, { userId, sessionId, id: credentialId });
    expect(await harness.storage.passkeys.listByUser(userId)).toEqual([]);
  });

  it("PL-15, STUP-4: a passkey that did not verify the user signs in with amr hwk alone, or gets 40105 where a second factor is required", async () => {
    const preferred = signUpAuth({}, { userVerification: "preferred" });
    const plain = await signUp(preferred, { username: "touch" }, makeAuthenticator(), { uv: false });
    const access = await verifyAccessToken(preferred.auth, { token: tokensOf(plain.result).accessToken });
    expect(access.amr).toEqual(["hwk"]);
    const required = signUpAuth({ secondFactor: { required: "always" } }, { userVerification: "preferred" });
    const enrol = await signUp(required, { username: "touch" }, makeAuthenticator(), { uv: false });
    expect(enrol.result).toEqual({ status: "enrolment_required", tempToken: expect.any(String) });
    expect(await required.storage.passkeys.findById(enrol.credentialId)).toMatchObject({ userId: enrol.user?.id });
    const verified = await signUp(required, { username: "verified" });
    expect(verified.result.status).toBe("authenticated");
  });

  it("PL-16: a refused finish (wrong origin, wrong challenge, an unusable key, a malformed body) stores nothing and spends the ceremony", async () => {
    const harness = signUpAuth();
    const authenticator = makeAuthenticator();
    const refusals = [
      { overrides: { origin: "https://evil.example" }, code: ErrorCode.AuthenticationFailed },
      { overrides: { challenge: "AAAA" }, code: ErrorCode.AuthenticationFailed },
      {
        overrides: { publicKey: { kty: "EC2", x: new Uint8Array(32), y: new Uint8Array(32) } },
        code: ErrorCode.AuthenticationFailed,
      },
      { overrides: { counter: 0xffff_ffff }, code: ErrorCode.AuthenticationFailed },
      { overrides: { flags: { be: false, bs: true } }, code: ErrorCode.AuthenticationFailed },
    ] as const;
    for (const { overrides, code } of refusals) {
      const { ceremonyId, options } = await beginPasskeySignUp(harness.auth, { username: "newcomer" });
      const response = authenticator.register(options, overrides);
      expect(await outcome(finishPasskeySignUp(harness.auth, { ceremonyId, response })), JSON.stringify(overrides)).toBe(code);
      expect(await harness.storage.passkeys.findById(response.id)).toBeNull();
      const good = authenticator.register(options);
      expect(await outcome(finishPasskeySignUp(harness.auth, { ceremonyId, response: good }))).toBe(
        ErrorCode.AuthenticationFailed,
      );
    }
    const { ceremonyId } = await beginPasskeySignUp(harness.auth, { username: "newcomer" });
    expect(await outcome(finishPasskeySignUp(harness.auth, { ceremonyId, response: { id: 7 } }))).toBe(
      ErrorCode.MalformedParameter,
    );
    expect(await outcome(finishPasskeySignUp(harness.auth, { ceremonyId: "", response: {} }))).toBe(ErrorCode.MalformedParameter);
    expect(await accounts(harness)).toEqual([]);
    expect(harness.events.filter((event) => event.type !== "check.failed")).toEqual([]);
  });

  it("PL-16: a replayed finish, an expired ceremony and one of another kind are 40100; one account only", async () => {
    const harness = signUpAuth();
    const authenticator = makeAuthenticator();
    const { ceremonyId, options } = await beginPasskeySignUp(harness.auth, { username: "newcomer" });
    const response = authenticator.register(options);
    await finishPasskeySignUp(harness.auth, { ceremonyId, response });
    expect(await outcome(finishPasskeySignUp(harness.auth, { ceremonyId, response }))).toBe(ErrorCode.AuthenticationFailed);
    const late = await beginPasskeySignUp(harness.auth, { username: "later" });
    harness.clock.advance(minutes(5) + 1);
    const lateResponse = authenticator.register(late.options);
    expect(await outcome(finishPasskeySignUp(harness.auth, { ceremonyId: late.ceremonyId, response: lateResponse }))).toBe(
      ErrorCode.AuthenticationFailed,
    );
    const userId = await addUser(harness.auth, "alice");
    const other = await webauthnRegisterBegin(harness.auth, { userId, label: "Laptop", password: goodPassword });
    const stranger = makeAuthenticator().register(other.options);
    expect(await outcome(finishPasskeySignUp(harness.auth, { ceremonyId: other.ceremonyId, response: stranger }))).toBe(
      ErrorCode.AuthenticationFailed,
    );
    expect((await accounts(harness)).sort()).toEqual(["alice", "newcomer"]);
    expect(await harness.storage.passkeys.findById(lateResponse.id)).toBeNull();
  });

  it("PL-16: a sign-up never finished stores no account; its ceremony expires", async () => {
    const harness = signUpAuth();
    const { ceremonyId } = await beginPasskeySignUp(harness.auth, { username: "newcomer" });
    expect(await accounts(harness)).toEqual([]);
    harness.clock.advance(minutes(5));
    expect(await harness.storage.challenges.deleteExpired(harness.clock.now, 100)).toBeGreaterThanOrEqual(1);
    expect(await outcome(finishPasskeySignUp(harness.auth, { ceremonyId, response: {} }))).toBe(ErrorCode.AuthenticationFailed);
    expect(await beginPasskeySignUp(harness.auth, { username: "newcomer" })).toMatchObject({ ceremonyId: expect.any(String) });
  });

  it("PL-16: a username taken after the begin, or a credential id registered already, is 40900 and stores nothing", async () => {
    const harness = signUpAuth();
    const authenticator = makeAuthenticator();
    const { ceremonyId, options } = await beginPasskeySignUp(harness.auth, { username: "Newcomer" });
    await addUser(harness.auth, "newcomer");
    const response = authenticator.register(options);
    const taken = await authError(finishPasskeySignUp(harness.auth, { ceremonyId, response }));
    expect([taken.code, taken.message]).toEqual([ErrorCode.Conflict, "The username is taken"]);
    expect(await harness.storage.passkeys.findById(response.id)).toBeNull();

    const aliceId = await addUser(harness.auth, "alice");
    const alices = await registerPasskey(harness.auth, aliceId, makeAuthenticator());
    const again = await beginPasskeySignUp(harness.auth, { username: "second" });
    const copy = authenticator.register(again.options, { credentialId: alices.id });
    const registered = await authError(finishPasskeySignUp(harness.auth, { ceremonyId: again.ceremonyId, response: copy }));
    expect([registered.code, registered.message]).toEqual([ErrorCode.Conflict, "This passkey is already registered"]);
    expect(await harness.storage.users.findByUsernameKey("second")).toBeNull();
  });

  it("PL-16: of 20 concurrent finishes of one ceremony one makes the account, the others are 40100", async () => {
    const harness = signUpAuth({ storage: slowStorage(memoryStorage()) });
    const { ceremonyId, options } = await beginPasskeySignUp(harness.auth, { username: "newcomer" });
    const response = makeAuthenticator().register(options);
    const outcomes = await tally(Array.from({ length: 20 }, () => finishPasskeySignUp(harness.auth, { ceremonyId, response })));
    expect(outcomes).toEqual(
      new Map<number | "fulfilled", number>([
        ["fulfilled", 1],
        [ErrorCode.AuthenticationFailed, 19],
      ]),
    );
    expect(await accounts(harness)).toEqual(["newcomer"]);
  });

  it("PL-16: of 20 concurrent sign-ups for one username, each with its own ceremony and passkey, one makes the account", async () => {
    const harness = signUpAuth({ storage: slowStorage(memoryStorage()) });
    const begun = await Promise.all(Array.from({ length: 20 }, () => beginPasskeySignUp(harness.auth, { username: "newcomer" })));
    const responses = begun.map(({ options }) => makeAuthenticator().register(options));
    const outcomes = await tally(
      begun.map(({ ceremonyId }, index) => finishPasskeySignUp(harness.auth, { ceremonyId, response: responses[index] })),
    );
    expect(outcomes).toEqual(
      new Map<number | "fulfilled", number>([
        ["fulfilled", 1],
        [ErrorCode.Conflict, 19],
      ]),
    );
    expect(await accounts(harness)).toEqual(["newcomer"]);
    const stored = await Promise.all(responses.map((response) => harness.storage.passkeys.findById(response.id)));
    expect(stored.filter((passkey) => passkey !== null)).toHaveLength(1);
  });

  it("PL-17: off unless sign-up is on and passkeys are configured: 40400, nothing stored or counted", async () => {
    const off = [makePasskeyAuth(), makePasskeyAuth({ signUp: { enabled: false } }), makeAuth({ signUp: { enabled: true } })];
    for (const harness of off) {
      const stored = ceremoniesStored(harness);
      expect(await outcome(beginPasskeySignUp(harness.auth, { username: "newcomer", ip: address }))).toBe(ErrorCode.NotFound);
      expect(await outcome(finishPasskeySignUp(harness.auth, { ceremonyId: "x", response: {} }))).toBe(ErrorCode.NotFound);
      expect(stored()).toEqual([]);
      expect(harness.events).toEqual([]);
    }
  });

  it("PL-17, RL-7: each address begins throttle.unauthenticatedWrites sign-ups, refusals of a taken name included; another address is not held back", async () => {
    const harness = signUpAuth({ throttle: { unauthenticatedWrites: [{ limit: 2, window: "1m" }] } });
    await addUser(harness.auth, "taken");
    expect(await outcome(beginPasskeySignUp(harness.auth, { username: "taken", ip: address }))).toBe(ErrorCode.Conflict);
    await beginPasskeySignUp(harness.auth, { username: "first", ip: address });
    const throttled = await authError(beginPasskeySignUp(harness.auth, { username: "second", ip: address }));
    expect([throttled.code, throttled.retryAfterSeconds]).toEqual([ErrorCode.TooManyAttempts, 60]);
    expect(await outcome(beginPasskeySignUp(harness.auth, { username: "taken", ip: address }))).toBe(ErrorCode.TooManyAttempts);
    await beginPasskeySignUp(harness.auth, { username: "second", ip: "198.51.100.9" });
    harness.clock.advance(minutes(1));
    await beginPasskeySignUp(harness.auth, { username: "second", ip: address });
  });

  it("PL-17, SU-1: no role, id, handle or state is taken from the input; the roles are signUp.defaultRoles", async () => {
    const harness = signUpAuth({ signUp: { enabled: true, defaultRoles: ["member"] } });
    const input = {
      username: "mallory",
      roles: ["admin"],
      id: "chosen-id",
      userHandle: "AAAA",
      tokenVersion: 7,
      disabled: true,
      source: "directory",
      emailVerified: true,
      email: "mallory@example.com",
    };
    const { result, user } = await signUp(harness, input as never);
    expect(user).toMatchObject({ roles: ["member"], tokenVersion: 0, disabled: false, source: "local", emailVerified: false });
    expect(user?.id).not.toBe("chosen-id");
    expect(tokensOf(result).user.roles).toEqual(["member"]);
    expect((await harness.storage.passkeys.listByUser(user?.id as string))[0]?.userHandle).not.toBe("AAAA");
  });

  it("PW-5, SU-1: the input is checked as register checks it, before any attempt is counted", async () => {
    const harness = signUpAuth({ throttle: { unauthenticatedWrites: [{ limit: 1, window: "1m" }] } });
    const refused = async (input: Partial<BeginPasskeySignUpInput>) => {
      const error = await authError(beginPasskeySignUp(harness.auth, { ip: address, ...input } as BeginPasskeySignUpInput));
      return [error.code, error.message];
    };
    expect(await refused({})).toEqual([ErrorCode.MissingParameter, "username is required"]);
    expect(await refused({ username: 7 as never })).toEqual([ErrorCode.MalformedParameter, "username must be a string"]);
    expect(await refused({ username: " spaced" })).toEqual([
      ErrorCode.ValidationFailed,
      "The username must not start or end with a space",
    ]);
    expect(await refused({ username: "ok", email: "nope" })).toEqual([
      ErrorCode.MalformedParameter,
      "email must be an address with one @ between a name and a domain",
    ]);
    expect((await refused({ username: "ok", label: "x".repeat(65) }))[0]).toBe(ErrorCode.ValidationFailed);
    expect((await refused({ username: "ok", label: "a\u200bb" }))[0]).toBe(ErrorCode.ValidationFailed);
    expect((await refused({ username: "ok", fields: { nope: 1 } }))[0]).toBe(ErrorCode.MalformedParameter);
    const { options } = await beginPasskeySignUp(harness.auth, { username: "ok", label: "  My phone ", ip: address });
    expect(options.user.name).toBe("ok");
  });

  it("SU-1: fields declared signUp are taken and stored, the others get their defaults; a field not declared signUp is refused", async () => {
    const harness = signUpAuth({
      user: {
        fields: {
          nickname: field.string({ maxLength: 20, signUp: true, default: "" }),
          plan: field.enum(["free", "paid"], { default: "free" }),
        },
      },
    });
    const refused = await authError(beginPasskeySignUp(harness.auth, { username: "x", fields: { plan: "paid" } }));
    expect(refused.code).toBe(ErrorCode.ValidationFailed);
    const { user } = await signUp(harness, { username: "newcomer", fields: { nickname: "Newt" } });
    expect(user?.fields).toEqual({ nickname: "Newt", plan: "free" });
  });

  it("SU-1: a required field without a default must be given: 40001 at the begin, before any ceremony is made", async () => {
    const harness = signUpAuth({ user: { fields: { company: field.string({ signUp: true, required: true }) } } });
    const stored = ceremoniesStored(harness);
    const missing = await authError(beginPasskeySignUp(harness.auth, { username: "newcomer" }));
    expect([missing.code, missing.message]).toEqual([ErrorCode.MissingParameter, "fields.company is required"]);
    expect(stored()).toEqual([]);
    const { user } = await signUp(harness, { username: "newcomer", fields: { company: "Acme" } });
    expect(user?.fields).toEqual({ company: "Acme" });
  });
});
