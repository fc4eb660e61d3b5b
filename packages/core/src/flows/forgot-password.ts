import type { Auth } from "../auth.js";
import { deliverEmail, deliverLater, emailConfigOf } from "../email/deliver.js";
import { issueEmailToken, linkWithToken } from "../email/email-tokens.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { UserRecord } from "../storage/types.js";
import { takeAttempt } from "../throttle/throttle.js";
import { emailKeyOf, normalizeEmail } from "../users/email.js";
import { typedUsernameKey } from "../users/username.js";
import { optionalString } from "./input.js";

/** The input of {@link forgotPassword}: the account by its username or its verified address. */
export interface ForgotPasswordInput {
  username?: string;
  email?: string;
  /** The client address: its own budget, `throttle.passwordResetRequestsIp`. */
  ip?: string | undefined;
  /** The request's `Accept-Language`, which chooses a localized template. */
  acceptLanguage?: string | undefined;
}

/**
 * Asks for a reset link (`POST /auth/password/forgot`; PR-1). Answers the same `{}`, after the
 * same work, for every account state: known, unknown, disabled, without a verified address, of a
 * directory or without a password. Only after the answer, when the account is a local one with a
 * password, enabled, with a verified address, a link to `email.resetUrl` holding a new token (PR-2)
 * is sent to that address; nothing is sent otherwise, and a send that fails is reported, never
 * answered. Its budgets are its own (`throttle.passwordResetRequests` per username or address
 * asked for, `throttle.passwordResetRequestsIp` per client address): flooding it never spends the
 * account's sign-in budget (RL-5). An address finds only the account that holds it verified.
 *
 * @throws {AuthError} 40001 neither `username` nor `email`, 40002 both, or an `email` that is no
 *   address, 40400 email not configured, 42900 a budget spent.
 * @example
 * ```ts
 * await forgotPassword(auth, { email: "alice@example.com", ip });
 * ```
 */
export async function forgotPassword(auth: Auth, input: ForgotPasswordInput): Promise<Record<string, never>> {
  const config = emailConfigOf(auth);
  const username = optionalString(input.username, "username");
  const rawEmail = optionalString(input.email, "email");
  if (username !== undefined && rawEmail !== undefined) {
    throw new AuthError(ErrorCode.MalformedParameter, "Send the username or the email address, not both");
  }
  if (!username && !rawEmail) throw new AuthError(ErrorCode.MissingParameter, "username or email is required");
  const accountKey = rawEmail ? `email:${emailKeyOf(normalizeEmail(rawEmail))}` : usernameAccountKey(username as string);
  if (input.ip !== undefined) await takeAttempt(auth, "passwordResetRequestsIp", input.ip, input.ip);
  if (accountKey === null) return {};
  await takeAttempt(auth, "passwordResetRequests", accountKey, input.ip);
  deliverLater(auth, async () => {
    const user = await accountOf(auth, accountKey);
    if (!user || !canReset(user)) return;
    await deliverEmail(auth, {
      kind: "password_reset",
      to: user.email as string,
      userId: user.id,
      username: user.username,
      link: async () => linkWithToken(config.resetUrl, await issueEmailToken(auth, "password_reset", user)),
      acceptLanguage: input.acceptLanguage,
    });
  });
  return {};
}

function usernameAccountKey(username: string): string | null {
  const key = typedUsernameKey(username);
  return key === null ? null : `username:${key}`;
}

async function accountOf(auth: Auth, accountKey: string): Promise<UserRecord | null> {
  const separator = accountKey.indexOf(":");
  const key = accountKey.slice(separator + 1);
  return accountKey.startsWith("email:")
    ? auth.storage.users.findByVerifiedEmail(key)
    : auth.storage.users.findByUsernameKey(key);
}

/** Whether a reset link may go to the account: local, with a password, enabled, and a verified address (never without one) to send it to. */
function canReset(user: UserRecord): boolean {
  return user.source === "local" && user.passwordHash !== null && !user.disabled && user.emailVerified;
}
