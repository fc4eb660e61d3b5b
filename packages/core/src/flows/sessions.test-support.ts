/**
 * Test helpers for SE-2 (a user's own change ends the other sessions and keeps the one it was
 * made from), shared by the tests of every flow that makes such a change.
 */
import { expect } from "vitest";
import type { TokenSet } from "../tokens/issue-tokens.js";
import { type Harness, goodPassword, nextCode, outcome } from "./fixtures.test-support.js";
import { login } from "./login.js";
import { refresh } from "./refresh.js";
import { verifyAccessToken } from "./verify-access-token.js";
import { verifyTotp } from "./verify-totp.js";

/** A signed-in session: its tokens and its id. */
export interface SignedInSession {
  tokens: TokenSet;
  sessionId: string;
}

/** How a test user signs in: the password, and the TOTP secret when TOTP is on. */
export interface Credentials {
  password?: string;
  totpSecret?: Uint8Array;
}

/** Signs a user in with a password, and the next TOTP code when TOTP is on; returns the tokens and the session id. */
export async function signedInSession(
  harness: Harness,
  username: string,
  { password = goodPassword, totpSecret }: Credentials = {},
): Promise<SignedInSession> {
  const result = await login(harness.auth, { username, password });
  const tokens =
    result.status === "authenticated"
      ? result.tokens
      : await verifyTotp(harness.auth, { tempToken: result.tempToken, code: nextCode(harness, totpSecret as Uint8Array) });
  const { sessionId } = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
  return { tokens, sessionId };
}

/** What a user had before a change: the session it was made from, another session, and the token version. */
export interface BeforeChange {
  userId: string;
  current: SignedInSession;
  other: SignedInSession;
  tokenVersion: number;
  /** How many events the harness held before the change. */
  eventCount: number;
}

/** Signs a user in twice, so that a change made from the first can be seen to end the second. */
export async function twoSessions(
  harness: Harness,
  userId: string,
  username: string,
  credentials: Credentials = {},
): Promise<BeforeChange> {
  const current = await signedInSession(harness, username, credentials);
  const other = await signedInSession(harness, username, credentials);
  const tokenVersion = (await harness.storage.users.findById(userId))?.tokenVersion as number;
  return { userId, current, other, tokenVersion, eventCount: harness.events.length };
}

/**
 * SE-2: after a change made from `current`, the other session's access and refresh tokens are
 * refused, the current session's both work (its refresh rotates), the token version did not
 * move, and `sessions.ended` said so with `reason`.
 */
export async function expectOnlyCurrentSessionLives(harness: Harness, before: BeforeChange, reason: string): Promise<void> {
  const { userId, current, other, tokenVersion, eventCount } = before;
  const ended = harness.events.slice(eventCount).filter((event) => event.type === "sessions.ended");
  expect(await outcome(verifyAccessToken(harness.auth, { token: other.tokens.accessToken }))).toBe(40101);
  expect(await outcome(refresh(harness.auth, { refreshToken: other.tokens.refreshToken }))).toBe(40101);
  expect((await verifyAccessToken(harness.auth, { token: current.tokens.accessToken })).sessionId).toBe(current.sessionId);
  const renewed = await refresh(harness.auth, { refreshToken: current.tokens.refreshToken });
  expect((await verifyAccessToken(harness.auth, { token: renewed.accessToken })).sessionId).toBe(current.sessionId);
  expect((await harness.storage.users.findById(userId))?.tokenVersion).toBe(tokenVersion);
  expect(ended).toEqual([expect.objectContaining({ userId, keptSessionId: current.sessionId, count: 1, reason })]);
}
