import type { Auth } from "../auth.js";
import { opaqueToken } from "../crypto/ids.js";
import { base64url, sha256 } from "../crypto/random.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { sweepNowAndThen } from "../storage/sweep.js";
import type { ChallengeRecord } from "../storage/types.js";
import type { ResolvedPasskeyConfig } from "./passkey-config.js";

/** The header that carries the ceremony id to a finish route. */
export const ceremonyHeader = "x-webauthn-ceremony";

/** The kinds of challenge a WebAuthn ceremony is stored as. */
export type CeremonyKind = "webauthn_login" | "webauthn_register" | "webauthn_reauthenticate" | "webauthn_sign_up";

/** What a begin step returns: the id of the stored ceremony, and the options for the browser. */
export interface CeremonyStart<Options> {
  /** Sent back by the client in the `X-WebAuthn-Ceremony` header of the finish step. */
  ceremonyId: string;
  options: Options;
}

/** The passkey configuration, or 40400 when passkeys are not configured. */
export function passkeyConfig(auth: Auth): ResolvedPasskeyConfig {
  if (!auth.config.passkeys) throw new AuthError(ErrorCode.NotFound, "Passkeys are not enabled");
  return auth.config.passkeys;
}

/** A fresh WebAuthn challenge: 32 random bytes (WA-1). */
export function newChallenge(auth: Auth): Uint8Array<ArrayBuffer> {
  return new Uint8Array(auth.randomBytes(32));
}

/**
 * Stores a ceremony under the SHA-256 of a fresh opaque id, for `ceremonyTtl`, with its
 * challenge (base64url) and flow data; returns the id the client holds. Ceremonies live in
 * storage, so one begun on one instance finishes on another (WA-1). Each one counts towards the
 * write-triggered sweep of expired rows, as OAuth states do (RL-7).
 */
export async function storeCeremony(
  auth: Auth,
  kind: CeremonyKind,
  userId: string | null,
  data: { challenge: string } & Record<string, unknown>,
): Promise<string> {
  const { value, hash } = opaqueToken(auth);
  const now = auth.now();
  sweepNowAndThen(auth, now);
  await auth.storage.challenges.put({
    id: hash,
    kind,
    userId,
    data,
    attempts: 0,
    createdAt: now,
    expiresAt: now + passkeyConfig(auth).ceremonyTtlSeconds * 1000,
  });
  return value;
}

/**
 * Counts one registration (or, with `purpose` `"reauthenticate"`, one re-authentication: STUP-2)
 * begun by a signed-in user, in a window of `ceremonyTtl`: past `registrationCeremonyLimit` in
 * the window nothing is stored and the begin is refused until the window ends. Ceremonies live as
 * long as the window, so one user holds at most twice the limit of open ceremonies of each
 * purpose, however fast it begins (RL-7).
 *
 * @throws {AuthError} 42900 with the seconds until the window ends.
 */
export async function countRegistrationCeremony(
  auth: Auth,
  userId: string,
  purpose: "register" | "reauthenticate" = "register",
): Promise<void> {
  const { registrationCeremonyLimit, ceremonyTtlSeconds } = passkeyConfig(auth);
  const now = auth.now();
  const hit = await auth.storage.counters.hit(
    `webauthn-${purpose}:${userId}`,
    registrationCeremonyLimit,
    ceremonyTtlSeconds * 1000,
    now,
  );
  if (hit.allowed) return;
  // A refused hit's window has not ended, so this is at least 1.
  throw new AuthError(ErrorCode.TooManyAttempts, undefined, { retryAfterSeconds: Math.ceil((hit.resetAt - now) / 1000) });
}

/**
 * Spends the ceremony a finish step names, atomically and before anything of the response is
 * checked, so that it is used once whether verification then succeeds or not (WA-1): of N
 * concurrent finishes one receives it. A ceremony of the other kind is not found (ST-2).
 *
 * @throws {AuthError} 40002 no ceremony id, 40100 unknown, expired, spent or of the other kind.
 */
export async function spendCeremony(auth: Auth, ceremonyId: unknown, kind: CeremonyKind): Promise<ChallengeRecord> {
  if (typeof ceremonyId !== "string" || ceremonyId === "") {
    throw new AuthError(ErrorCode.MalformedParameter, "The X-WebAuthn-Ceremony header is required");
  }
  const ceremony = await auth.storage.challenges.consume(sha256(ceremonyId), kind, auth.now());
  if (!ceremony) throw new AuthError(ErrorCode.AuthenticationFailed, "The ceremony is unknown, expired or already used");
  return ceremony;
}

/**
 * The WebAuthn user handle of an account: the UTF-8 bytes of its user id, which is random and
 * says nothing about the person (WebAuthn §14.6.1), as base64url.
 */
export function userHandleOf(userId: string): string {
  return base64url(Buffer.from(userId));
}
