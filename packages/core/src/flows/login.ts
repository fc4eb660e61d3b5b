import type { Auth } from "../auth.js";
import { type EnabledDirectory, enabledDirectory, signInWithDirectory } from "../directory/sign-in.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { UserRecord } from "../storage/types.js";
import { budgetOfClient, takeFailureAttempt } from "../throttle/failure-budget.js";
import { takeAttempt } from "../throttle/throttle.js";
import { typedUsernameKey, usernameKeyOf } from "../users/username.js";
import { optionalString, requiredString } from "./input.js";
import type { LoginResult } from "./login-result.js";
import { completeFirstFactor } from "./pending-login.js";

export type { LoginResult } from "./login-result.js";

/** The input of {@link login}. */
export interface LoginInput {
  username: string;
  password: string;
  /**
   * `"local"`: local accounts only. `"directory"`: the directory only. Absent: local accounts,
   * or, when the directory policy's `loginOrder` is `directory-first`, the directory and then
   * local accounts for a username the directory has no entry for.
   */
  provider?: string;
  /**
   * The device token an earlier sign-in of this client gave it (`deviceToken` of the token set,
   * or the device cookie): its failures then spend a budget of its own, which failures from
   * other clients cannot use up (RL-5).
   */
  deviceToken?: string;
  /** The client address, for per-address throttling and events. */
  ip?: string;
  /** The request's `User-Agent`, kept with the new session (shown in the sessions list). */
  userAgent?: string;
}

/** The answer to every credential failure, whatever its reason (EN-1). */
export const invalidCredentials = () => new AuthError(ErrorCode.AuthenticationFailed, "Invalid username or password");

/** The directory a login is to try first, per its `provider`; null for local accounts only. */
async function directoryFor(auth: Auth, provider: string | undefined): Promise<EnabledDirectory | null> {
  if (provider === "local") return null;
  if (provider === undefined) return enabledDirectory(auth, (policy) => policy.loginOrder === "directory-first");
  if (provider !== "directory") throw new AuthError(ErrorCode.NotFound, "No such login provider");
  const enabled = await enabledDirectory(auth);
  if (!enabled) throw new AuthError(ErrorCode.NotFound, "Directory login is not enabled");
  return enabled;
}

/**
 * Signs a user in with a username and password, against local accounts or the directory
 * (`provider`, and the directory policy's `loginOrder`).
 *
 * The client address and the account each give up one attempt before anything is checked
 * (RL-1, RL-4); the account's counter is the same for local and directory logins, and a client
 * with a device token of the account spends its own budget instead (RL-5). A directory entry
 * found under another spelling than the one typed gives up an attempt of its own account before
 * the password is tried (RL-1). A username that can be nobody's (over 128 characters, not
 * well-formed Unicode, or not a stable identifier: spaces around it, a NUL, an invisible code
 * point) is refused like an unknown user, takes no account counter, and reaches neither storage
 * nor the directory. An unknown user costs
 * one argon2id verification against a dummy hash (EN-2) and fails exactly like a wrong
 * password (EN-1), as do a directory's unknown user, wrong password and ambiguous username; a
 * disabled account, and a directory user in no mapped group, are told so only after the
 * password was proven. When TOTP is on, the result is a temporary token, never a session
 * (EN-3, TMP-1). A hash made with older parameters, or imported from another system, is
 * re-hashed to argon2id (PW-1, IM-1).
 *
 * @throws {AuthError} 40001/40002 bad input, 40100 bad credentials, 40300 disabled or no directory role,
 *   40400 directory login off or an unknown provider, 40900 a directory username held by another account,
 *   42900 throttled, 50300 the directory is unavailable.
 * @example
 * ```ts
 * const result = await login(auth, { username: "alice", password: "a long passphrase" });
 * if (result.status === "totp_required") askForCode(result.tempToken);
 * else useTokens(result.tokens);
 * ```
 */
export async function login(auth: Auth, input: LoginInput): Promise<LoginResult> {
  const username = requiredString(input.username, "username");
  const password = requiredString(input.password, "password");
  const provider = optionalString(input.provider, "provider");
  const deviceToken = optionalString(input.deviceToken, "deviceToken");
  const directory = await directoryFor(auth, provider);
  const usernameKey = typedUsernameKey(username);
  if (input.ip !== undefined) await takeAttempt(auth, "ip", input.ip, input.ip);
  if (usernameKey !== null) await takeFailureAttempt(auth, budgetOfClient(auth, usernameKey, deviceToken), input.ip);

  if (directory && usernameKey !== null) {
    const outcome = await signInWithDirectory(auth, directory, {
      username,
      password,
      deviceToken,
      ip: input.ip,
      userAgent: input.userAgent,
      async beforeBind(entry) {
        const entryKey = usernameKeyOf(entry.username);
        if (entryKey !== usernameKey) await takeFailureAttempt(auth, budgetOfClient(auth, entryKey, deviceToken), input.ip);
      },
    });
    if (typeof outcome === "object") return outcome;
    // Only a username the directory has no entry for goes on to local accounts, and only under directory-first.
    if (outcome !== "no_entry" || provider === "directory") {
      auth.emit({ type: "login.failed", userId: null, reason: "invalid_credentials", at: auth.now(), ip: input.ip });
      throw invalidCredentials();
    }
  }

  const { user, proven } = await authenticatePassword(auth, usernameKey, password);
  if (!user || !proven) {
    auth.emit({ type: "login.failed", userId: user?.id ?? null, reason: "invalid_credentials", at: auth.now(), ip: input.ip });
    throw invalidCredentials();
  }

  return completeFirstFactor(auth, user, ["pwd"], input.ip, { deviceToken, userAgent: input.userAgent });
}

/**
 * Looks the account up and checks the password as typed: `proven` only when this is its local
 * password. `auth.passwords.verify` makes every outcome cost one argon2id verification at the
 * configured parameters (a dummy one without a local password; EN-2), and none for a password
 * that can never match (PW-2, PW-4). Re-hashes an outdated or imported hash (PW-1, IM-1) with a
 * compare-and-set, so a password changed meanwhile stays; the user returned holds the hash stored.
 */
export async function authenticatePassword(
  auth: Auth,
  usernameKey: string | null,
  password: string,
): Promise<{ user: UserRecord | null; proven: boolean }> {
  const user = usernameKey === null ? null : await auth.storage.users.findByUsernameKey(usernameKey);
  const localHash = user?.source === "local" ? user.passwordHash : null;
  const proven = await auth.passwords.verify(localHash, password);
  if (!proven || !user || localHash === null) return { user, proven: false };
  if (auth.passwords.needsRehash(localHash)) {
    const passwordHash = await auth.passwords.hash(password);
    if (await auth.storage.users.replacePasswordHash(user.id, localHash, passwordHash, auth.now())) {
      return { user: { ...user, passwordHash }, proven: true };
    }
  }
  return { user, proven: true };
}
