import type { Auth } from "../auth.js";
import { revokeSession } from "./sessions.js";

/** How many sessions beyond the cap one read of the list brings; more are read page by page. */
const overCapPage = 100;

/**
 * Ends the user's live sessions beyond `sessions.maxPerUser` (STUP-8, ASVS 7.1.2), oldest first,
 * each reported as `session.revoked` with reason `session_limit`; nothing without a cap. Called
 * after a sign-in stored its session.
 *
 * Holds under concurrent sign-ins without a transaction: each caller lists after storing its own
 * session and ends every session ranked past the cap, by `listByUser`'s order (newest first by
 * `createdAt`, then by id, the same order on every call). The newest `maxPerUser` are never past
 * the cap in any list, so they are never ended, and the last sign-in's list sees every session,
 * so no more than `maxPerUser` are left. `revokeSession` is true for one caller only, so each
 * ended session is reported once. A sign-in whose session has as many newer ones (sign-ins in
 * the same millisecond at the cap, or clocks apart between instances) has its own session ended.
 */
export async function endSessionsOverCap(auth: Auth, userId: string): Promise<void> {
  const cap = auth.config.sessions.maxPerUser;
  if (cap === null) return;
  const limit = cap + overCapPage;
  for (;;) {
    const live = await auth.storage.sessions.listByUser(userId, auth.now(), limit);
    let endedAny = false;
    for (const session of live.slice(cap).reverse()) {
      if (await revokeSession(auth, userId, session.id, "session_limit")) endedAny = true;
    }
    // A full page may hide more beyond it; a page whose sessions another sign-in ended leaves the rest to that one.
    if (live.length < limit || !endedAny) return;
  }
}
