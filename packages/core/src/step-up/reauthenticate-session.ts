import type { AuthenticatorTransport, PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/server";
import type { Auth } from "../auth.js";
import { simpleWebAuthn } from "../dependencies.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { requiredString } from "../flows/input.js";
import { type ReauthenticationProof, offeredProofs, proveEveryFactor } from "../flows/reauthenticate.js";
import { answersForUser, checkAssertion, passkeyMethods } from "../flows/webauthn-login.js";
import { refuseImpersonated } from "../impersonation/impersonate.js";
import { organizationToKeep } from "../organizations/session-organization.js";
import type { AuthMethod, UserRecord } from "../storage/types.js";
import { takeAttempt } from "../throttle/throttle.js";
import { type TokenSet, beginSession } from "../tokens/issue-tokens.js";
import type { SessionClient } from "../users/session-use.js";
import { revokeSession } from "../users/sessions.js";
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

/** The input of {@link reauthenticate}: the signed-in session, and the proofs. */
export interface ReauthenticateInput extends ReauthenticationProof {
  userId: string;
  /** The session of the request's access token: the one that ends, a new one beginning in its place. */
  sessionId: string;
  /** The client address, for events; the new session shows it (as its network) in the sessions list. */
  ip?: string;
  /** The request's `User-Agent`, kept with the new session (shown in the sessions list). */
  userAgent?: string;
}

/**
 * Re-authenticates a signed-in session without a new sign-in (`POST /auth/reauthenticate`;
 * STUP-2): the user proves every factor the account has in this request, as a sign-in would ask
 * (STUP-3): the `password`, and a `totpCode` when TOTP is on. A directory user's password is
 * checked by the directory. The session ends and a new one begins in its place
 * (`replaceSession`; ASVS 7.2.4), its `auth_time` now and its `amr` what was proven (`pwd`,
 * with `otp`); the answer is the new session's token set, as a sign-in's. Each proof spends an
 * attempt of the session's failure budget (RL-1, RL-5), as `requireRecentAuthentication`'s do. A
 * user who signs in through a provider re-authenticates there (`max_age`, `prompt=login`): see
 * docs/flows/step-up.md.
 *
 * @throws {AuthError} 40001 a factor missing (the message says which), 40100 wrong password, 40101
 *   the session or user is no longer live (or a concurrent re-authentication ended the session
 *   first), 40103 wrong code, 40900 a TOTP code while TOTP is off, 42900 throttled, 50300 the
 *   directory is unavailable.
 * @example
 * ```ts
 * const { accessToken, refreshToken } = await reauthenticate(auth, { userId, sessionId, password, totpCode });
 * ```
 */
export async function reauthenticate(auth: Auth, input: ReauthenticateInput): Promise<TokenSet> {
  const user = await signedInUser(auth, input.userId);
  const sessionId = requiredString(input.sessionId, "sessionId");
  const offered = offeredProofs(input);
  const totp = await auth.storage.totp.get(user.id);
  const methods = await proveEveryFactor(auth, user, sessionId, offered, totp, null);
  return replaceSession(auth, user, sessionId, methods, { ip: input.ip, userAgent: input.userAgent });
}

/**
 * Ends the live session `sessionId` of `user`, re-authenticated by a proof of `methods`, and begins
 * a new session in its place (STUP-2, ASVS 7.2.4): a new random id, the user and token version,
 * `amr` `methods`, `authTime` and `createdAt` now, the ended session's `expiresAt` (a
 * re-authentication never extends a session's lifetime: RT-4), and the `User-Agent` and address of
 * `client`. Answers its token set, as a sign-in's. Every token of the ended session is refused
 * from then on, so a copy of its refresh token held by another (a hijacker) never inherits the
 * proof, and presenting it ends nothing else. The session is ended first, through `revokeSession`
 * (the token-state cache dropped, the revocation channel told, `session.revoked` with reason
 * `reauthenticated`): only the caller whose revocation ended it goes on, so of concurrent
 * re-authentications of one session exactly one answers tokens. Emits `session.reauthenticated`
 * with both ids. The session cap is not consulted: the account's live sessions do not grow. The
 * seam another proof (a provider's fresh sign-in) re-authenticates a session through.
 *
 * @throws {AuthError} 40101 the session is not a live session of the user at its token version, or another call ended it first.
 */
export async function replaceSession(
  auth: Auth,
  user: UserRecord,
  sessionId: string,
  methods: AuthMethod[],
  client: SessionClient = {},
): Promise<TokenSet> {
  const now = auth.now();
  const session = await auth.storage.sessions.findSession(sessionId);
  refuseImpersonated(auth, session, "reauthentication");
  // A revoked session is refused by the store's conditional write (revokeSession), atomically.
  const live =
    session !== null && session.userId === user.id && session.tokenVersion === user.tokenVersion && session.expiresAt > now;
  if (!live || !(await revokeSession(auth, user.id, sessionId, "reauthenticated"))) {
    throw new AuthError(ErrorCode.InvalidToken);
  }
  const org = await organizationToKeep(auth, user.id, session.activeOrgId, methods);
  const renewed = await beginSession(auth, user, { amr: methods, authTime: now, expiresAt: session.expiresAt, client, org });
  auth.emit({
    type: "session.reauthenticated",
    userId: user.id,
    sessionId: renewed.session.id,
    replacedSessionId: sessionId,
    amr: methods,
    at: now,
    ip: client.ip,
  });
  return renewed.tokens;
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
  /** The session of the request's access token: the one that began the ceremony, and ends (a new one beginning in its place). */
  sessionId: string;
  /** The id {@link reauthenticateWithPasskeyBegin} returned (the `X-WebAuthn-Ceremony` header over HTTP). */
  ceremonyId: string;
  /** The browser's `AuthenticationResponseJSON`. */
  response: unknown;
  /** The client address, for throttling and events; the new session shows it in the sessions list. */
  ip?: string;
  /** The request's `User-Agent`, kept with the new session (shown in the sessions list). */
  userAgent?: string;
}

const passkeyRefused = (cause?: unknown) =>
  new AuthError(ErrorCode.AuthenticationFailed, "The passkey was not accepted", { cause });

/**
 * Finishes re-authenticating with a passkey (`POST /auth/reauthenticate/public-key/finish`;
 * STUP-2): the ceremony is spent first (WA-1) and must be this user's and this session's; the
 * passkey must be the user's, and the user handle, when sent, the user's (WA-4); the assertion is
 * checked as at sign-in (WA-2, WA-3, WA-5), and the client address gives up one attempt (RL-4).
 * It must prove every factor of the account (STUP-3): with TOTP on, a user-verified passkey. The
 * session ends and a new one begins in its place (`replaceSession`; ASVS 7.2.4), its
 * `auth_time` now and its `amr` the passkey's (`hwk` or `swk`, with `user`); the answer is the new
 * session's token set.
 *
 * @throws {AuthError} 40002 malformed response or no ceremony id, 40100 refused, 40101 the session or user is no longer live, 40400 not configured, 42900 throttled.
 */
export async function reauthenticateWithPasskeyFinish(auth: Auth, input: PasskeyReauthenticationFinishInput): Promise<TokenSet> {
  passkeyConfig(auth);
  const ceremony = await spendCeremony(auth, input.ceremonyId, "webauthn_reauthenticate");
  if (input.ip !== undefined) await takeAttempt(auth, "ip", input.ip, input.ip);
  const user = await signedInUser(auth, input.userId);
  const sessionId = requiredString(input.sessionId, "sessionId");
  const response = readAuthenticationResponse(input.response);
  if (ceremony.data.sessionId !== sessionId) throw passkeyRefused();
  const passkey = await auth.storage.passkeys.findById(response.id);
  if (!passkey || !answersForUser(ceremony, response, user, passkey)) throw passkeyRefused();
  const assertion = await checkAssertion(auth, { ceremony, response, passkey, ip: input.ip });
  if (!assertion.accepted) throw passkeyRefused(assertion.cause);
  const methods = passkeyMethods(passkey, assertion.userVerified);
  const totpOn = (await auth.storage.totp.get(user.id))?.enabled === true;
  if (decideReauthentication({ secondFactor: totpOn, recent: null, offered: methods }).outcome !== "prove") {
    throw passkeyRefused(new Error("The passkey did not verify the user, and the account has a second factor"));
  }
  return replaceSession(auth, user, sessionId, methods, { ip: input.ip, userAgent: input.userAgent });
}
