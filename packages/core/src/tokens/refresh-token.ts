import { createHmac } from "node:crypto";
import type { Auth } from "../auth.js";
import { base64url, sha256 } from "../crypto/random.js";
import type { SessionRecord } from "../storage/types.js";

/**
 * A refresh token as a refresh reads it: `<session id>.<generation>.<secret>`. The token names its
 * session, so the refresh is one conditional write of that session by its id; the session holds
 * the SHA-256 of its current token only (RT-1). An earlier release's token (43 base64url
 * characters, no dots) names nothing: it is found in that release's table and counts as
 * generation 0 of its session.
 */
export interface PresentedRefreshToken {
  value: string;
  hash: string;
  sessionId: string;
  generation: number;
  /** An earlier release's token that was exchanged before this release: reuse (RT-2). */
  spentBeforeUpgrade: boolean;
}

/** A refresh token made to be handed out, and the SHA-256 the session holds of it. */
export interface IssuedRefreshToken {
  value: string;
  hash: string;
  generation: number;
}

const chainPurpose = "portcullis refresh token chain v1";
/** How many rotations back a presented token is followed to the session's current one (see {@link relationToCurrent}). */
export const maxGenerationsBack = 10_000;
const tokenPattern = /^([A-Za-z0-9_-]{1,255})\.(0|[1-9][0-9]{0,14})\.([A-Za-z0-9_-]{43})$/;
const legacyPattern = /^[A-Za-z0-9_-]{43}$/;

/** The first refresh token of a new session: generation 0, with 256 random bits (RT-1). */
export function firstRefreshToken(auth: Auth, sessionId: string): IssuedRefreshToken {
  return issued(`${sessionId}.0.${base64url(auth.randomBytes(32))}`, 0);
}

/**
 * The token that replaces `token` at a refresh: generation + 1, whose secret is the HMAC-SHA256 of
 * the whole replaced token under a key derived from the encryption key (`key`, the current one's
 * by default). The replacement follows from the replaced token alone, so a token spent a moment
 * ago can be answered with the same replacement (`refreshReuseInterval`) and an earlier
 * generation can be traced to the current one (RT-2) without storing either.
 */
export function nextRefreshToken(
  auth: Auth,
  token: Pick<PresentedRefreshToken, "value" | "sessionId" | "generation">,
  key: Buffer = chainKeys(auth)[0] as Buffer,
): IssuedRefreshToken {
  return issued(successorOf(token.value, token.sessionId, token.generation, key), token.generation + 1);
}

/** The value of the token that replaces `value` (of `sessionId`, at `generation`) under `key`. */
function successorOf(value: string, sessionId: string, generation: number, key: Buffer): string {
  return `${sessionId}.${generation + 1}.${createHmac("sha256", key).update(value).digest("base64url")}`;
}

/**
 * Reads a presented refresh token; null for one that is malformed, or an earlier release's
 * token that its store does not know (nothing read for a malformed one).
 */
export async function readRefreshToken(auth: Auth, value: string): Promise<PresentedRefreshToken | null> {
  const match = tokenPattern.exec(value);
  if (match) {
    const [, sessionId, generation] = match as unknown as [string, string, string];
    return { value, hash: sha256(value), sessionId, generation: Number(generation), spentBeforeUpgrade: false };
  }
  const { findLegacyRefreshToken } = auth.storage.sessions;
  if (!legacyPattern.test(value) || !findLegacyRefreshToken) return null;
  const hash = sha256(value);
  const legacy = await findLegacyRefreshToken(hash);
  if (legacy === null) return null;
  return { value, hash, sessionId: legacy.sessionId, generation: 0, spentBeforeUpgrade: legacy.spentAt !== null };
}

/**
 * How a token the session no longer holds stands to the one it holds, following the chain of
 * {@link nextRefreshToken} under each key of the encryption keyring: `parent` when its replacement
 * is the current token (`current` is then that token), `earlier` when a replacement further on
 * is, and `unrelated` when none is within {@link maxGenerationsBack} generations: a token this
 * service never issued for the session (made up from its id, or a later one), which must not end it.
 */
export function relationToCurrent(
  auth: Auth,
  token: PresentedRefreshToken,
  session: Pick<SessionRecord, "refreshHash" | "refreshGeneration">,
): { relation: "parent"; current: string } | { relation: "earlier" | "unrelated" } {
  const steps = session.refreshGeneration - token.generation;
  if (session.refreshHash === null || steps < 1 || steps > maxGenerationsBack) return { relation: "unrelated" };
  for (const key of chainKeys(auth)) {
    let value = token.value;
    for (let generation = token.generation; generation < session.refreshGeneration; generation += 1) {
      value = successorOf(value, token.sessionId, generation, key);
    }
    if (sha256(value) !== session.refreshHash) continue;
    return steps === 1 ? { relation: "parent", current: value } : { relation: "earlier" };
  }
  return { relation: "unrelated" };
}

function issued(value: string, generation: number): IssuedRefreshToken {
  return { value, hash: sha256(value), generation };
}

const chainKeysOf = new WeakMap<Auth["secretBox"], Buffer[]>();

/** The chain's keys, one per key of the encryption keyring, the current one first; derived once per instance. */
function chainKeys(auth: Auth): Buffer[] {
  let keys = chainKeysOf.get(auth.secretBox);
  if (!keys) {
    keys = auth.secretBox.deriveKeys(chainPurpose);
    chainKeysOf.set(auth.secretBox, keys);
  }
  return keys;
}
