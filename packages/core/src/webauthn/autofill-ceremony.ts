import type { PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/server";
import type { Auth } from "../auth.js";
import { keyedDigest } from "../crypto/keyed-tag.js";
import { base64url, sha256 } from "../crypto/random.js";
import { simpleWebAuthn } from "../dependencies.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { ChallengeRecord } from "../storage/types.js";
import { type CeremonyStart, passkeyConfig } from "./ceremony.js";

/** The prefix that tells an autofill ceremony's id from a stored ceremony's. */
export const autofillCeremonyPrefix = "cm.";

const challengePurpose = "portcullis autofill ceremony v1";
/** The payload an autofill ceremony id carries: its expiry (8 bytes, big-endian milliseconds), then 16 random bytes. */
const payloadBytes = 24;

/** Whether `ceremonyId` names an autofill ceremony, which {@link spendAutofillCeremony} spends. */
export function isAutofillCeremonyId(ceremonyId: unknown): ceremonyId is string {
  return typeof ceremonyId === "string" && ceremonyId.startsWith(autofillCeremonyPrefix);
}

/** The challenge of an autofill ceremony's payload: a keyed digest only this server can make (32 bytes). */
function challengeOf(auth: Auth, payload: Buffer): string {
  return base64url(keyedDigest(auth.secretBox, challengePurpose, payload.toString("base64url")));
}

/**
 * Begins a passkey sign-in for the browser's autofill (conditional mediation,
 * `POST /auth/public-key/login/begin` with `{ "mediation": "conditional" }`). Such a ceremony is
 * stateless: its id carries its expiry and 16 random bytes, and its challenge is their keyed
 * digest, so a page that begins one on every load and never finishes stores nothing and takes no
 * attempt from any budget (PL-11). The options list no credentials (a discoverable sign-in), ask
 * for user verification as configured, and time out with the ceremony.
 *
 * @throws {AuthError} 40400 passkeys not configured.
 * @example
 * ```ts
 * const { ceremonyId, options } = await beginAutofillCeremony(auth);
 * // the browser: startAuthentication({ optionsJSON: options, useBrowserAutofill: true })
 * ```
 */
export async function beginAutofillCeremony(auth: Auth): Promise<CeremonyStart<PublicKeyCredentialRequestOptionsJSON>> {
  const config = passkeyConfig(auth);
  const ttlMs = config.ceremonyTtlSeconds * 1000;
  const payload = Buffer.alloc(payloadBytes);
  payload.writeBigUInt64BE(BigInt(auth.now() + ttlMs), 0);
  payload.set(auth.randomBytes(16), 8);
  const { generateAuthenticationOptions } = await simpleWebAuthn();
  const options = await generateAuthenticationOptions({
    rpID: config.rpId,
    challenge: new Uint8Array(Buffer.from(challengeOf(auth, payload), "base64url")),
    allowCredentials: [],
    userVerification: config.userVerification,
    timeout: ttlMs,
  });
  return { ceremonyId: `${autofillCeremonyPrefix}${payload.toString("base64url")}`, options };
}

/** The payload of a well-formed autofill ceremony id (its one canonical base64url form), or null. */
function payloadOf(ceremonyId: string): Buffer | null {
  const encoded = ceremonyId.slice(autofillCeremonyPrefix.length);
  const payload = Buffer.from(encoded, "base64url");
  return payload.length === payloadBytes && payload.toString("base64url") === encoded ? payload : null;
}

/**
 * Spends an autofill ceremony once (WA-1, PL-12), before anything of the response is examined:
 * the id must be well formed, unexpired and expire no later than one `ceremonyTtl` from now; its
 * challenge is made again from it, and one atomic counter hit under the id's SHA-256, living until
 * the ceremony expires, lets exactly one of any number of concurrent finishes through. Answers the
 * ceremony as a stored sign-in ceremony looks (kind `webauthn_login`, no user), so the finish goes
 * on as for any discoverable sign-in (WA-4: the user handle must come back).
 *
 * @throws {AuthError} 40100 malformed, expired, too far in the future or already used.
 */
export async function spendAutofillCeremony(auth: Auth, ceremonyId: string): Promise<ChallengeRecord> {
  const ttlMs = passkeyConfig(auth).ceremonyTtlSeconds * 1000;
  const now = auth.now();
  const payload = payloadOf(ceremonyId);
  const expiresAt = payload ? Number(payload.readBigUInt64BE(0)) : 0;
  if (!payload || expiresAt <= now || expiresAt > now + ttlMs) throw unknownCeremony();
  const hit = await auth.storage.counters.hit(`webauthn-autofill:${sha256(ceremonyId)}`, 1, expiresAt - now, now);
  if (!hit.allowed) throw unknownCeremony();
  return {
    id: sha256(ceremonyId),
    kind: "webauthn_login",
    userId: null,
    data: { challenge: challengeOf(auth, payload) },
    attempts: 0,
    createdAt: expiresAt - ttlMs,
    expiresAt,
  };
}

/** The one refusal of a ceremony that cannot be spent, as a stored ceremony's (WA-1). */
function unknownCeremony(): AuthError {
  return new AuthError(ErrorCode.AuthenticationFailed, "The ceremony is unknown, expired or already used");
}
