import type { PublicKeyCredentialCreationOptionsJSON } from "@simplewebauthn/server";
import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { requiredString } from "../flows/input.js";
import { passkeyMethods } from "../flows/webauthn-login.js";
import { beginRegistration, storePasskey, verifiedPasskey } from "../flows/webauthn-register.js";
import type { TokenSet } from "../tokens/issue-tokens.js";
import { type CeremonyStart, passkeyConfig, spendCeremony } from "../webauthn/ceremony.js";
import { type PasskeyInfo, readLabel, toPasskeyInfo } from "../webauthn/passkey-info.js";
import { signInEnrolled } from "./enrolled-sign-in.js";
import { openEnrolment, spendEnrolment } from "./enrolment-token.js";

/**
 * Passkey enrolment is offered only where a passkey is a second factor: passkeys configured with
 * `userVerification: "required"` (see `hasCountedPasskey`). Elsewhere 40400, as a feature that is off.
 */
export function passkeyEnrolmentOffered(auth: Auth): boolean {
  return auth.config.passkeys?.userVerification === "required";
}

function requirePasskeyEnrolment(auth: Auth): void {
  passkeyConfig(auth);
  if (!passkeyEnrolmentOffered(auth)) {
    throw new AuthError(ErrorCode.NotFound, 'Passkeys are a second factor only with passkeys.userVerification "required"');
  }
}

/** The input of {@link beginPasskeyEnrolment}. */
export interface BeginPasskeyEnrolmentInput {
  /** The temporary token of the 40105 answer. */
  tempToken: string;
  /** What the user calls this passkey ("Laptop", "YubiKey"); 1 to 64 characters. */
  label: string;
  /** The client address, for per-address throttling. */
  ip?: string;
}

/**
 * Begins registering a passkey with the enrolment token of a 40105 answer
 * (`POST /auth/public-key/enrolment/begin`; STUP-4): the creation options `webauthnRegisterBegin`
 * answers a signed-in user (user verification required), the token's proven first factor standing
 * for the re-authentication. Takes one of the token's attempts; the registration ceremonies a
 * user begins stay bounded as there (RL-7).
 *
 * @throws {AuthError} 40001/40002 missing input, 40100 the token is refused, 40400 passkeys not a second factor here, 42200 bad label, 42900 throttled.
 * @example
 * ```ts
 * const { ceremonyId, options } = await beginPasskeyEnrolment(auth, { tempToken, label: "Laptop" });
 * ```
 */
export async function beginPasskeyEnrolment(
  auth: Auth,
  input: BeginPasskeyEnrolmentInput,
): Promise<CeremonyStart<PublicKeyCredentialCreationOptionsJSON>> {
  requirePasskeyEnrolment(auth);
  const tempToken = requiredString(input.tempToken, "tempToken");
  const label = readLabel(input.label);
  const enrolment = await openEnrolment(auth, tempToken, input.ip);
  return beginRegistration(auth, enrolment.user, label);
}

/** The input of {@link finishPasskeyEnrolment}. */
export interface FinishPasskeyEnrolmentInput {
  /** The temporary token of the 40105 answer. */
  tempToken: string;
  /** The id {@link beginPasskeyEnrolment} returned (the `X-WebAuthn-Ceremony` header over HTTP). */
  ceremonyId: string;
  /** The browser's `RegistrationResponseJSON`, as `startRegistration` returns it. */
  response: unknown;
  ip?: string;
  /** The request's `User-Agent`, kept with the new session (shown in the sessions list). */
  userAgent?: string;
}

/** What a completed enrolment of a passkey answers: the sign-in's token set, and the new passkey. */
export interface PasskeyEnrolled {
  tokens: TokenSet;
  passkey: PasskeyInfo;
}

/**
 * Finishes registering the passkey and completes the sign-in
 * (`POST /auth/public-key/enrolment/finish`; STUP-4). One of the token's attempts is taken, then
 * the ceremony is spent (WA-1) and must be this user's, and the response is verified as
 * `webauthnRegisterFinish` verifies it (WA-2 … WA-6); then the token is spent (TMP-3), the passkey
 * stored, every session the user had ends (SE-2), and a new session starts whose `amr` is the
 * first factor's and the passkey's with `user` (PW-7).
 *
 * @throws {AuthError} 40002 malformed response or no ceremony id, 40100 the token or the passkey refused, 40400 passkeys not a second factor here, 40900 already registered, 42900 throttled.
 */
export async function finishPasskeyEnrolment(auth: Auth, input: FinishPasskeyEnrolmentInput): Promise<PasskeyEnrolled> {
  requirePasskeyEnrolment(auth);
  const enrolment = await openEnrolment(auth, requiredString(input.tempToken, "tempToken"), input.ip);
  const ceremony = await spendCeremony(auth, input.ceremonyId, "webauthn_register");
  const verified = await verifiedPasskey(auth, enrolment.user, ceremony, input.response);
  await spendEnrolment(auth, enrolment);
  const passkey = await storePasskey(auth, verified);
  auth.emit({ type: "passkey.registered", userId: enrolment.user.id, credentialId: passkey.id, at: auth.now() });
  const amr = passkeyMethods(passkey, true);
  const tokens = await signInEnrolled(auth, enrolment, { amr, reason: "passkey_registered", userAgent: input.userAgent });
  return { tokens, passkey: toPasskeyInfo(passkey) };
}
