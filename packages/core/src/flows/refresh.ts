import type { Auth } from "../auth.js";
import { sha256 } from "../crypto/random.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { type TokenSet, issueTokens } from "../tokens/issue-tokens.js";
import { requiredString } from "./input.js";

/** The input of {@link refresh}. */
export interface RefreshInput {
  refreshToken: string;
  ip?: string;
}

const invalidToken = () => new AuthError(ErrorCode.InvalidToken);

/**
 * Exchanges a refresh token for a new access token and a new refresh token
 * (`POST /auth/refresh`). The presented token is spent by one atomic write, so of N parallel
 * refreshes exactly one succeeds (RT-3); there is no grace window. A token presented after it
 * was spent is reuse: the whole session is revoked, its newest token included, and
 * `refresh_token.reused` is emitted (RT-2). Refresh never moves the session's absolute expiry
 * (RT-4), and a session whose user changed token version, or was disabled, ends (TV-2).
 *
 * @throws {AuthError} 40101 for any invalid, expired, spent or revoked token.
 * @example
 * ```ts
 * const { accessToken, refreshToken } = await refresh(auth, { refreshToken: stored });
 * ```
 */
export async function refresh(auth: Auth, input: RefreshInput): Promise<TokenSet> {
  const presented = requiredString(input.refreshToken, "refreshToken");
  const now = auth.now();
  const result = await auth.storage.sessions.spendRefreshToken(sha256(presented), now);
  if (result.outcome === "unknown") throw invalidToken();
  const { sessionId, userId } = result.token;
  if (result.outcome === "already_spent") {
    auth.emit({ type: "refresh_token.reused", userId, sessionId, at: now, ip: input.ip });
    await revokeSession(auth, userId, sessionId, "refresh_token_reused");
    throw invalidToken();
  }
  if (result.token.expiresAt <= now) throw invalidToken();
  const session = await auth.storage.sessions.findSession(sessionId);
  if (!session || session.revokedAt !== null || session.expiresAt <= now || session.userId !== userId) throw invalidToken();
  const user = await auth.storage.users.findById(userId);
  if (!user || user.disabled || user.tokenVersion !== session.tokenVersion) {
    await revokeSession(auth, userId, sessionId, user?.disabled ? "user_disabled" : "token_version_changed");
    throw invalidToken();
  }
  const tokens = await issueTokens(auth, user, session);
  auth.emit({ type: "token.refreshed", userId, sessionId, at: now, ip: input.ip });
  return tokens;
}

/** Revokes one session and reports it; a session already revoked is left as it is. */
export async function revokeSession(
  auth: Auth,
  userId: string,
  sessionId: string,
  reason: "logout" | "refresh_token_reused" | "token_version_changed" | "user_disabled",
): Promise<void> {
  const now = auth.now();
  auth.tokenStateCache.delete(sessionId);
  if (await auth.storage.sessions.revokeSession(sessionId, now)) {
    auth.emit({ type: "session.revoked", userId, sessionId, reason, at: now });
  }
}
