import type { PublicKeyCredentialCreationOptionsJSON } from "@simplewebauthn/server";
import type { Auth } from "../auth.js";
import { base64url } from "../crypto/random.js";
import { simpleWebAuthn } from "../dependencies.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { ChallengeRecord, PasskeyRecord, UserRecord } from "../storage/types.js";
import { endOtherSessions } from "../users/sessions.js";
import { signedInUser } from "../users/signed-in-user.js";
import {
  type CeremonyStart,
  countRegistrationCeremony,
  newChallenge,
  passkeyConfig,
  spendCeremony,
  storeCeremony,
} from "../webauthn/ceremony.js";
import { readRegistrationResponse } from "../webauthn/credential-json.js";
import { type PasskeyInfo, readLabel, toPasskeyInfo } from "../webauthn/passkey-info.js";
import { explainPasskeyRefusal } from "../webauthn/passkey-refusal.js";
import { publicKeyProblem } from "../webauthn/public-key.js";
import { type ReauthenticationProof, requireRecentAuthentication } from "./reauthenticate.js";

/** COSE algorithms offered for new passkeys, in order of preference: ES256, EdDSA, RS256. */
export const passkeyAlgorithms = [-7, -8, -257];

/**
 * The highest signature counter a new passkey may start at, 2^32 - 2^16 - 1: one that could grow
 * fewer than 2^16 times before it stops at 2^32 - 1 would soon make every sign-in look cloned
 * (WA-5). Authenticators start at 0, or at the few thousand of a security key's global counter.
 */
export const maxRegistrationCounter = 0xffff_ffff - 0x1_0000;

/** The input of {@link webauthnRegisterBegin}: the user, the new passkey's label, and the proof of a recent sign-in. */
export interface WebauthnRegisterBeginInput extends ReauthenticationProof {
  userId: string;
  /** What the user calls this passkey ("Laptop", "YubiKey"); 1 to 64 characters. */
  label: string;
}

/** The input of {@link webauthnRegisterFinish}. */
export interface WebauthnRegisterFinishInput {
  /** The signed-in user; must be the one who began the ceremony. */
  userId: string;
  /** The id {@link webauthnRegisterBegin} returned (the `X-WebAuthn-Ceremony` header over HTTP). */
  ceremonyId: string;
  /** The browser's `RegistrationResponseJSON`, as `startRegistration` returns it. */
  response: unknown;
  /** The session of the request: it goes on, the user's others end (SE-2). */
  sessionId?: string;
}

/**
 * Begins registering a passkey for a signed-in user (`POST /auth/public-key/register/begin`)
 * who has just proven it is them (WA-6): the current password, a TOTP code when TOTP is on, or
 * a sign-in younger than `passkeys.reauthenticationWindow`, as for TOTP enrolment. The creation
 * options ask for a discoverable credential (resident key preferred), user verification as
 * configured, ES256, EdDSA or RS256, no attestation, and exclude the user's passkeys. A user
 * who has proven it is them begins at most `passkeys.registrationCeremonyLimit` registrations per
 * `ceremonyTtl`, so its open ceremonies stay bounded in storage (RL-7).
 *
 * @throws {AuthError} 40001 no proof, 40100 wrong password, 40103 wrong code, 40101 user gone or disabled, 40400 not configured, 42200 bad label, 42900 throttled or too many registrations begun.
 * @example
 * ```ts
 * const { ceremonyId, options } = await webauthnRegisterBegin(auth, { userId, sessionId, label: "Laptop" });
 * // the browser: startRegistration({ optionsJSON: options }), sent back with ceremonyId
 * ```
 */
export async function webauthnRegisterBegin(
  auth: Auth,
  input: WebauthnRegisterBeginInput,
): Promise<CeremonyStart<PublicKeyCredentialCreationOptionsJSON>> {
  const config = passkeyConfig(auth);
  const user = await signedInUser(auth, input.userId);
  const label = readLabel(input.label);
  await requireRecentAuthentication(
    auth,
    user,
    { sessionId: input.sessionId, password: input.password, totpCode: input.totpCode },
    config.reauthenticationWindowSeconds,
  );
  return beginRegistration(auth, user, label);
}

/**
 * The registration half of {@link webauthnRegisterBegin} for a user who has already proven it is
 * them, by re-authentication or, for a sign-in that must enrol a second factor, its enrolment
 * token: counts the ceremony (RL-7), stores it with its challenge and label, and answers the
 * creation options.
 *
 * @throws {AuthError} 40400 passkeys not configured, 42900 too many registrations begun.
 */
export async function beginRegistration(
  auth: Auth,
  user: UserRecord,
  label: string,
): Promise<CeremonyStart<PublicKeyCredentialCreationOptionsJSON>> {
  await countRegistrationCeremony(auth, user.id);
  const passkeys = await auth.storage.passkeys.listByUser(user.id);
  const options = await creationOptions(auth, {
    userHandle: new Uint8Array(Buffer.from(user.id)),
    username: user.username,
    exclude: passkeys,
    residentKey: "preferred",
  });
  const ceremonyId = await storeCeremony(auth, "webauthn_register", user.id, { challenge: options.challenge, label });
  return { ceremonyId, options };
}

/** Who a new passkey is for, as {@link creationOptions} tells the authenticator. */
export interface CreationSubject {
  /** The WebAuthn user handle (`user.id`), at most 64 bytes. */
  userHandle: Uint8Array<ArrayBuffer>;
  /** The account's username: the name and display name the browser shows. */
  username: string;
  /** Passkeys the authenticator must not hold already. */
  exclude: readonly Pick<PasskeyRecord, "id" | "transports">[];
  /** `"required"` when the passkey must be discoverable (the account's only way in), else `"preferred"`. */
  residentKey: "required" | "preferred";
}

/**
 * The creation options of a registration: a fresh challenge (WA-1), user verification as
 * configured, ES256, EdDSA or RS256, no attestation, `ceremonyTtl` as the timeout.
 */
export async function creationOptions(auth: Auth, subject: CreationSubject): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const config = passkeyConfig(auth);
  const { generateRegistrationOptions } = await simpleWebAuthn();
  return generateRegistrationOptions({
    rpName: config.rpName,
    rpID: config.rpId,
    userName: subject.username,
    userDisplayName: subject.username,
    userID: subject.userHandle,
    challenge: newChallenge(auth),
    timeout: config.ceremonyTtlSeconds * 1000,
    attestationType: "none",
    excludeCredentials: subject.exclude.map((passkey) => ({ id: passkey.id, transports: passkey.transports })),
    authenticatorSelection: { residentKey: subject.residentKey, userVerification: config.userVerification },
    supportedAlgorithmIDs: passkeyAlgorithms,
  });
}

const registrationRefused = (cause?: unknown) =>
  new AuthError(ErrorCode.AuthenticationFailed, "The passkey could not be registered", { cause });

/**
 * Finishes registering a passkey (`POST /auth/public-key/register/finish`). The ceremony is
 * spent first (WA-1) and must be this user's. The type, challenge, origin, rpId hash, user
 * presence, user verification as configured, backup flags and algorithm are checked (WA-2,
 * WA-3); attestation statements are checked when present, but any authenticator is accepted.
 * The public key must be one that can verify (its curve, length and exponent are checked; WA-2)
 * and the signature counter at most 2^32 - 1 - 2^16, so it can still grow 2^16 times (WA-5). A
 * credential id registered to anyone is refused (WA-6). Every other session of the user ends,
 * `sessionId` going on (SE-2; every session when none is given); the next sign-in may use the new
 * passkey.
 *
 * @throws {AuthError} 40002 malformed response or no ceremony id, 40100 refused, 40101 user gone or disabled, 40400 not configured, 40900 already registered.
 */
export async function webauthnRegisterFinish(auth: Auth, input: WebauthnRegisterFinishInput): Promise<PasskeyInfo> {
  passkeyConfig(auth);
  const ceremony = await spendCeremony(auth, input.ceremonyId, "webauthn_register");
  const user = await signedInUser(auth, input.userId);
  const passkey = await storePasskey(auth, await verifiedPasskey(auth, user, ceremony, input.response));
  await endOtherSessions(auth, { userId: user.id, keepSessionId: input.sessionId, reason: "passkey_registered" });
  auth.emit({ type: "passkey.registered", userId: user.id, credentialId: passkey.id, at: auth.now() });
  return toPasskeyInfo(passkey);
}

/**
 * The verification half of {@link webauthnRegisterFinish}, once the ceremony is spent: the
 * ceremony must be `user`'s, and the response is verified as that function says (WA-2, WA-3,
 * WA-5); answers the passkey to store with {@link storePasskey}.
 *
 * @throws {AuthError} 40002 malformed response, 40100 refused, 40400 not configured.
 */
export async function verifiedPasskey(
  auth: Auth,
  user: UserRecord,
  ceremony: ChallengeRecord,
  rawResponse: unknown,
): Promise<PasskeyRecord> {
  passkeyConfig(auth);
  if (ceremony.userId !== user.id) throw registrationRefused();
  const { passkey } = await verifiedRegistration(auth, ceremony, rawResponse);
  return { ...passkey, userId: user.id };
}

/** A registration {@link verifiedRegistration} accepted. */
export interface VerifiedRegistration {
  /** The passkey to store, its label the ceremony's; its owner's id is the caller's to add. */
  passkey: Omit<PasskeyRecord, "userId">;
  /** Whether the authenticator verified the user (a PIN, a biometric). */
  userVerified: boolean;
}

/**
 * Verifies a registration response against a spent ceremony, whoever it is for (a signed-in
 * user's, or a sign-up's): the type, challenge, origin, rpId hash, user presence, user
 * verification as configured, backup flags and algorithm (WA-2, WA-3), the public key and the
 * signature counter (WA-2, WA-5). `userHandle`, when given, is kept with the passkey: the handle
 * the ceremony created it with, when it is not the account's own (a sign-up's).
 *
 * @throws {AuthError} 40002 malformed response, 40100 refused, 40400 not configured.
 */
export async function verifiedRegistration(
  auth: Auth,
  ceremony: ChallengeRecord,
  rawResponse: unknown,
  userHandle?: string,
): Promise<VerifiedRegistration> {
  const config = passkeyConfig(auth);
  const response = readRegistrationResponse(rawResponse);
  const { verifyRegistrationResponse } = await simpleWebAuthn();
  let verification: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verification = await verifyRegistrationResponse({
      response,
      expectedChallenge: ceremony.data.challenge as string,
      expectedOrigin: config.origins,
      expectedRPID: config.rpId,
      requireUserPresence: true,
      requireUserVerification: config.userVerification === "required",
      supportedAlgorithmIDs: passkeyAlgorithms,
    });
  } catch (error) {
    await explainPasskeyRefusal(auth, config, response, undefined);
    throw registrationRefused(error);
  }
  if (!verification.verified || verification.registrationInfo.credential.id !== response.id) throw registrationRefused();
  const { credential, credentialDeviceType, credentialBackedUp, userVerified } = verification.registrationInfo;
  const keyProblem = await publicKeyProblem(credential.publicKey, passkeyAlgorithms);
  if (keyProblem !== null) throw registrationRefused(new Error(`Unusable public key: ${keyProblem}`));
  if (credential.counter > maxRegistrationCounter) {
    throw registrationRefused(new Error(`A signature counter of ${credential.counter} could grow fewer than 2^16 times`));
  }
  const passkey = {
    id: credential.id,
    publicKey: base64url(credential.publicKey),
    counter: credential.counter,
    transports: response.response.transports ?? [],
    label: ceremony.data.label as string,
    backupEligible: credentialDeviceType === "multiDevice",
    backupState: credentialBackedUp,
    createdAt: auth.now(),
    lastUsedAt: null,
  };
  return { passkey: userHandle === undefined ? passkey : { ...passkey, userHandle }, userVerified };
}

/**
 * Stores a passkey {@link verifiedPasskey} answered; a credential id registered to anyone is
 * refused (WA-6).
 *
 * @throws {AuthError} 40900 already registered.
 */
export async function storePasskey(auth: Auth, passkey: PasskeyRecord): Promise<PasskeyRecord> {
  if (!(await auth.storage.passkeys.create(passkey))) {
    throw new AuthError(ErrorCode.Conflict, "This passkey is already registered");
  }
  return passkey;
}
