import type { PublicKeyCredentialCreationOptionsJSON } from "@simplewebauthn/server";
import type { Auth } from "../auth.js";
import { base64url } from "../crypto/random.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { sendVerificationLink } from "../flows/change-email.js";
import { newUserRecord, storedUser } from "../flows/create-user.js";
import { optionalString, requiredString } from "../flows/input.js";
import { completeFirstFactor } from "../flows/pending-login.js";
import type { RegisterResult } from "../flows/register.js";
import { passkeyMethods } from "../flows/webauthn-login.js";
import { creationOptions, verifiedRegistration } from "../flows/webauthn-register.js";
import type { PasskeyRecord, UserRecord } from "../storage/types.js";
import { passkeyBudget } from "../throttle/failure-budget.js";
import { takeAttempt } from "../throttle/throttle.js";
import type { FieldValue } from "../user-fields/field.js";
import { newUserFields, readFieldInput } from "../user-fields/values.js";
import { normalizeEmail } from "../users/email.js";
import { normalizeUsername } from "../users/username.js";
import { type CeremonyStart, passkeyConfig, spendCeremony, storeCeremony } from "../webauthn/ceremony.js";
import { readLabel } from "../webauthn/passkey-info.js";

/** The label of a sign-up's passkey when the input names none. */
export const defaultSignUpLabel = "Passkey";

const signUpKind = "webauthn_sign_up";

/** The input of {@link beginPasskeySignUp}. Nothing else is read: roles, ids and states come from the configuration (SU-1). */
export interface BeginPasskeySignUpInput {
  /** The new account's username, under the username rule. */
  username: string;
  /** The account's email address (`normalizeEmail`), stored unverified: only its own token proves it (EV-1). */
  email?: string;
  /** What the person calls the passkey; 1 to 64 characters that show. Default `"Passkey"`. */
  label?: string;
  /** Additional fields declared `signUp: true` (any other is 42200, naming it); those left out get their defaults. */
  fields?: Record<string, FieldValue>;
  /** The client address: each may sign up `throttle.unauthenticatedWrites` times (RL-7, SU-1). */
  ip?: string;
}

/** The input of {@link finishPasskeySignUp}. */
export interface FinishPasskeySignUpInput {
  /** The id {@link beginPasskeySignUp} returned (the `X-WebAuthn-Ceremony` header over HTTP). */
  ceremonyId: string;
  /** The browser's `RegistrationResponseJSON`, as `startRegistration` returns it. */
  response: unknown;
  /** The client address, kept with the new session. */
  ip?: string;
  /** The request's `User-Agent`, kept with the new session. */
  userAgent?: string;
  /** The request's `Accept-Language`: the language of the verification link's message. */
  acceptLanguage?: string | undefined;
}

/** What a passkey sign-up's ceremony keeps until its finish: the checked input, and the user handle the passkey is made for. */
interface SignUpCeremonyData {
  challenge: string;
  username: string;
  email: string | null;
  label: string;
  fields: Record<string, FieldValue>;
  /** 32 random bytes, base64url: the passkey's user handle, never the account's id (which the store may choose). */
  userHandle: string;
}

/** Passkey sign-up's switch: sign-up on and passkeys configured, else 40400. */
function requirePasskeySignUp(auth: Auth): void {
  if (!auth.config.signUp.enabled) throw new AuthError(ErrorCode.NotFound, "Sign-up is not enabled");
  passkeyConfig(auth);
}

/**
 * Begins a sign-up whose account's only way in is a passkey (`POST /auth/register/public-key/begin`;
 * PL-15 … PL-17): only when `signUp.enabled` and passkeys are configured. The input is checked as
 * `register` checks it (the username rule, the address normalised, only fields declared `signUp`);
 * then one attempt is taken from the client address's `throttle.unauthenticatedWrites` before
 * anything is looked up (RL-7, SU-1); a taken username is 40900 already here, as `register` tells
 * it, so that nobody makes a passkey for nothing. The ceremony stored (WA-1) keeps the checked
 * input and a fresh user handle of 32 random bytes: the account's id is not known before it is
 * stored. The creation options ask for a discoverable credential (resident key required: the
 * passkey is the only way in, and is found without a username), user verification as configured,
 * no attestation, ES256, EdDSA or RS256. Nothing but the ceremony is stored.
 *
 * @throws {AuthError} 40001/40002 a missing or malformed field, 40400 sign-up or passkeys off,
 *   40900 the username is taken, 42200 the username, label or a field is refused, 42900 too many from `ip`.
 * @example
 * ```ts
 * const { ceremonyId, options } = await beginPasskeySignUp(auth, { username: "newcomer", ip });
 * // the browser: startRegistration({ optionsJSON: options }), sent back with ceremonyId
 * ```
 */
export async function beginPasskeySignUp(
  auth: Auth,
  input: BeginPasskeySignUpInput,
): Promise<CeremonyStart<PublicKeyCredentialCreationOptionsJSON>> {
  requirePasskeySignUp(auth);
  const { username, usernameKey } = normalizeUsername(requiredString(input.username, "username"));
  const rawEmail = optionalString(input.email, "email");
  const email = rawEmail === undefined ? null : normalizeEmail(rawEmail, "email");
  const label = input.label === undefined ? defaultSignUpLabel : readLabel(input.label);
  const fields = readFieldInput(auth.userFields, input.fields, "signUp");
  newUserFields(auth.userFields, fields);
  if (input.ip !== undefined) await takeAttempt(auth, "unauthenticatedWrites", input.ip, input.ip);
  if (await auth.storage.users.findByUsernameKey(usernameKey)) throw usernameTaken();
  const userHandle = base64url(auth.randomBytes(32));
  const options = await creationOptions(auth, {
    userHandle: new Uint8Array(Buffer.from(userHandle, "base64url")),
    username,
    exclude: [],
    residentKey: "required",
  });
  const data: SignUpCeremonyData = { challenge: options.challenge, username, email, label, fields, userHandle };
  const ceremonyId = await storeCeremony(auth, signUpKind, null, { ...data });
  return { ceremonyId, options };
}

/**
 * Finishes a passkey sign-up (`POST /auth/register/public-key/finish`): the ceremony is spent
 * first (WA-1: of concurrent finishes one goes on), the attestation verified as a registration's
 * (WA-2, WA-3, WA-5, the public key), then the account and its passkey are stored in one atomic
 * `createAccount` (PL-16): a local account without a password, `signUp.defaultRoles`, the address
 * unverified (its verification link sent), the fields with their defaults, the passkey keeping the
 * ceremony's user handle. A username taken since the begin, or a credential id registered to
 * anyone, stores nothing (40900). Emits `user.created` (`sign_up`) and `passkey.registered`, then
 * signs in as a passkey does: a user-verified passkey is a complete sign-in (`amr` `hwk` or `swk`
 * with `user`); one without user verification gets 40105 where a second factor is required of the
 * account (STUP-4), tokens otherwise.
 *
 * @throws {AuthError} 40002 malformed response or no ceremony id, 40100 the ceremony or the passkey
 *   refused, 40400 sign-up or passkeys off, 40900 the username is taken or the passkey registered.
 * @example
 * ```ts
 * const result = await finishPasskeySignUp(auth, { ceremonyId, response, ip });
 * if (result.status === "authenticated") useTokens(result.tokens);
 * ```
 */
export async function finishPasskeySignUp(auth: Auth, input: FinishPasskeySignUpInput): Promise<RegisterResult> {
  requirePasskeySignUp(auth);
  const ceremony = await spendCeremony(auth, input.ceremonyId, signUpKind);
  const data = ceremony.data as unknown as SignUpCeremonyData;
  const { passkey, userVerified } = await verifiedRegistration(auth, ceremony, input.response, data.userHandle);
  const record = await newUserRecord(auth, {
    username: data.username,
    ...(data.email === null ? {} : { email: data.email }),
    roles: auth.config.signUp.defaultRoles,
    fields: data.fields,
  });
  const user = await createPasskeyAccount(auth, record, passkey);
  if (data.email !== null && auth.config.email !== null) sendVerificationLink(auth, user, data.email, input.acceptLanguage);
  const methods = passkeyMethods(passkey, userVerified);
  const client = { complete: userVerified, otherFactorBudget: passkeyBudget(passkey.id), userAgent: input.userAgent };
  return (await completeFirstFactor(auth, user, methods, input.ip, client)) as RegisterResult;
}

const usernameTaken = () => new AuthError(ErrorCode.Conflict, "The username is taken");

/**
 * Stores the account and its passkey as one (`UserStore.createAccount`; IM-1): both or neither.
 * When the store refuses, tells which key was taken, looked up after the fact.
 */
async function createPasskeyAccount(auth: Auth, record: UserRecord, passkey: Omit<PasskeyRecord, "userId">): Promise<UserRecord> {
  const account = { user: record, totp: null, recoveryCodeHashes: [], passkeys: [passkey], identities: [] };
  const created = await auth.storage.users.createAccount(account);
  if (created === false) {
    if (await auth.storage.users.findByUsernameKey(record.usernameKey)) throw usernameTaken();
    if (await auth.storage.passkeys.findById(passkey.id)) {
      throw new AuthError(ErrorCode.Conflict, "This passkey is already registered");
    }
    throw new AuthError(ErrorCode.Conflict, "The username is taken or the passkey is already registered");
  }
  const user = storedUser(record, created);
  const at = record.createdAt;
  auth.emit({ type: "user.created", userId: user.id, by: "sign_up", at });
  auth.emit({ type: "passkey.registered", userId: user.id, credentialId: passkey.id, at });
  return user;
}
