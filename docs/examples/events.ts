import type { Auth } from "@portcullis/core";

/**
 * Writes every Portcullis event to `write` as one JSON line, for an audit log. Events never
 * hold a password, code or token, so they can be stored as they are. Returns the function
 * that unsubscribes.
 */
export function subscribeAuditLog(auth: Auth, write: (line: string) => void): () => void {
  return auth.events.on("*", (event) => write(JSON.stringify(event)));
}

/** Calls `alert` when a spent refresh token is presented again: a sign of a stolen token. */
export function alertOnRefreshTokenReuse(auth: Auth, alert: (userId: string, sessionId: string) => void): () => void {
  return auth.events.on("refresh_token.reused", (event) => alert(event.userId, event.sessionId));
}

/** Counts failed sign-ins and throttled attempts, e.g. for a metrics gauge. */
export function countFailures(auth: Auth): { failures: number; throttled: number } {
  const counts = { failures: 0, throttled: 0 };
  auth.events.on("login.failed", () => {
    counts.failures += 1;
  });
  auth.events.on("second_factor.failed", () => {
    counts.failures += 1;
  });
  auth.events.on("throttled", () => {
    counts.throttled += 1;
  });
  return counts;
}
