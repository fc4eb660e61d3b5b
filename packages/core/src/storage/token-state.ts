import type { Storage, TokenState } from "./types.js";

/**
 * The state an access token's check reads (TV-2): through `storage.sessions.findTokenState`
 * when the store has it, one read; otherwise the session by `sessionId` and the user by
 * `userId` (the token's), sent together, then the user's membership of the session's active
 * organization when it has one (OR-7). Where the session is another user's, `user` is null,
 * as it is for a user that no longer exists: the token is not current either way.
 */
export function findTokenState(storage: Storage, sessionId: string, userId: string): Promise<TokenState | null> {
  const { sessions } = storage;
  if (sessions.findTokenState) return sessions.findTokenState(sessionId);
  return Promise.all([sessions.findSession(sessionId), storage.users.findById(userId)]).then(async ([session, user]) => {
    if (session === null) return null;
    const orgId = session.activeOrgId ?? null;
    const membership = orgId === null ? null : await storage.organizations?.findMembership(orgId, session.userId);
    return { session, user: session.userId === userId ? user : null, orgRoles: membership?.roles ?? null };
  });
}
