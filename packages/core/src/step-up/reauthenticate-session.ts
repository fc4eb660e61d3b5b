import type { AuthenticatorTransport, PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/server";
import type { Auth } from "../auth.js";
import { simpleWebAuthn } from "../dependencies.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { requiredString } from "../flows/input.js";
import { type ReauthenticationProof, offeredProofs, proveEveryFactor } from "../flows/reauthenticate.js";
import { answersForUser, checkAssertion, passkeyMethods } from "../flows/webauthn-login.js";
import type { AuthMethod, UserRecord } from "../storage/types.js";
import { takeAttempt } from "../throttle/throttle.js";
import { type AccessTokenSet, accessTokenSet } from "../tokens/issue-tokens.js";
import { signedInUser } from "../users/signed-in-user.js";
import {
  type CeremonyStart,
  countRegistrationCeremony,
  newChallenge,
  passkeyConfig,
  spendCeremony,
  storeCeremony,
} from "../webauthn/ceremony.js";
import { readAuthenticationResponse } from "../webauthn/credential-json.js";
import { decideReauthentication } from "./policy.js";

export type { AccessTokenSet } from "../tokens/issue-tokens.js";

/** The input of {@link reauthenticate}: the signed-in session, and the proofs. */
export interface ReauthenticateInput extends ReauthenticationProof {
  userId: string;
  /** The session of the request's access token: the one raised. */
  sessionId: string;
  /** The client address, for events. */
  ip?: string;
}

/**
 * Re-authenticates a signed-in session without a new sign-in (`POST /auth/reauthenticate`;
 * STUP-2): the user proves every factor the account has in this request, as a sign-in would ask
 * (STUP-3): the `password`, and a `totpCode` when TOTP is on. A directory user's password is
 * checked by the directory. The session's `auth_time` becomes now and its `amr` what was proven
 * (`pwd`, with `otp`), in storage, so its next refreshes carry them too; the answer is a new
 * access token of the same session carrying them. Each proof spends an attempt of the session's
 * failure budget (RL-1, RL-5), as `requireRecentAuthentication`'s do. A user who signs in through a
 * provider re-authenticates there (`max_age`, `prompt=login`): see docs/flows/step-up.md.
 *
 * @throws {AuthError} 40001 a factor missing (the message says which), 40100 wrong password, 40101
 *   the session or user is no longer live, 40103 wrong code, 40900 a TOTP code while TOTP is off,
 *   42900 throttled, 50300 the directory is unavailable.
 * @example
 * ```ts
 * const { accessToken } = await reauthenticate(auth, { userId, sessionId, password, totpCode });
 * ```
 */
export async function reauthenticate(auth: Auth, input: ReauthenticateInput): Promise<AccessTokenSet> {
  const user = await signedInUser(auth, input.userId);
  const sessionId = requiredString(input.sessionId, "sessionId");
  const offered = offeredProofs(input);
  const totp = await auth.storage.totp.get(user.id);
  const methods = await proveEveryFactor(auth, user, sessionId, offered, totp, null);
  return raiseSession(auth, user, sessionId, methods, input.ip);
}

/**
 * Records a re-authentication that proved `methods` on the live session `sessionId` of `user`
 * (STUP-2): its `authTime` becomes now and its `amr` `methods`; emits `session.reauthenticated`
 * and answers a new access token of the session. The seam another proof (a provider's fresh
 * sign-in) raises a session through.
 *
 * @throws {AuthError} 40101 the session is not a live session of the user at its token version.
 */
export async function raiseSession(
  auth: Auth,
  user: UserRecord,
  sessionId: string,
  methods: AuthMethod[],
  ip?: string,
): Promise<AccessTokenSet> {
  const now = auth.now();
  const session = await auth.storage.sessions.findSession(sessionId);
  // A revoked session is refused by the store's conditional write (recordAuthentication), atomically.
  const live =
    session !== null && session.userId === user.id && session.tokenVersion === user.tokenVersion && session.expiresAt > now;
  if (!live || !(await auth.storage.sessions.recordAuthentication(sessionId, now, methods))) {
    throw new AuthError(ErrorCode.InvalidToken);
  }
  auth.emit({ type: "session.reauthenticated", userId: user.id, sessionId, amr: methods, at: now, ip });
  return accessTokenSet(auth, user, { ...session, authTime: now, amr: methods });
}

/** The input of {@link reauthenticateWithPasskeyBegin}. */
export interface PasskeyReauthenticationBeginInput {
  userId: string;
  /** The session of the request's access token: only it may finish the ceremony. */
  sessionId: string;
}

/**
 * Begins re-authenticating a signed-in session with one of the user's passkeys
 * (`POST /auth/reauthenticate/public-key/begin`; STUP-2): request options listing the user's
 * passkeys, and a ceremony bound to this session. With TOTP on, user verification is required
 * (a passkey without it proves only a first factor; STUP-3); otherwise as configured. At most
 * `passkeys.registrationCeremonyLimit` begun per `ceremonyTtl` per user (RL-7).
 *
 * @throws {AuthError} 40101 user gone or disabled, 40400 passkeys not configured, 40900 the account has no passkey, 42900 too many begun.
 */
export async function reauthenticateWithPasskeyBegin(
  auth: Auth,
  input: PasskeyReauthenticationBeginInput,
): Promise<CeremonyStart<PublicKeyCredentialRequestOptionsJSON>> {
  const config = passkeyConfig(auth);
  const user = await signedInUser(auth, input.userId);
  const sessionId = requiredString(input.sessionId, "sessionId");
  const passkeys = await auth.storage.passkeys.listByUser(user.id);
  if (passkeys.length === 0) throw new AuthError(ErrorCode.Conflict, "The account has no passkey");
  await countRegistrationCeremony(auth, user.id, "reauthenticate");
  const totpOn = (await auth.storage.totp.get(user.id))?.enabled === true;
  const userVerification = totpOn ? "required" : config.userVerification;
  const { generateAuthenticationOptions } = await simpleWebAuthn();
  const options = await generateAuthenticationOptions({
    rpID: config.rpId,
    challenge: newChallenge(auth),
    allowCredentials: passkeys.map((passkey) => ({ id: passkey.id, transports: passkey.transports as AuthenticatorTransport[] })),
    userVerification,
    timeout: config.ceremonyTtlSeconds * 1000,
  });
  const data = { challenge: options.challenge, sessionId, userVerification };
  const ceremonyId = await storeCeremony(auth, "webauthn_reauthenticate", user.id, data);
  return { ceremonyId, options };
}

/** The input of {@link reauthenticateWithPasskeyFinish}. */
export interface PasskeyReauthenticationFinishInput {
  userId: string;
  /** The session of the request's access token: the one that began the ceremony. */
  sessionId: string;
  /** The id {@link reauthenticateWithPasskeyBegin} returned (the `X-WebAuthn-Ceremony` header over HTTP). */
  ceremonyId: string;
  /** The browser's `AuthenticationResponseJSON`. */
  response: unknown;
  /** The client address, for throttling and events. */
  ip?: string;
}

const passkeyRefused = (cause?: unknown) =>
  new AuthError(ErrorCode.AuthenticationFailed, "The passkey was not accepted", { cause });

/**
 * Finishes re-authenticating with a passkey (`POST /auth/reauthenticate/public-key/finish`;
 * STUP-2): the ceremony is spent first (WA-1) and must be this user's and this session's; the
 * passkey must be the user's, and the user handle, when sent, the user's (WA-4); the assertion is
 * checked as at sign-in (WA-2, WA-3, WA-5), and the client address gives up one attempt (RL-4).
 * It must prove every factor of the account (STUP-3): with TOTP on, a user-verified passkey. The
 * session's `auth_time` becomes now and its `amr` the passkey's (`hwk` or `swk`, with `user`);
 * the answer is a new access token of the session.
 *
 * @throws {AuthError} 40002 malformed response or no ceremony id, 40100 refused, 40101 the session or user is no longer live, 40400 not configured, 42900 throttled.
 */
export async function reauthenticateWithPasskeyFinish(
  auth: Auth,
  input: PasskeyReauthenticationFinishInput,
): Promise<AccessTokenSet> {
  passkeyConfig(auth);
  const ceremony = await spendCeremony(auth, input.ceremonyId, "webauthn_reauthenticate");
  if (input.ip !== undefined) await takeAttempt(auth, "ip", input.ip, input.ip);
  const user = await signedInUser(auth, input.userId);
  const sessionId = requiredString(input.sessionId, "sessionId");
  const response = readAuthenticationResponse(input.response);
  if (ceremony.data.sessionId !== sessionId || !answersForUser(ceremony, response, user)) throw passkeyRefused();
  const passkey = await auth.storage.passkeys.findById(response.id);
  if (passkey?.userId !== user.id) throw passkeyRefused();
  const assertion = await checkAssertion(auth, { ceremony, response, passkey, ip: input.ip });
  if (!assertion.accepted) throw passkeyRefused(assertion.cause);
  const methods = passkeyMethods(passkey, assertion.userVerified);
  const totpOn = (await auth.storage.totp.get(user.id))?.enabled === true;
  if (decideReauthentication({ secondFactor: totpOn, recent: null, offered: methods }).outcome !== "prove") {
    throw passkeyRefused(new Error("The passkey did not verify the user, and the account has a second factor"));
  }
  return raiseSession(auth, user, sessionId, methods, input.ip);
}
