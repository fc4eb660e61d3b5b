import type {
  AuthenticationResponseJSON,
  AuthenticatorTransport,
  PublicKeyCredentialRequestOptionsJSON,
} from "@simplewebauthn/server";
import type { Auth } from "../auth.js";
import { keyedDigest } from "../crypto/keyed-tag.js";
import { simpleWebAuthn } from "../dependencies.js";
import { directoryUserNow } from "../directory/sign-in.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { AuthMethod, ChallengeRecord, PasskeyRecord, UserRecord } from "../storage/types.js";
import { passkeyBudget } from "../throttle/failure-budget.js";
import { takeAttempt } from "../throttle/throttle.js";
import { typedUsernameKey, usernameKeyOf } from "../users/username.js";
import { beginAutofillCeremony, isAutofillCeremonyId, spendAutofillCeremony } from "../webauthn/autofill-ceremony.js";
import {
  type CeremonyStart,
  newChallenge,
  passkeyConfig,
  spendCeremony,
  storeCeremony,
  userHandleOf,
} from "../webauthn/ceremony.js";
import { readAuthenticationResponse } from "../webauthn/credential-json.js";
import { explainPasskeyRefusal } from "../webauthn/passkey-refusal.js";
import { optionalString } from "./input.js";
import type { LoginResult } from "./login-result.js";
import { completeFirstFactor } from "./pending-login.js";

/** The input of {@link webauthnBegin}. */
export interface WebauthnBeginInput {
  /** Whose passkeys to offer. Without it the browser offers every passkey it holds for the site. */
  username?: string;
  /**
   * `"conditional"`: a ceremony for the browser's autofill (conditional mediation), stateless:
   * nothing is stored and no attempt is taken (PL-11). Not with `username`.
   */
  mediation?: "conditional";
  /** The client address, for per-address throttling. */
  ip?: string;
}

/** The input of {@link webauthnFinish}. */
export interface WebauthnFinishInput {
  /** The id {@link webauthnBegin} returned (the `X-WebAuthn-Ceremony` header over HTTP). */
  ceremonyId: string;
  /** The browser's `AuthenticationResponseJSON`, as `startAuthentication` returns it. */
  response: unknown;
  /** The device token the client holds (RL-5): a second factor after this passkey spends its budget. */
  deviceToken?: string;
  /** The client address, for throttling and events. */
  ip?: string;
  /** The request's `User-Agent`, kept with the new session (shown in the sessions list). */
  userAgent?: string;
}

/** A credential as `allowCredentials` lists it. */
type AllowedCredential = { id: string; transports?: AuthenticatorTransport[] };

/**
 * The credentials begin lists for a username whose account has no passkey, or that is nobody's
 * (EN-4): one or two ids derived from the name by {@link keyedDigest}, 16, 20 or 32 bytes long
 * like the credential ids of common platform authenticators, with their transports. The same name
 * always gets the same ones, so asking twice tells nothing; no authenticator holds them, so the
 * browser finds no passkey, as it would for a lost one.
 */
function decoyCredentials(auth: Auth, name: string): AllowedCredential[] {
  const derive = (label: string) => keyedDigest(auth.secretBox, "portcullis passkey decoy v1", `${label}\0${name}`);
  const shape = derive("shape");
  const count = 1 + ((shape[0] as number) & 1);
  const length = [16, 20, 32][(shape[1] as number) % 3] as number;
  const transports: AuthenticatorTransport[] = (shape[2] as number) & 1 ? ["hybrid", "internal"] : ["internal"];
  return Array.from({ length: count }, (_, index) => ({
    id: derive(`id ${index}`).subarray(0, length).toString("base64url"),
    transports,
  }));
}

/**
 * Begins a passkey sign-in (`POST /auth/public-key/login/begin`). With the username of an
 * account, its passkeys are listed in `allowCredentials`; for a name whose account has none, or
 * that is nobody's, decoy credential ids derived from the name are listed instead, so the answer
 * does not tell which accounts exist or have passkeys (EN-4); without a username the ceremony is
 * discoverable. The ceremony (a 32-byte challenge; WA-1) is stored for `passkeys.ceremonyTtl`
 * and takes one attempt from the client address (RL-4) and one from its
 * `throttle.unauthenticatedWrites` (RL-7). With `mediation: "conditional"` (no username) the
 * ceremony is one for the browser's autofill, which stores nothing and takes no attempt
 * (PL-11).
 *
 * @throws {AuthError} 40002 bad input (a `mediation` other than `"conditional"`, or with a username), 40400 passkeys not configured, 42900 throttled.
 * @example
 * ```ts
 * const { ceremonyId, options } = await webauthnBegin(auth, {});
 * // the browser: startAuthentication({ optionsJSON: options }), sent back with ceremonyId
 * ```
 */
export async function webauthnBegin(
  auth: Auth,
  input: WebauthnBeginInput,
): Promise<CeremonyStart<PublicKeyCredentialRequestOptionsJSON>> {
  const config = passkeyConfig(auth);
  const username = optionalString(input.username, "username");
  if (readMediation(input.mediation, username) === "conditional") return beginAutofillCeremony(auth);
  if (input.ip !== undefined) await takeAttempt(auth, "ip", input.ip, input.ip);
  if (input.ip !== undefined) await takeAttempt(auth, "unauthenticatedWrites", input.ip, input.ip);
  const usernameKey = username ? typedUsernameKey(username) : null;
  const user = usernameKey === null ? null : await auth.storage.users.findByUsernameKey(usernameKey);
  const passkeys = user ? await auth.storage.passkeys.listByUser(user.id) : [];
  let allowCredentials: AllowedCredential[] = passkeys.map((passkey) => ({
    id: passkey.id,
    transports: passkey.transports as AuthenticatorTransport[],
  }));
  if (username && allowCredentials.length === 0) {
    allowCredentials = decoyCredentials(auth, usernameKey ?? usernameKeyOf(username));
  }
  const { generateAuthenticationOptions } = await simpleWebAuthn();
  const options = await generateAuthenticationOptions({
    rpID: config.rpId,
    challenge: newChallenge(auth),
    allowCredentials,
    userVerification: config.userVerification,
    timeout: config.ceremonyTtlSeconds * 1000,
  });
  const ceremonyId = await storeCeremony(auth, "webauthn_login", user?.id ?? null, { challenge: options.challenge });
  return { ceremonyId, options };
}

/** The begin's `mediation`: absent, or `"conditional"` without a username; anything else is 40002. */
function readMediation(value: unknown, username: string | undefined): "conditional" | undefined {
  if (value === undefined || value === null) return undefined;
  if (value !== "conditional") throw new AuthError(ErrorCode.MalformedParameter, 'mediation must be "conditional"');
  if (username !== undefined) throw new AuthError(ErrorCode.MalformedParameter, "mediation takes no username");
  return value;
}

/**
 * Finishes a passkey sign-in (`POST /auth/public-key/login/finish`). The ceremony is spent
 * first, whatever follows (WA-1), and the client address gives up one attempt (RL-4; for an
 * autofill ceremony before it is spent, so a flood of made-up ids stops at the address's budget:
 * PL-12). A failed
 * assertion is no guess at a secret: it never spends the account's password budget, and a valid
 * passkey is never refused for password failures (RL-6). The credential must belong to the
 * account the ceremony named, and to the one whose user handle came back, which a discoverable
 * sign-in must send (WA-4). The type,
 * challenge, origin, rpId hash, user presence, user verification (unless configured
 * `"preferred"`), backup flags (WA-2, WA-3) and signature are checked, and the signature
 * counter must grow unless both are 0, updated by compare-and-set (WA-5). A disabled account
 * is told so only then.
 *
 * A user-verified passkey is a complete sign-in (`amr` `["hwk", "user"]`, `swk` for a synced
 * passkey). Without user verification (`amr` `["hwk"]`), a user with TOTP on gets a temporary token, as after a
 * password, whose code attempts spend the budget of the client's device token, or else this
 * passkey's, never the account's (RL-5, RL-6).
 *
 * @throws {AuthError} 40002 malformed response or no ceremony id, 40100 refused, 40300 disabled, 40400 not configured, 42900 throttled.
 * @example
 * ```ts
 * const result = await webauthnFinish(auth, { ceremonyId, response });
 * if (result.status === "authenticated") useTokens(result.tokens);
 * ```
 */
export async function webauthnFinish(auth: Auth, input: WebauthnFinishInput): Promise<LoginResult> {
  passkeyConfig(auth);
  const deviceToken = optionalString(input.deviceToken, "deviceToken");
  const autofill = isAutofillCeremonyId(input.ceremonyId);
  if (autofill && input.ip !== undefined) await takeAttempt(auth, "ip", input.ip, input.ip);
  const ceremony = autofill
    ? await spendAutofillCeremony(auth, input.ceremonyId)
    : await spendCeremony(auth, input.ceremonyId, "webauthn_login");
  if (!autofill && input.ip !== undefined) await takeAttempt(auth, "ip", input.ip, input.ip);
  const response = readAuthenticationResponse(input.response);
  const passkey = await auth.storage.passkeys.findById(response.id);
  const user = passkey ? await auth.storage.users.findById(passkey.userId) : null;
  if (!passkey || !user) return refuse(auth, null, input.ip);
  if (!answersForUser(ceremony, response, user, passkey)) return refuse(auth, user, input.ip);
  const assertion = await checkAssertion(auth, { ceremony, response, passkey, ip: input.ip });
  if (!assertion.accepted) return refuse(auth, user, input.ip, assertion.cause);
  const complete = assertion.userVerified;
  const current = await directoryUserNow(auth, user, input.ip);
  return completeFirstFactor(auth, current, passkeyMethods(passkey, complete), input.ip, {
    complete,
    deviceToken,
    otherFactorBudget: passkeyBudget(passkey.id),
    userAgent: input.userAgent,
  });
}

/** What {@link checkAssertion} found: an accepted assertion and whether it verified the user, or a refusal and its cause. */
export type AssertionCheck = { accepted: true; userVerified: boolean } | { accepted: false; cause?: unknown };

/**
 * Checks an assertion of `passkey` against a spent `ceremony` with `@simplewebauthn/server`: type,
 * challenge, origin, rpId hash, user presence, user verification (required unless the passkeys
 * are configured `"preferred"`, or when the ceremony asked for it: `data.userVerification`),
 * backup flags and signature (WA-2, WA-3); then stores the new counter by compare-and-set (WA-5).
 * A refusal explains an origin or rpId mismatch to the operator (`check.failed`). What a passkey
 * sign-in and a re-authentication share; the caller has matched the passkey to its user (WA-4).
 */
export async function checkAssertion(
  auth: Auth,
  input: { ceremony: ChallengeRecord; response: AuthenticationResponseJSON; passkey: PasskeyRecord; ip?: string | undefined },
): Promise<AssertionCheck> {
  const config = passkeyConfig(auth);
  const { ceremony, response, passkey } = input;
  const { verifyAuthenticationResponse } = await simpleWebAuthn();
  let verification: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    verification = await verifyAuthenticationResponse({
      response,
      expectedChallenge: ceremony.data.challenge as string,
      expectedOrigin: config.origins,
      expectedRPID: config.rpId,
      credential: {
        id: passkey.id,
        publicKey: Buffer.from(passkey.publicKey, "base64url"),
        counter: config.counterPolicy === "reject" ? passkey.counter : 0,
      },
      requireUserVerification: config.userVerification === "required" || ceremony.data.userVerification === "required",
    });
  } catch (error) {
    await explainPasskeyRefusal(auth, config, response, input.ip);
    return { accepted: false, cause: error };
  }
  const { verified, authenticationInfo } = verification;
  if (!verified || !(await recordUse(auth, passkey, authenticationInfo.newCounter, authenticationInfo.credentialBackedUp))) {
    return { accepted: false };
  }
  return { accepted: true, userVerified: authenticationInfo.userVerified };
}

/**
 * How a passkey assertion proved the user, as `amr` (STUP-1): `swk` for a synced passkey (backup
 * eligible: its key leaves the device), else `hwk`, with `user` when the user was verified.
 */
export function passkeyMethods(passkey: Pick<PasskeyRecord, "backupEligible">, userVerified: boolean): AuthMethod[] {
  const key: AuthMethod = passkey.backupEligible ? "swk" : "hwk";
  return userVerified ? [key, "user"] : [key];
}

/**
 * WA-4: a ceremony begun for a username is answered only by that account's passkeys; a user
 * handle, when sent, must be the one `passkey` (the account's) was created with; a discoverable
 * ceremony must send one.
 */
export function answersForUser(
  ceremony: ChallengeRecord,
  response: AuthenticationResponseJSON,
  user: UserRecord,
  passkey: PasskeyRecord,
): boolean {
  if (ceremony.userId !== null && ceremony.userId !== user.id) return false;
  if (passkey.userId !== user.id) return false;
  const handle = response.response.userHandle;
  if (handle === undefined) return ceremony.userId !== null;
  return handle === (passkey.userHandle ?? userHandleOf(user.id));
}

/**
 * Stores the new counter, backup state and use time by compare-and-set on the counter read
 * before verification (WA-5): a concurrent sign-in with the same passkey that stored first
 * makes this one fail under the `"reject"` policy. Under `"allow-stale"` the counter never goes
 * down and a lost race is not a failure.
 */
async function recordUse(auth: Auth, passkey: PasskeyRecord, newCounter: number, backedUp: boolean): Promise<boolean> {
  const strict = passkeyConfig(auth).counterPolicy === "reject";
  const counter = strict ? newCounter : Math.max(newCounter, passkey.counter);
  const updated = await auth.storage.passkeys.updateCounter(passkey.id, passkey.counter, counter, backedUp, auth.now());
  return updated || !strict;
}

/** Every refusal of a passkey, whatever its reason: one answer (EN-1), the verifier's error kept as `cause`. */
function refuse(auth: Auth, user: UserRecord | null, ip: string | undefined, cause?: unknown): never {
  auth.emit({ type: "login.failed", userId: user?.id ?? null, reason: "invalid_credentials", at: auth.now(), ip });
  throw new AuthError(ErrorCode.AuthenticationFailed, "The passkey was not accepted", { cause });
}
