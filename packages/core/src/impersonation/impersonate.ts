import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { requiredString } from "../flows/input.js";
import { type ReauthenticationProof, requireRecentAuthentication } from "../flows/reauthenticate.js";
import type { SessionRecord, UserRecord } from "../storage/types.js";
import { type TokenSet, beginSession } from "../tokens/issue-tokens.js";
import type { SessionClient } from "../users/session-use.js";
import { revokeSession } from "../users/sessions.js";
import { signedInUser } from "../users/signed-in-user.js";

/** The input of {@link impersonateUser}. */
export interface ImpersonateInput extends ReauthenticationProof, SessionClient {
  /** The administrator (the route asks `adminRole` of their access token). */
  adminUserId: string;
  /** The user to act as. */
  userId: string;
}

/** What {@link impersonateUser} answers: the impersonated session's tokens, and when it ends. */
export interface ImpersonationTokens extends TokenSet {
  impersonation: {
    /** The administrator acting. */
    by: string;
    /** When the session ends, epoch milliseconds: never later, whatever refreshes it has. */
    expiresAt: number;
  };
}

/** Whether impersonation is on: its routes answer 40400 otherwise. */
function requireImpersonationEnabled(auth: Auth): void {
  if (!auth.config.impersonation.enabled) throw new AuthError(ErrorCode.NotFound, "Impersonation is not enabled");
}

/** Whether `user` may impersonate: enabled, holding `adminRole` and `impersonation.role` (the `impersonate` permission). */
export function mayImpersonate(auth: Auth, user: UserRecord | null): user is UserRecord {
  return (
    user !== null &&
    !user.disabled &&
    user.roles.includes(auth.config.adminRole) &&
    user.roles.includes(auth.config.impersonation.role)
  );
}

/**
 * Begins a session in which an administrator acts as a user, for support (IMP-1;
 * `POST /auth/admin/users/:id/impersonate`). The administrator holds `adminRole` and
 * `impersonation.role`, and re-authenticates (STUP-3). The user is enabled, is not the
 * administrator, and holds neither role, so no one gains an administrator's powers by it.
 *
 * The new session is the user's, marked with its administrator: its access tokens carry
 * `act: { sub: <administrator> }` (RFC 8693 §4.1; `AccessContext.actor`), the user's sessions list
 * shows it with who acts, it ends `impersonation.duration` after it began (refreshes never extend
 * it), it proves no factor (`amr` empty, so a route asking a second factor refuses it), and it can
 * neither re-authenticate nor change a credential or second factor (IMP-2). The administrator's own
 * session goes on. Emits `impersonation.started`.
 *
 * @throws {AuthError} 40400 impersonation off or no such user, 40300 the administrator lacks
 *   `impersonation.role`, the user is the administrator, disabled, or holds either role;
 *   40001/40100/40103 re-authentication.
 * @example
 * ```ts
 * const { accessToken } = await impersonateUser(auth, { adminUserId, sessionId, userId: "u_42", password });
 * ```
 */
export async function impersonateUser(auth: Auth, input: ImpersonateInput): Promise<ImpersonationTokens> {
  requireImpersonationEnabled(auth);
  const admin = await signedInUser(auth, input.adminUserId);
  const userId = requiredString(input.userId, "userId");
  if (!mayImpersonate(auth, admin)) {
    throw new AuthError(ErrorCode.Forbidden, `Impersonating needs the ${auth.config.impersonation.role} role`);
  }
  await requireRecentAuthentication(auth, admin, input);
  const user = await auth.storage.users.findById(userId);
  if (user === null) throw new AuthError(ErrorCode.NotFound, "No such user");
  if (user.id === admin.id) throw new AuthError(ErrorCode.Forbidden, "An administrator cannot impersonate themselves");
  if (user.disabled) throw new AuthError(ErrorCode.Forbidden, "A disabled account cannot be impersonated");
  if (user.roles.includes(auth.config.adminRole) || user.roles.includes(auth.config.impersonation.role)) {
    throw new AuthError(ErrorCode.Forbidden, "An administrator cannot be impersonated");
  }
  const now = auth.now();
  const expiresAt = now + auth.config.impersonation.durationSeconds * 1000;
  const { session, tokens } = await beginSession(auth, user, {
    amr: [],
    authTime: now,
    expiresAt,
    client: { ip: input.ip, userAgent: input.userAgent },
    impersonatorId: admin.id,
  });
  auth.emit({
    type: "impersonation.started",
    userId: user.id,
    by: admin.id,
    sessionId: session.id,
    expiresAt,
    at: now,
    ip: input.ip,
  });
  return { ...tokens, impersonation: { by: admin.id, expiresAt } };
}

/**
 * Ends the impersonated session of the request (`POST /auth/impersonation/end`): what the
 * administrator's "stop acting as" button calls. Emits `impersonation.ended`.
 *
 * @throws {AuthError} 40400 impersonation off, 40300 the session is not an impersonated one, 40101 it is no longer live.
 */
export async function endImpersonation(auth: Auth, input: { userId: string; sessionId: string }): Promise<{ ended: true }> {
  requireImpersonationEnabled(auth);
  const userId = requiredString(input.userId, "userId");
  const session = await auth.storage.sessions.findSession(requiredString(input.sessionId, "sessionId"));
  if (session === null || session.userId !== userId) throw new AuthError(ErrorCode.InvalidToken);
  const by = session.impersonatorId;
  if (by === undefined || by === null) throw new AuthError(ErrorCode.Forbidden, "This session is not an impersonated one");
  if (!(await revokeSession(auth, userId, session.id, "impersonation_ended"))) throw new AuthError(ErrorCode.InvalidToken);
  auth.emit({ type: "impersonation.ended", userId, by, sessionId: session.id, at: auth.now() });
  return { ended: true };
}

/**
 * Refuses (40300) what an impersonated session may not do (IMP-2): re-authenticate, or change a
 * credential or second factor. Every such change asks a re-authentication, whose checks read the
 * request's session and call this with it. Emits `impersonation.refused`. Null, or a session of
 * the user's own, passes.
 */
export function refuseImpersonated(auth: Auth, session: SessionRecord | null, action: string): void {
  const by = session?.impersonatorId;
  if (session === null || by === undefined || by === null) return;
  auth.emit({ type: "impersonation.refused", userId: session.userId, by, sessionId: session.id, action, at: auth.now() });
  throw new AuthError(
    ErrorCode.Forbidden,
    "An impersonated session cannot re-authenticate or change credentials or second factors",
  );
}

/**
 * Ends an impersonated session at its refresh when its administrator may no longer impersonate
 * (removed, disabled, or without `adminRole` or `impersonation.role`, or impersonation turned
 * off): 40101 (IMP-4). A session of the user's own passes without a read.
 */
export async function endUnlessImpersonatorStands(auth: Auth, session: SessionRecord): Promise<void> {
  const by = session.impersonatorId;
  if (by === undefined || by === null) return;
  const impersonator = await auth.storage.users.findById(by);
  if (auth.config.impersonation.enabled && mayImpersonate(auth, impersonator)) return;
  if (await revokeSession(auth, session.userId, session.id, "impersonation_ended")) {
    auth.emit({ type: "impersonation.ended", userId: session.userId, by, sessionId: session.id, at: auth.now() });
  }
  throw new AuthError(ErrorCode.InvalidToken);
}
