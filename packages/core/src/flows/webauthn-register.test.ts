import { createHash, generateKeyPairSync, randomBytes } from "node:crypto";
import {
  type CborValue,
  type CoseKeyParts,
  type RegistrationOverrides,
  type SoftwareAuthenticator,
  encodeCbor,
} from "@portcullis/testing";
import type { PublicKeyCredentialCreationOptionsJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import { describe, expect, it, vi } from "vitest";
import { sha256 as sha256Hex } from "../crypto/random.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { memoryStorage } from "../storage/memory.js";
import type { ChallengeRecord } from "../storage/types.js";
import { userHandleOf } from "../webauthn/ceremony.js";
import {
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
  outcome,
  signIn,
  slowStorage,
  tally,
  wrongCodeAt,
} from "./fixtures.test-support.js";
import { logout } from "./logout.js";
import { setUserDisabled } from "./manage-users.js";
import { makeAuthenticator, makePasskeyAuth, origin, passkeySignIn, rpId } from "./passkeys.test-support.js";
import { refresh } from "./refresh.js";
import { expectOnlyCurrentSessionLives, twoSessions } from "./sessions.test-support.js";
import { beginTotpSetup } from "./totp-enrolment.js";
import { verifyAccessToken } from "./verify-access-token.js";
import { webauthnBegin, webauthnFinish } from "./webauthn-login.js";
import { type WebauthnRegisterBeginInput, webauthnRegisterBegin, webauthnRegisterFinish } from "./webauthn-register.js";

const minutes = (count: number) => count * 60_000;
const base64url = (bytes: Uint8Array | Buffer) => Buffer.from(bytes).toString("base64url");
const sha256 = (data: Uint8Array | string) => new Uint8Array(createHash("sha256").update(data).digest());

type BeginExtras = Partial<Omit<WebauthnRegisterBeginInput, "userId">>;

/** Begins a registration, re-authenticated with the password unless `extras` says otherwise. */
function begin(harness: Harness, userId: string, extras: BeginExtras = {}) {
  return webauthnRegisterBegin(harness.auth, { userId, label: "Laptop", password: goodPassword, ...extras });
}

function finish(harness: Harness, userId: string, ceremonyId: string, response: unknown) {
  return webauthnRegisterFinish(harness.auth, { userId, ceremonyId, response });
}

/** Registers a passkey through begin and finish, with the given overrides of the authenticator. */
async function register(
  harness: Harness,
  userId: string,
  authenticator: SoftwareAuthenticator,
  overrides: RegistrationOverrides = {},
  extras: BeginExtras = {},
) {
  const { ceremonyId, options } = await begin(harness, userId, extras);
  return finish(harness, userId, ceremonyId, authenticator.register(options, overrides));
}

/** A user signed in now with the password; returns its id, tokens and the session of its access token. */
async function signedIn(harness: Harness, username: string) {
  const userId = await addUser(harness.auth, username);
  const tokens = await signIn(harness, username);
  const { sessionId } = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
  return { userId, sessionId, tokens };
}

const tokenVersionOf = async (harness: Harness, userId: string) =>
  (await harness.storage.users.findById(userId))?.tokenVersion as number;

/** The COSE public key inside a registration response's authenticator data (no extensions). */
function coseKeyOf(response: RegistrationResponseJSON): string {
  const authData = Buffer.from(response.response.authenticatorData as string, "base64url");
  const idLength = authData.readUInt16BE(53);
  return base64url(authData.subarray(55 + idLength));
}

/** A challenge-store `put` spy: the ceremonies stored while it is active. */
function ceremoniesStored(harness: Harness) {
  const put = vi.spyOn(harness.storage.challenges, "put");
  return {
    records: () => put.mock.calls.map(([record]) => record as ChallengeRecord),
    restore: () => put.mockRestore(),
  };
}

type HandMadeAlgorithm = "ES256" | "ES384" | "RS256";

function handMadeCoseKey(algorithm: HandMadeAlgorithm): Uint8Array {
  const bytes = (value: string | undefined) => new Uint8Array(Buffer.from(value ?? "", "base64url"));
  if (algorithm === "RS256") {
    const jwk = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey.export({ format: "jwk" });
    return encodeCbor(
      new Map<number, CborValue>([
        [1, 3],
        [3, -257],
        [-1, bytes(jwk.n)],
        [-2, bytes(jwk.e)],
      ]),
    );
  }
  const p256 = algorithm === "ES256";
  const jwk = generateKeyPairSync("ec", { namedCurve: p256 ? "P-256" : "P-384" }).publicKey.export({ format: "jwk" });
  return encodeCbor(
    new Map<number, CborValue>([
      [1, 2],
      [3, p256 ? -7 : -35],
      [-1, p256 ? 1 : 2],
      [-2, bytes(jwk.x)],
      [-3, bytes(jwk.y)],
    ]),
  );
}

/**
 * A registration response built by hand, for key algorithms the software authenticator does not
 * make: `none` attestation (nothing is signed at registration), UP and UV set, the options' RP ID
 * and challenge, the test origin. Everything else is as a browser would send it.
 */
function handMadeRegistration(
  options: PublicKeyCredentialCreationOptionsJSON,
  algorithm: HandMadeAlgorithm,
): RegistrationResponseJSON {
  const id = new Uint8Array(randomBytes(16));
  const idLength = Buffer.alloc(2);
  idLength.writeUInt16BE(id.length);
  const authData = Buffer.concat([
    sha256(options.rp.id as string),
    Uint8Array.of(0x45),
    new Uint8Array(4),
    new Uint8Array(16),
    idLength,
    id,
    handMadeCoseKey(algorithm),
  ]);
  const clientData = JSON.stringify({ type: "webauthn.create", challenge: options.challenge, origin, crossOrigin: false });
  const attestationObject = encodeCbor(
    new Map<string, CborValue>([
      ["fmt", "none"],
      ["attStmt", new Map()],
      ["authData", new Uint8Array(authData)],
    ]),
  );
  return {
    id: base64url(id),
    rawId: base64url(id),
    type: "public-key",
    response: {
      clientDataJSON: base64url(Buffer.from(clientData)),
      attestationObject: base64url(attestationObject),
      transports: ["usb"],
    },
    clientExtensionResults: {},
  };
}

describe("webauthnRegisterBegin", () => {
  describe("WA-6: re-authentication", () => {
    it("WA-6: registration needs a signed-in user: unknown or disabled users get 40101", async () => {
      const harness = makePasskeyAuth();
      expect(await outcome(begin(harness, "no-such-user"))).toBe(ErrorCode.InvalidToken);
      const userId = await addUser(harness.auth, "disabled");
      await setUserDisabled(harness.auth, { userId, disabled: true });
      expect(await outcome(begin(harness, userId))).toBe(ErrorCode.InvalidToken);
      expect(await outcome(webauthnRegisterBegin(harness.auth, { userId: "", label: "Laptop" }))).toBe(
        ErrorCode.MissingParameter,
      );
    });

    it("WA-6: no proof and a sign-in older than the window is 40001; no ceremony is stored", async () => {
      const harness = makePasskeyAuth();
      const { userId, sessionId } = await signedIn(harness, "stale");
      harness.clock.advance(minutes(5) + 1000);
      const stored = ceremoniesStored(harness);
      const refused = await authError(begin(harness, userId, { sessionId, password: undefined }));
      expect(refused.code).toBe(ErrorCode.MissingParameter);
      expect(refused.message).toMatch(/password/);
      expect(await outcome(begin(harness, userId, { password: undefined }))).toBe(ErrorCode.MissingParameter);
      expect(stored.records()).toEqual([]);
      stored.restore();
    });

    it("WA-6: the current password is proof, however old the sign-in", async () => {
      const harness = makePasskeyAuth();
      const { userId, sessionId } = await signedIn(harness, "with-password");
      harness.clock.advance(minutes(60));
      const passkey = await register(harness, userId, makeAuthenticator(), {}, { sessionId, password: goodPassword });
      expect(passkey.label).toBe("Laptop");
      expect(await harness.storage.passkeys.listByUser(userId)).toHaveLength(1);
    });

    it("WA-6: a wrong password is 40100 and no ceremony is stored", async () => {
      const harness = makePasskeyAuth();
      const { userId, sessionId } = await signedIn(harness, "wrong-password");
      const stored = ceremoniesStored(harness);
      // Even a fresh sign-in does not rescue a wrong password that was offered.
      const refused = await authError(begin(harness, userId, { sessionId, password: "not the password" }));
      expect(refused.code).toBe(ErrorCode.AuthenticationFailed);
      expect(stored.records()).toEqual([]);
      stored.restore();
    });

    it("RL-1: wrong re-authentication passwords count against the account throttle", async () => {
      const harness = makePasskeyAuth();
      const userId = await addUser(harness.auth, "guessed");
      for (let attempt = 0; attempt < 5; attempt += 1) {
        expect(await outcome(begin(harness, userId, { password: `guess ${attempt}` }))).toBe(ErrorCode.AuthenticationFailed);
      }
      const throttled = await authError(begin(harness, userId));
      expect(throttled.code).toBe(ErrorCode.TooManyAttempts);
      expect(throttled.retryAfterSeconds).toBeGreaterThan(0);
      expect(await outcome(signIn(harness, "guessed"))).toBe(ErrorCode.TooManyAttempts);
    });

    it("WA-6, STUP-3: with TOTP on, the password and a current code are proof, and the code's step is spent", async () => {
      const harness = makePasskeyAuth({ throttle: generousThrottle });
      const userId = await addUser(harness.auth, "totp-user");
      const { secret } = await enrolTotp(harness.auth, userId);
      expect(await outcome(begin(harness, userId))).toBe(ErrorCode.MissingParameter);
      const code = nextCode(harness, secret);
      expect(await outcome(begin(harness, userId, { password: undefined, totpCode: code }))).toBe(ErrorCode.MissingParameter);
      const passkey = await register(harness, userId, makeAuthenticator(), {}, { totpCode: code });
      expect(passkey.label).toBe("Laptop");
      const replay = await authError(begin(harness, userId, { totpCode: code }));
      expect(replay.code).toBe(ErrorCode.SecondFactorFailed);
      expect(await outcome(begin(harness, userId, { totpCode: wrongCodeAt(secret, harness.clock.now) }))).toBe(
        ErrorCode.SecondFactorFailed,
      );
      await begin(harness, userId, { totpCode: nextCode(harness, secret) });
    });

    it("WA-6: a TOTP code while TOTP is off (or only pending) is 40900", async () => {
      const harness = makePasskeyAuth();
      const userId = await addUser(harness.auth, "no-totp");
      expect(await outcome(begin(harness, userId, { password: undefined, totpCode: "123456" }))).toBe(ErrorCode.Conflict);
      const setup = await beginTotpSetup(harness.auth, { userId, password: goodPassword });
      const code = codeAt(decodeBase32(setup.secret), harness.clock.now);
      expect(await outcome(begin(harness, userId, { password: undefined, totpCode: code }))).toBe(ErrorCode.Conflict);
      expect((await harness.storage.totp.get(userId))?.enabled).toBe(false);
    });

    it("WA-6: a sign-in younger than the window is proof without the password", async () => {
      const harness = makePasskeyAuth();
      const { userId, sessionId } = await signedIn(harness, "recent");
      harness.clock.advance(minutes(5) - 1000);
      const passkey = await register(harness, userId, makeAuthenticator(), {}, { sessionId, password: undefined });
      expect(await harness.storage.passkeys.listByUser(userId)).toEqual([expect.objectContaining({ id: passkey.id })]);
    });

    it("WA-6: the session must be the user's own and live: another user's or a revoked one is no proof", async () => {
      const harness = makePasskeyAuth();
      const { userId, tokens } = await signedIn(harness, "owner");
      const other = await signedIn(harness, "someone-else");
      expect(await outcome(begin(harness, userId, { sessionId: other.sessionId, password: undefined }))).toBe(
        ErrorCode.MissingParameter,
      );
      const { sessionId } = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
      await logout(harness.auth, { refreshToken: tokens.refreshToken });
      expect(await outcome(begin(harness, userId, { sessionId, password: undefined }))).toBe(ErrorCode.MissingParameter);
      expect(await outcome(begin(harness, userId, { sessionId: "no-such-session", password: undefined }))).toBe(
        ErrorCode.MissingParameter,
      );
    });

    it("WA-6: passkeys.reauthenticationWindow overrides reauthentication.recentSignIn, shorter or longer", async () => {
      const short = makePasskeyAuth({ reauthentication: { recentSignIn: "15m" } }, { reauthenticationWindow: "1m" });
      const a = await signedIn(short, "short-window");
      short.clock.advance(minutes(1) - 1000);
      await begin(short, a.userId, { sessionId: a.sessionId, password: undefined });
      short.clock.advance(minutes(1));
      expect(await outcome(begin(short, a.userId, { sessionId: a.sessionId, password: undefined }))).toBe(
        ErrorCode.MissingParameter,
      );

      const long = makePasskeyAuth({}, { reauthenticationWindow: "10m" });
      const b = await signedIn(long, "long-window");
      long.clock.advance(minutes(7));
      await begin(long, b.userId, { sessionId: b.sessionId, password: undefined });
      long.clock.advance(minutes(3));
      expect(await outcome(begin(long, b.userId, { sessionId: b.sessionId, password: undefined }))).toBe(
        ErrorCode.MissingParameter,
      );
    });

    it("WA-6: without passkeys.reauthenticationWindow, reauthentication.recentSignIn applies", async () => {
      const harness = makePasskeyAuth({ reauthentication: { recentSignIn: "1m" } });
      const { userId, sessionId } = await signedIn(harness, "general-window");
      harness.clock.advance(minutes(2));
      expect(await outcome(begin(harness, userId, { sessionId, password: undefined }))).toBe(ErrorCode.MissingParameter);
    });

    it("WA-6: passkeys.reauthenticationWindow false asks for a proof every time, even right after signing in", async () => {
      const harness = makePasskeyAuth({}, { reauthenticationWindow: false });
      const { userId, sessionId } = await signedIn(harness, "always-ask");
      expect(await outcome(begin(harness, userId, { sessionId, password: undefined }))).toBe(ErrorCode.MissingParameter);
      await begin(harness, userId, { sessionId, password: goodPassword });
    });

    it("WA-6: a bad label is refused with 42200 before any password is tried", async () => {
      const harness = makePasskeyAuth();
      const userId = await addUser(harness.auth, "bad-label");
      const stored = ceremoniesStored(harness);
      for (const label of ["   ", "x".repeat(65), "Lap\u0000top"]) {
        expect(await outcome(begin(harness, userId, { label, password: "wrong" }))).toBe(ErrorCode.ValidationFailed);
      }
      expect(await outcome(begin(harness, userId, { label: 7 as unknown as string }))).toBe(ErrorCode.MalformedParameter);
      expect(stored.records()).toEqual([]);
      stored.restore();
      // None of those wrong passwords was counted.
      for (let attempt = 0; attempt < 5; attempt += 1) await begin(harness, userId);
    });
  });

  describe("RL-7: open registrations per user", () => {
    it("RL-7: a stream of begins by one signed-in user leaves storage bounded: past 10 per ceremonyTtl, 42900 with Retry-After", async () => {
      const storage = memoryStorage();
      const harness = makePasskeyAuth({ storage });
      const { userId, sessionId } = await signedIn(harness, "streamer");
      const before = storage.sizes();
      const outcomes = await tally(Array.from({ length: 300 }, () => begin(harness, userId, { sessionId, password: undefined })));
      expect(outcomes).toEqual(
        new Map<number | "fulfilled", number>([
          ["fulfilled", 10],
          [ErrorCode.TooManyAttempts, 290],
        ]),
      );
      expect(storage.sizes().challenges - before.challenges).toBe(10);
      expect(storage.sizes().counters - before.counters).toBe(1);
      const refused = await authError(begin(harness, userId, { sessionId, password: undefined }));
      expect(refused.retryAfterSeconds).toBe(300);
      harness.clock.advance(minutes(2));
      expect((await authError(begin(harness, userId))).retryAfterSeconds).toBe(180);
    });

    it("RL-7: the bound is per user and per ceremonyTtl, and passkeys.registrationCeremonyLimit sets it", async () => {
      const harness = makePasskeyAuth({}, { registrationCeremonyLimit: 2, ceremonyTtl: "1m" });
      const alice = await addUser(harness.auth, "alice");
      const bob = await addUser(harness.auth, "bob");
      await begin(harness, alice);
      await begin(harness, alice);
      expect(await outcome(begin(harness, alice))).toBe(ErrorCode.TooManyAttempts);
      await begin(harness, bob);
      harness.clock.advance(minutes(1));
      const { ceremonyId, options } = await begin(harness, alice);
      await finish(harness, alice, ceremonyId, makeAuthenticator().register(options));
      expect(await harness.storage.passkeys.listByUser(alice)).toHaveLength(1);
    });

    it("RL-7: a begin refused before its proof (wrong password, no proof, bad label) counts nothing", async () => {
      const harness = makePasskeyAuth({ throttle: generousThrottle }, { registrationCeremonyLimit: 1 });
      const userId = await addUser(harness.auth, "unproven");
      for (let attempt = 0; attempt < 5; attempt += 1) {
        expect(await outcome(begin(harness, userId, { password: "wrong password" }))).toBe(ErrorCode.AuthenticationFailed);
        expect(await outcome(begin(harness, userId, { password: undefined }))).toBe(ErrorCode.MissingParameter);
        expect(await outcome(begin(harness, userId, { label: "\u200B" }))).toBe(ErrorCode.ValidationFailed);
      }
      await begin(harness, userId);
      expect(await outcome(begin(harness, userId))).toBe(ErrorCode.TooManyAttempts);
    });
  });

  describe("WA-1: creation options", () => {
    it("WA-1: the options: rp from config, ES256, EdDSA, RS256 in order, resident key preferred, no attestation, timeout = ceremonyTtl", async () => {
      const harness = makePasskeyAuth();
      const userId = await addUser(harness.auth, "options");
      const { options } = await begin(harness, userId);
      expect(options.rp).toEqual({ id: rpId, name: "Example" });
      expect(options.pubKeyCredParams).toEqual([
        { alg: -7, type: "public-key" },
        { alg: -8, type: "public-key" },
        { alg: -257, type: "public-key" },
      ]);
      expect(options.authenticatorSelection).toMatchObject({ residentKey: "preferred", userVerification: "required" });
      expect(options.attestation).toBe("none");
      expect(options.timeout).toBe(minutes(5));
      expect(options.excludeCredentials).toEqual([]);

      const custom = makePasskeyAuth({}, { userVerification: "preferred", ceremonyTtl: "2m", rpName: "Other Name" });
      const otherId = await addUser(custom.auth, "options-custom");
      const other = await begin(custom, otherId);
      expect(other.options.authenticatorSelection).toMatchObject({ residentKey: "preferred", userVerification: "preferred" });
      expect(other.options.timeout).toBe(minutes(2));
      expect(other.options.rp).toEqual({ id: rpId, name: "Other Name" });
    });

    it("WA-6: user.id is the user handle (base64url of the user id's UTF-8 bytes) and user.name the username", async () => {
      const harness = makePasskeyAuth();
      const userId = await addUser(harness.auth, "Zoë");
      const { options } = await begin(harness, userId);
      expect(options.user.id).toBe(Buffer.from(userId, "utf8").toString("base64url"));
      expect(options.user.id).toBe(userHandleOf(userId));
      expect(options.user.name).toBe("Zoë");
      expect(options.user.displayName).toBe("Zoë");
    });

    it("WA-1: the challenge is 32 fresh random bytes, stored with the ceremony under the SHA-256 of its id, for ceremonyTtl", async () => {
      const harness = makePasskeyAuth({}, { ceremonyTtl: "3m" });
      const userId = await addUser(harness.auth, "challenge");
      const stored = ceremoniesStored(harness);
      const first = await begin(harness, userId, { label: "  Cafe\u0301  " });
      const second = await begin(harness, userId);
      expect(Buffer.from(first.options.challenge, "base64url").length).toBeGreaterThanOrEqual(16);
      expect(Buffer.from(first.options.challenge, "base64url")).toHaveLength(32);
      expect(second.options.challenge).not.toBe(first.options.challenge);
      expect(second.ceremonyId).not.toBe(first.ceremonyId);
      const [record] = stored.records();
      expect(record).toEqual({
        id: sha256Hex(first.ceremonyId),
        kind: "webauthn_register",
        userId,
        data: { challenge: first.options.challenge, label: "Caf\u00e9" },
        attempts: 0,
        createdAt: harness.clock.now,
        expiresAt: harness.clock.now + minutes(3),
      });
      expect(JSON.stringify(stored.records())).not.toContain(first.ceremonyId);
      stored.restore();
    });

    it("WA-6: excludeCredentials lists the user's passkeys, with transports, and no one else's", async () => {
      const harness = makePasskeyAuth({ throttle: generousThrottle });
      const userId = await addUser(harness.auth, "excluder");
      const otherId = await addUser(harness.auth, "other");
      const laptop = await register(harness, userId, makeAuthenticator());
      const key = await register(harness, userId, makeAuthenticator({ transports: ["usb", "nfc"] }));
      await register(harness, otherId, makeAuthenticator());
      const { options } = await begin(harness, userId);
      expect(options.excludeCredentials).toEqual(
        expect.arrayContaining([
          { id: laptop.id, type: "public-key", transports: ["internal"] },
          { id: key.id, type: "public-key", transports: ["usb", "nfc"] },
        ]),
      );
      expect(options.excludeCredentials).toHaveLength(2);
    });

    it("WA-6: an authenticator that holds an excluded credential refuses to register again", async () => {
      const harness = makePasskeyAuth();
      const userId = await addUser(harness.auth, "excluded");
      const authenticator = makeAuthenticator();
      await register(harness, userId, authenticator);
      const { options } = await begin(harness, userId);
      expect(() => authenticator.register(options)).toThrow(/excluded credential/);
    });
  });
});

describe("webauthnRegisterFinish", () => {
  describe("WA-6: results on real signed attestations", () => {
    for (const algorithm of ["ES256", "EdDSA"] as const) {
      for (const attestation of ["none", "packed"] as const) {
        it(`WA-6: an ${algorithm} passkey with ${attestation} attestation registers, and then signs in`, async () => {
          const harness = makePasskeyAuth();
          const userId = await addUser(harness.auth, `user-${algorithm}-${attestation}`);
          const authenticator = makeAuthenticator({ algorithm });
          const { ceremonyId, options } = await begin(harness, userId);
          const response = authenticator.register(options, { attestation });
          expect(response.response.publicKeyAlgorithm).toBe(algorithm === "ES256" ? -7 : -8);
          const passkey = await finish(harness, userId, ceremonyId, response);
          expect(passkey.id).toBe(response.id);
          const stored = await harness.storage.passkeys.findById(passkey.id);
          expect(stored?.publicKey).toBe(coseKeyOf(response));
          expect(stored?.userId).toBe(userId);
          const signedIn = await passkeySignIn(harness.auth, authenticator);
          expect(signedIn.status).toBe("authenticated");
        });
      }
    }

    it("WA-6: an RS256 key (hand-made, none attestation) is accepted", async () => {
      const harness = makePasskeyAuth();
      const userId = await addUser(harness.auth, "rsa");
      const { ceremonyId, options } = await begin(harness, userId);
      const response = handMadeRegistration(options, "RS256");
      const passkey = await finish(harness, userId, ceremonyId, response);
      expect(passkey.id).toBe(response.id);
    });

    it("WA-6: the result is the owner's view; storage holds the COSE key and counter", async () => {
      const harness = makePasskeyAuth();
      const userId = await addUser(harness.auth, "result");
      const authenticator = makeAuthenticator({ transports: ["usb", "nfc"] });
      const { ceremonyId, options } = await begin(harness, userId, { label: "  Cafe\u0301 key\t" });
      harness.clock.advance(1234);
      const response = authenticator.register(options, { counter: 41 });
      const passkey = await finish(harness, userId, ceremonyId, response);
      expect(passkey).toEqual({
        id: response.id,
        label: "Caf\u00e9 key",
        transports: ["usb", "nfc"],
        createdAt: harness.clock.now,
        lastUsedAt: null,
        backupEligible: false,
        backupState: false,
      });
      expect(JSON.stringify(passkey)).not.toContain(coseKeyOf(response));
      expect(await harness.storage.passkeys.findById(response.id)).toEqual({
        ...passkey,
        userId,
        publicKey: coseKeyOf(response),
        counter: 41,
        userHandle: null,
      });
    });

    it("WA-6: the label comes from begin; a label in the response is ignored", async () => {
      const harness = makePasskeyAuth();
      const userId = await addUser(harness.auth, "label-source");
      const { ceremonyId, options } = await begin(harness, userId, { label: "From begin" });
      const response = { ...makeAuthenticator().register(options), label: "From finish" };
      expect((await finish(harness, userId, ceremonyId, response)).label).toBe("From begin");
    });

    it("WA-3: backupEligible and backupState come from the BE and BS flags", async () => {
      const harness = makePasskeyAuth({ throttle: generousThrottle });
      const userId = await addUser(harness.auth, "backup");
      const cases = [
        [{ be: false, bs: false }, false, false],
        [{ be: true, bs: false }, true, false],
        [{ be: true, bs: true }, true, true],
      ] as const;
      for (const [flags, backupEligible, backupState] of cases) {
        const passkey = await register(harness, userId, makeAuthenticator(), { flags });
        expect(passkey).toMatchObject({ backupEligible, backupState });
        expect(await harness.storage.passkeys.findById(passkey.id)).toMatchObject({ backupEligible, backupState });
      }
    });

    it("WA-6: transports that are not a list of short names are dropped", async () => {
      const harness = makePasskeyAuth({ throttle: generousThrottle });
      const userId = await addUser(harness.auth, "transports");
      for (const transports of [["USB!"], ["x".repeat(33)], Array.from({ length: 9 }, () => "usb")]) {
        const passkey = await register(harness, userId, makeAuthenticator({ transports }));
        expect(passkey.transports).toEqual([]);
      }
    });
  });

  describe("WA-6: unique credential ids", () => {
    it("WA-6: a credential id already registered to the same user is 40900 and nothing stored changes", async () => {
      const harness = makePasskeyAuth({ throttle: generousThrottle });
      const userId = await addUser(harness.auth, "twice");
      const first = await register(harness, userId, makeAuthenticator());
      const before = await harness.storage.passkeys.listByUser(userId);
      const version = await tokenVersionOf(harness, userId);
      harness.events.length = 0;

      const { ceremonyId, options } = await begin(harness, userId, { label: "Impostor" });
      const response = makeAuthenticator({ algorithm: "EdDSA" }).register(options, {
        credentialId: first.id,
        ignoreExcludeCredentials: true,
      });
      expect(response.id).toBe(first.id);
      const conflict = await authError(finish(harness, userId, ceremonyId, response));
      expect(conflict.code).toBe(ErrorCode.Conflict);
      expect(await harness.storage.passkeys.listByUser(userId)).toEqual(before);
      expect(await tokenVersionOf(harness, userId)).toBe(version);
      expect(harness.events.filter((event) => event.type !== "user.created")).toEqual([]);
      expect(await outcome(finish(harness, userId, ceremonyId, response))).toBe(ErrorCode.AuthenticationFailed);
    });

    it("WA-6: a credential id registered to another user is 40900 and the other user's passkey is unchanged", async () => {
      const harness = makePasskeyAuth();
      const victimId = await addUser(harness.auth, "victim");
      const attackerId = await addUser(harness.auth, "attacker");
      const victimAuthenticator = makeAuthenticator();
      const victimPasskey = await register(harness, victimId, victimAuthenticator);
      const stored = await harness.storage.passkeys.findById(victimPasskey.id);
      const victimVersion = await tokenVersionOf(harness, victimId);

      const { ceremonyId, options } = await begin(harness, attackerId);
      const response = makeAuthenticator().register(options, { credentialId: victimPasskey.id, ignoreExcludeCredentials: true });
      expect(await outcome(finish(harness, attackerId, ceremonyId, response))).toBe(ErrorCode.Conflict);
      expect(await harness.storage.passkeys.findById(victimPasskey.id)).toEqual(stored);
      expect(await harness.storage.passkeys.listByUser(attackerId)).toEqual([]);
      expect(await tokenVersionOf(harness, victimId)).toBe(victimVersion);
      const signedIn = await passkeySignIn(harness.auth, victimAuthenticator);
      if (signedIn.status !== "authenticated") throw new Error(signedIn.status);
      expect(signedIn.tokens.user.id).toBe(victimId);
    });

    it("WA-6: two users racing to register one credential id: exactly one wins", async () => {
      const harness = makePasskeyAuth({ storage: slowStorage(memoryStorage()) });
      const ids = [await addUser(harness.auth, "racer-a"), await addUser(harness.auth, "racer-b")];
      const credentialId = base64url(randomBytes(32));
      const started = await Promise.all(ids.map((userId) => begin(harness, userId)));
      const results = await tally(
        ids.map((userId, index) => {
          const { ceremonyId, options } = started[index] as (typeof started)[number];
          const response = makeAuthenticator().register(options, { credentialId });
          return finish(harness, userId, ceremonyId, response);
        }),
      );
      expect(results).toEqual(
        new Map<number | "fulfilled", number>([
          ["fulfilled", 1],
          [ErrorCode.Conflict, 1],
        ]),
      );
      expect((await harness.storage.passkeys.findById(credentialId))?.userId).toBeOneOf(ids);
    });
  });

  describe("WA-1: the ceremony", () => {
    it("WA-1: the ceremony is spent even when verification fails", async () => {
      const harness = makePasskeyAuth();
      const userId = await addUser(harness.auth, "spent-on-failure");
      const authenticator = makeAuthenticator();
      const { ceremonyId, options } = await begin(harness, userId);
      const wrong = authenticator.register(options, { origin: "https://evil.example.net" });
      expect(await outcome(finish(harness, userId, ceremonyId, wrong))).toBe(ErrorCode.AuthenticationFailed);
      const right = makeAuthenticator().register(options);
      expect(await outcome(finish(harness, userId, ceremonyId, right))).toBe(ErrorCode.AuthenticationFailed);
      expect(await harness.storage.passkeys.listByUser(userId)).toEqual([]);
    });

    it("WA-1: a malformed response spends the ceremony too", async () => {
      const harness = makePasskeyAuth();
      const userId = await addUser(harness.auth, "spent-on-malformed");
      const { ceremonyId, options } = await begin(harness, userId);
      expect(await outcome(finish(harness, userId, ceremonyId, { nonsense: true }))).toBe(ErrorCode.MalformedParameter);
      expect(await outcome(finish(harness, userId, ceremonyId, makeAuthenticator().register(options)))).toBe(
        ErrorCode.AuthenticationFailed,
      );
    });

    it("WA-1: a replayed response is refused, with the same ceremony or a new one", async () => {
      const harness = makePasskeyAuth();
      const userId = await addUser(harness.auth, "replay");
      const { ceremonyId, options } = await begin(harness, userId);
      const response = makeAuthenticator().register(options);
      await finish(harness, userId, ceremonyId, response);
      expect(await outcome(finish(harness, userId, ceremonyId, response))).toBe(ErrorCode.AuthenticationFailed);
      const fresh = await begin(harness, userId);
      expect(await outcome(finish(harness, userId, fresh.ceremonyId, response))).toBe(ErrorCode.AuthenticationFailed);
      expect(await harness.storage.passkeys.listByUser(userId)).toHaveLength(1);
    });

    it("ST-1: of concurrent finishes of one ceremony exactly one succeeds", async () => {
      const harness = makePasskeyAuth({ storage: slowStorage(memoryStorage()) });
      const userId = await addUser(harness.auth, "concurrent-finish");
      const { ceremonyId, options } = await begin(harness, userId);
      const response = makeAuthenticator().register(options);
      const results = await tally(Array.from({ length: 5 }, () => finish(harness, userId, ceremonyId, response)));
      expect(results).toEqual(
        new Map<number | "fulfilled", number>([
          ["fulfilled", 1],
          [ErrorCode.AuthenticationFailed, 4],
        ]),
      );
    });

    it("WA-1: an expired ceremony is refused", async () => {
      const harness = makePasskeyAuth({}, { ceremonyTtl: "1m" });
      const userId = await addUser(harness.auth, "expired");
      const late = await begin(harness, userId);
      const inTime = await begin(harness, userId);
      const lateResponse = makeAuthenticator().register(late.options);
      const inTimeResponse = makeAuthenticator().register(inTime.options);
      harness.clock.advance(minutes(1) - 1000);
      await finish(harness, userId, inTime.ceremonyId, inTimeResponse);
      harness.clock.advance(1001);
      expect(await outcome(finish(harness, userId, late.ceremonyId, lateResponse))).toBe(ErrorCode.AuthenticationFailed);

      const defaults = makePasskeyAuth();
      const otherId = await addUser(defaults.auth, "expired-default");
      const started = await begin(defaults, otherId);
      defaults.clock.advance(minutes(5) + 1);
      expect(await outcome(finish(defaults, otherId, started.ceremonyId, makeAuthenticator().register(started.options)))).toBe(
        ErrorCode.AuthenticationFailed,
      );
    });

    it("ST-2: a sign-in ceremony id is no registration ceremony, and is not spent by trying", async () => {
      const harness = makePasskeyAuth();
      const userId = await addUser(harness.auth, "kinds");
      const authenticator = makeAuthenticator();
      await register(harness, userId, authenticator);
      const login = await webauthnBegin(harness.auth, { username: "kinds" });
      const { options } = await begin(harness, userId);
      const response = makeAuthenticator().register(options);
      expect(await outcome(finish(harness, userId, login.ceremonyId, response))).toBe(ErrorCode.AuthenticationFailed);
      const result = await webauthnFinish(harness.auth, {
        ceremonyId: login.ceremonyId,
        response: authenticator.authenticate(login.options),
      });
      expect(result.status).toBe("authenticated");
    });

    it("WA-6: user B cannot finish user A's ceremony, and the ceremony is then spent", async () => {
      const harness = makePasskeyAuth();
      const aliceId = await addUser(harness.auth, "alice");
      const bobId = await addUser(harness.auth, "bob");
      const { ceremonyId, options } = await begin(harness, aliceId);
      const bobVersion = await tokenVersionOf(harness, bobId);
      const response = makeAuthenticator().register(options);
      expect(await outcome(finish(harness, bobId, ceremonyId, response))).toBe(ErrorCode.AuthenticationFailed);
      expect(await harness.storage.passkeys.findById(response.id)).toBeNull();
      expect(await tokenVersionOf(harness, bobId)).toBe(bobVersion);
      expect(await outcome(finish(harness, aliceId, ceremonyId, response))).toBe(ErrorCode.AuthenticationFailed);
      expect(await harness.storage.passkeys.listByUser(aliceId)).toEqual([]);
    });

    it("WA-6: a user disabled between begin and finish gets 40101", async () => {
      const harness = makePasskeyAuth();
      const userId = await addUser(harness.auth, "disabled-midway");
      const { ceremonyId, options } = await begin(harness, userId);
      await setUserDisabled(harness.auth, { userId, disabled: true });
      expect(await outcome(finish(harness, userId, ceremonyId, makeAuthenticator().register(options)))).toBe(
        ErrorCode.InvalidToken,
      );
      expect(await harness.storage.passkeys.listByUser(userId)).toEqual([]);
    });

    it("WA-1: a missing ceremony id is 40002", async () => {
      const harness = makePasskeyAuth();
      const userId = await addUser(harness.auth, "no-ceremony");
      const { options } = await begin(harness, userId);
      const response = makeAuthenticator().register(options);
      for (const ceremonyId of [undefined, "", 42, null]) {
        expect(await outcome(finish(harness, userId, ceremonyId as unknown as string, response))).toBe(
          ErrorCode.MalformedParameter,
        );
      }
      expect(await outcome(finish(harness, userId, "no-such-ceremony", response))).toBe(ErrorCode.AuthenticationFailed);
    });
  });

  describe("WA-2 and WA-3: the response is checked", () => {
    /** Begins for a fresh user and finishes with a response made with `overrides`; returns the outcome and what was stored. */
    async function attempt(harness: Harness, username: string, overrides: RegistrationOverrides) {
      const userId = await addUser(harness.auth, username);
      const version = await tokenVersionOf(harness, userId);
      const { ceremonyId, options } = await begin(harness, userId);
      const result = await outcome(finish(harness, userId, ceremonyId, makeAuthenticator().register(options, overrides)));
      expect(await harness.storage.passkeys.listByUser(userId)).toEqual(result === "fulfilled" ? [expect.anything()] : []);
      if (result !== "fulfilled") expect(await tokenVersionOf(harness, userId)).toBe(version);
      return result;
    }

    it("WA-2: a wrong origin is refused, even a sibling of the configured one", async () => {
      const harness = makePasskeyAuth();
      expect(await attempt(harness, "origin-1", { origin: "https://evil.example.net" })).toBe(40100);
      expect(await attempt(harness, "origin-2", { origin: "https://example.com" })).toBe(40100);
      expect(await attempt(harness, "origin-3", { origin: "http://app.example.com" })).toBe(40100);
      expect(await attempt(harness, "origin-4", { origin: "https://app.example.com:8443" })).toBe(40100);
      expect(await attempt(harness, "origin-ok", {})).toBe("fulfilled");
    });

    it("WA-2: a wrong rpId hash is refused", async () => {
      const harness = makePasskeyAuth();
      expect(await attempt(harness, "rp-1", { rpId: "evil.com" })).toBe(40100);
      expect(await attempt(harness, "rp-2", { rpId: "app.example.com" })).toBe(40100);
    });

    it("WA-2: a wrong challenge is refused, even the challenge of another live ceremony of the same user", async () => {
      const harness = makePasskeyAuth();
      expect(await attempt(harness, "challenge-1", { challenge: base64url(randomBytes(32)) })).toBe(40100);
      const userId = await addUser(harness.auth, "challenge-2");
      const first = await begin(harness, userId);
      const second = await begin(harness, userId);
      const swapped = makeAuthenticator().register(first.options, { challenge: second.options.challenge });
      expect(await outcome(finish(harness, userId, first.ceremonyId, swapped))).toBe(40100);
      await finish(harness, userId, second.ceremonyId, makeAuthenticator().register(second.options));
    });

    it("WA-2: a wrong clientData type is refused", async () => {
      const harness = makePasskeyAuth();
      expect(await attempt(harness, "type-1", { type: "webauthn.get" })).toBe(40100);
      expect(await attempt(harness, "type-2", { type: "payment.get" })).toBe(40100);
    });

    it("WA-3: user presence is required", async () => {
      const harness = makePasskeyAuth();
      expect(await attempt(harness, "up", { flags: { up: false } })).toBe(40100);
    });

    it("WA-3: user verification is required by default; with userVerification preferred a touch is enough", async () => {
      const strict = makePasskeyAuth();
      expect(await attempt(strict, "uv-required", { flags: { uv: false } })).toBe(40100);
      const lenient = makePasskeyAuth({}, { userVerification: "preferred" });
      expect(await attempt(lenient, "uv-preferred", { flags: { uv: false } })).toBe("fulfilled");
      expect(await attempt(lenient, "uv-preferred-no-up", { flags: { uv: false, up: false } })).toBe(40100);
    });

    it("WA-3: BE=0 with BS=1 is refused", async () => {
      const harness = makePasskeyAuth();
      expect(await attempt(harness, "backup-flags", { flags: { be: false, bs: true } })).toBe(40100);
    });

    it("WA-2: a packed self-attestation signed by another key is refused", async () => {
      const harness = makePasskeyAuth({ throttle: generousThrottle });
      const userId = await addUser(harness.auth, "bad-attestation");
      for (const algorithm of ["ES256", "EdDSA"] as const) {
        const authenticator = makeAuthenticator({ algorithm });
        const first = await begin(harness, userId);
        const other = authenticator.register(first.options, { attestation: "packed" });
        await finish(harness, userId, first.ceremonyId, other);
        const { ceremonyId, options } = await begin(harness, userId);
        const forged = authenticator.register(options, {
          attestation: "packed",
          signWith: other.id,
          ignoreExcludeCredentials: true,
        });
        expect(await outcome(finish(harness, userId, ceremonyId, forged))).toBe(40100);
        expect(await harness.storage.passkeys.findById(forged.id)).toBeNull();
      }
    });

    it("WA-2: the credential id in the authenticator data must be the response's id", async () => {
      const harness = makePasskeyAuth();
      const userId = await addUser(harness.auth, "id-mismatch");
      const { ceremonyId, options } = await begin(harness, userId);
      const response = makeAuthenticator().register(options);
      const otherId = base64url(randomBytes(32));
      const result = await outcome(finish(harness, userId, ceremonyId, { ...response, id: otherId, rawId: otherId }));
      expect(result).toBe(40100);
      expect(await harness.storage.passkeys.listByUser(userId)).toEqual([]);
    });

    it("WA-2: a credential id of 1023 bytes (the WebAuthn maximum) registers; one of 1025 bytes is malformed", async () => {
      const harness = makePasskeyAuth();
      const userId = await addUser(harness.auth, "long-ids");
      const longest = await begin(harness, userId);
      const credentialId = base64url(randomBytes(1023));
      const passkey = await finish(
        harness,
        userId,
        longest.ceremonyId,
        makeAuthenticator().register(longest.options, { credentialId }),
      );
      expect(passkey.id).toBe(credentialId);
      const tooLong = await begin(harness, userId);
      const response = makeAuthenticator().register(tooLong.options, { credentialId: base64url(randomBytes(1025)) });
      expect(await outcome(finish(harness, userId, tooLong.ceremonyId, response))).toBe(ErrorCode.MalformedParameter);
    });

    it("WA-2: a credential id of 1024 bytes, one more than WebAuthn allows, is malformed", async () => {
      const harness = makePasskeyAuth();
      const userId = await addUser(harness.auth, "long-id");
      const { ceremonyId, options } = await begin(harness, userId);
      const response = makeAuthenticator().register(options, { credentialId: base64url(randomBytes(1024)) });
      expect(await outcome(finish(harness, userId, ceremonyId, response))).toBe(ErrorCode.MalformedParameter);
      expect(await harness.storage.passkeys.listByUser(userId)).toEqual([]);
    });

    it("WA-2: a key algorithm that was not offered (ES384) is refused; an offered one built the same way passes", async () => {
      const harness = makePasskeyAuth();
      const userId = await addUser(harness.auth, "algorithms");
      const refused = await begin(harness, userId);
      expect(await outcome(finish(harness, userId, refused.ceremonyId, handMadeRegistration(refused.options, "ES384")))).toBe(
        40100,
      );
      expect(await harness.storage.passkeys.listByUser(userId)).toEqual([]);
      const control = await begin(harness, userId);
      await finish(harness, userId, control.ceremonyId, handMadeRegistration(control.options, "ES256"));
      expect(await harness.storage.passkeys.listByUser(userId)).toHaveLength(1);
    });

    it("WA-2: a malformed response is 40002", async () => {
      const harness = makePasskeyAuth({ throttle: generousThrottle }, { registrationCeremonyLimit: 100 });
      const userId = await addUser(harness.auth, "malformed");
      const { options } = await begin(harness, userId);
      const good = makeAuthenticator().register(options);
      const malformed: unknown[] = [
        null,
        "a string",
        [],
        {},
        { ...good, type: "private-key" },
        { ...good, rawId: base64url(randomBytes(32)) },
        { ...good, id: "not base64url!", rawId: "not base64url!" },
        { ...good, response: null },
        { ...good, response: { ...good.response, attestationObject: 5 } },
        { ...good, response: { ...good.response, clientDataJSON: "not/base64url+" } },
        { ...good, response: { clientDataJSON: good.response.clientDataJSON } },
      ];
      for (const response of malformed) {
        const { ceremonyId } = await begin(harness, userId);
        expect(await outcome(finish(harness, userId, ceremonyId, response))).toBe(ErrorCode.MalformedParameter);
      }
    });

    it("WA-2: garbage inside well-formed fields is an AuthError 40100, never a raw error", async () => {
      const harness = makePasskeyAuth({ throttle: generousThrottle }, { registrationCeremonyLimit: 100 });
      const userId = await addUser(harness.auth, "garbage");
      const { options } = await begin(harness, userId);
      const good = makeAuthenticator().register(options);
      const authData = Buffer.from(good.response.authenticatorData as string, "base64url");
      const cbor = (entries: [string, CborValue][]) => base64url(encodeCbor(new Map(entries)));
      const garbage = [
        { attestationObject: "AAAA" },
        { attestationObject: base64url(randomBytes(64)) },
        { attestationObject: cbor([["fmt", "none"]]) },
        {
          attestationObject: cbor([
            ["fmt", "none"],
            ["attStmt", new Map()],
            ["authData", new Uint8Array(authData.subarray(0, 40))],
          ]),
        },
        {
          attestationObject: cbor([
            ["fmt", "none"],
            ["attStmt", new Map()],
            ["authData", new Uint8Array(authData.subarray(0, 37))],
          ]),
        },
        {
          attestationObject: cbor([
            ["fmt", "unheard-of"],
            ["attStmt", new Map()],
            ["authData", new Uint8Array(authData)],
          ]),
        },
        {
          attestationObject: cbor([
            ["fmt", "none"],
            ["attStmt", new Map([["x", 1]])],
            ["authData", new Uint8Array(authData)],
          ]),
        },
        { clientDataJSON: base64url(Buffer.from("not json")) },
        { clientDataJSON: base64url(Buffer.from("null")) },
        { clientDataJSON: base64url(Buffer.from('{"type":"webauthn.create"}')) },
      ];
      for (const change of garbage) {
        const { ceremonyId } = await begin(harness, userId);
        const response = { ...good, response: { ...good.response, ...change } };
        const error = await finish(harness, userId, ceremonyId, response).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(AuthError);
        expect((error as AuthError).code).toBe(ErrorCode.AuthenticationFailed);
      }
      expect(await harness.storage.passkeys.listByUser(userId)).toEqual([]);
    });
  });

  describe("WA-2 and WA-5: the public key and the counter must be usable", () => {
    const hostile: [string, CoseKeyParts, string][] = [
      [
        "an RSA key with a 1-byte modulus",
        { kty: "RSA", n: Uint8Array.of(0xc5), e: Uint8Array.of(1, 0, 1) },
        "an RSA modulus of 8 bits, outside 2048 to 8192",
      ],
      [
        "the EC2 point (0, 0)",
        { kty: "EC2", x: new Uint8Array(32), y: new Uint8Array(32) },
        "node:crypto cannot import the EC key (for EC2, a point off the curve)",
      ],
      [
        "an Ed25519 key of 5 bytes",
        { kty: "OKP", x: Uint8Array.of(1, 2, 3, 4, 5) },
        "EdDSA needs an OKP key on Ed25519 with x of 32 bytes",
      ],
    ];
    for (const [name, publicKey, reason] of hostile) {
      it(`WA-2: a public key that can never verify, ${name}, is 40100 and nothing is stored`, async () => {
        const harness = makePasskeyAuth();
        const userId = await addUser(harness.auth, "hostile-key");
        const version = await tokenVersionOf(harness, userId);
        harness.events.length = 0;
        const { ceremonyId, options } = await begin(harness, userId);
        const refused = await authError(
          finish(harness, userId, ceremonyId, makeAuthenticator().register(options, { publicKey })),
        );
        expect(refused).toMatchObject({ code: ErrorCode.AuthenticationFailed, message: "The passkey could not be registered" });
        expect(refused.cause).toEqual(new Error(`Unusable public key: ${reason}`));
        expect(await harness.storage.passkeys.listByUser(userId)).toEqual([]);
        expect(await tokenVersionOf(harness, userId)).toBe(version);
        expect(harness.events).toEqual([]);
      });
    }

    it("WA-2: an RSA key of 2048 bits, a P-256 point and a 32-byte Ed25519 key written the same way register", async () => {
      const harness = makePasskeyAuth();
      const userId = await addUser(harness.auth, "usable-keys");
      const part = (value: string | undefined) => new Uint8Array(Buffer.from(value as string, "base64url"));
      const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey.export({ format: "jwk" });
      const ec = generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey.export({ format: "jwk" });
      const ed = generateKeyPairSync("ed25519").publicKey.export({ format: "jwk" });
      const usable: CoseKeyParts[] = [
        { kty: "RSA", n: part(rsa.n), e: part(rsa.e) },
        { kty: "EC2", x: part(ec.x), y: part(ec.y) },
        { kty: "OKP", x: part(ed.x) },
      ];
      for (const publicKey of usable) {
        const { ceremonyId, options } = await begin(harness, userId);
        await finish(harness, userId, ceremonyId, makeAuthenticator().register(options, { publicKey }));
      }
      expect(await harness.storage.passkeys.listByUser(userId)).toHaveLength(3);
    });

    it("WA-5: a registration counter of 2^32 - 1, which could never grow, is 40100 and nothing is stored", async () => {
      const harness = makePasskeyAuth();
      const userId = await addUser(harness.auth, "stuck-counter");
      const { ceremonyId, options } = await begin(harness, userId);
      const response = makeAuthenticator().register(options, { counter: 0xffff_ffff });
      const refused = await authError(finish(harness, userId, ceremonyId, response));
      expect(refused).toMatchObject({ code: ErrorCode.AuthenticationFailed, message: "The passkey could not be registered" });
      expect(refused.cause).toEqual(new Error("A signature counter of 4294967295 could grow fewer than 2^16 times"));
      expect(await harness.storage.passkeys.listByUser(userId)).toEqual([]);
    });

    it("WA-5: a counter must leave room for 2^16 sign-ins: 2^32 - 2^16 is refused, one less registers", async () => {
      const harness = makePasskeyAuth();
      const userId = await addUser(harness.auth, "counter-bound");
      const refused = await begin(harness, userId);
      const high = makeAuthenticator().register(refused.options, { counter: 0xffff_0000 });
      expect(await outcome(finish(harness, userId, refused.ceremonyId, high))).toBe(ErrorCode.AuthenticationFailed);
      const accepted = await begin(harness, userId);
      const authenticator = makeAuthenticator();
      await finish(harness, userId, accepted.ceremonyId, authenticator.register(accepted.options, { counter: 0xfffe_ffff }));
      expect((await harness.storage.passkeys.listByUser(userId))[0]?.counter).toBe(0xfffe_ffff);
      expect((await passkeySignIn(harness.auth, authenticator)).status).toBe("authenticated");
    });
  });

  it("SE-2: registering from a session ends the user's other sessions; this one's access and refresh tokens go on working", async () => {
    const harness = makePasskeyAuth();
    const userId = await addUser(harness.auth, "se2-register");
    const before = await twoSessions(harness, userId, "se2-register");
    const sessionId = before.current.sessionId;
    const { ceremonyId, options } = await begin(harness, userId, { password: undefined, sessionId });
    const authenticator = makeAuthenticator();
    await webauthnRegisterFinish(harness.auth, { userId, sessionId, ceremonyId, response: authenticator.register(options) });
    await expectOnlyCurrentSessionLives(harness, before, "passkey_registered");
    expect((await passkeySignIn(harness.auth, authenticator)).status).toBe("authenticated");
  });

  describe("SE-2: registering ends the user's other sessions, not through the token version", () => {
    it("SE-2: with no session given, the access and refresh tokens from before are refused; the events name the credential, never the key", async () => {
      const harness = makePasskeyAuth();
      const { userId, tokens } = await signedIn(harness, "version");
      const version = await tokenVersionOf(harness, userId);
      harness.events.length = 0;
      const { ceremonyId, options } = await begin(harness, userId);
      const response = makeAuthenticator().register(options);
      const passkey = await finish(harness, userId, ceremonyId, response);
      expect(await tokenVersionOf(harness, userId)).toBe(version);
      expect(await outcome(verifyAccessToken(harness.auth, { token: tokens.accessToken }))).toBe(ErrorCode.InvalidToken);
      expect(await outcome(refresh(harness.auth, { refreshToken: tokens.refreshToken }))).toBe(ErrorCode.InvalidToken);
      const [ended, registered] = harness.events.filter(
        (event) => event.type === "sessions.ended" || event.type === "passkey.registered",
      );
      expect(ended).toEqual({
        type: "sessions.ended",
        userId,
        keptSessionId: null,
        count: 1,
        reason: "passkey_registered",
        at: harness.clock.now,
      });
      expect(registered).toEqual({ type: "passkey.registered", userId, credentialId: passkey.id, at: harness.clock.now });
      expect(JSON.stringify(harness.events)).not.toContain(coseKeyOf(response));
      expect(JSON.stringify(harness.events)).not.toContain(goodPassword);
    });

    it("SE-2: a refused registration ends nothing and emits no passkey event", async () => {
      const harness = makePasskeyAuth();
      const { userId, tokens } = await signedIn(harness, "no-version");
      const version = await tokenVersionOf(harness, userId);
      harness.events.length = 0;
      const { ceremonyId, options } = await begin(harness, userId);
      const response = makeAuthenticator().register(options, { flags: { uv: false } });
      expect(await outcome(finish(harness, userId, ceremonyId, response))).toBe(40100);
      expect(await tokenVersionOf(harness, userId)).toBe(version);
      expect(harness.events).toEqual([]);
      await verifyAccessToken(harness.auth, { token: tokens.accessToken });
    });
  });

  it("passkeys not configured: begin and finish are 40400", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "unconfigured");
    expect(await outcome(begin(harness, userId))).toBe(ErrorCode.NotFound);
    expect(await outcome(finish(harness, userId, "some-ceremony", {}))).toBe(ErrorCode.NotFound);
  });
});

describe("registration answers, word for word", () => {
  it("WA-6: a refusal says the passkey could not be registered and keeps the verifier's error as its cause; a taken id says so", async () => {
    const harness = makePasskeyAuth();
    const userId = await addUser(harness.auth, "words");
    const authenticator = makeAuthenticator();
    const { ceremonyId, options } = await begin(harness, userId);
    const refused = await authError(
      finish(harness, userId, ceremonyId, authenticator.register(options, { origin: "https://evil.example" })),
    );
    expect(refused).toMatchObject({ code: 40100, message: "The passkey could not be registered" });
    expect(refused.cause).toBeInstanceOf(Error);
    const passkey = await register(harness, userId, authenticator);
    const again = await authError(
      register(harness, userId, makeAuthenticator(), { ignoreExcludeCredentials: true, credentialId: passkey.id }),
    );
    expect(again).toMatchObject({ code: 40900, message: "This passkey is already registered" });
  });
});
