/** What a one-time challenge is for. */
export type ChallengeKind =
  | "totp_login"
  | "oauth_state"
  | "webauthn_login"
  | "webauthn_register"
  /** A passkey assertion that re-authenticates a signed-in session (STUP-2). */
  | "webauthn_reauthenticate"
  /** A passkey sign-up's registration, before the account exists: its username and user handle (PL-15). */
  | "webauthn_sign_up"
  /** The token of a reset link, and the record naming each user's newest one. */
  | "password_reset"
  | "password_reset_newest"
  /** The token of an address's verification link, and the record naming each user's newest one. */
  | "email_verification"
  | "email_verification_newest"
  /** The temporary token of a sign-in that must enrol a second factor first (40105; STUP-4). */
  | "second_factor_enrolment"
  /** A sign-in code and link sent by email, under the hash of the binding the asking client holds (PL-1). */
  | "email_sign_in";

/** A short-lived, single-use item: a temporary token, an OAuth state, a WebAuthn challenge. */
export interface ChallengeRecord {
  /** The SHA-256 of the value the client holds, never the value itself. */
  id: string;
  kind: ChallengeKind;
  userId: string | null;
  /** Flow-specific state; never a plaintext secret. */
  data: Record<string, unknown>;
  /** Attempts taken with {@link ChallengeStore.takeAttempt}. */
  attempts: number;
  createdAt: number;
  expiresAt: number;
}

/** Single-use challenges (ST-1). */
export interface ChallengeStore {
  /** Stores a challenge, replacing one with the same id. */
  put(challenge: ChallengeRecord): Promise<void>;
  /** The live challenge with this id and kind (both must match; ST-2), or null. */
  find(id: string, kind: ChallengeKind, now: number): Promise<ChallengeRecord | null>;
  /**
   * Atomically removes and returns the live challenge with this id and kind. Exactly one of
   * N concurrent callers receives it; expired ones are returned to nobody.
   */
  consume(id: string, kind: ChallengeKind, now: number): Promise<ChallengeRecord | null>;
  /**
   * Atomically counts one attempt against the live challenge with this id and kind, unless it
   * already holds `limit` attempts, and returns it with the new count; returns null, counting
   * nothing, when there is no such live challenge or its attempts are used up. Taken before the
   * attempt is evaluated, so of N concurrent attempts at most `limit` are evaluated (TMP-4).
   * A challenge whose attempts are used up can still be consumed by an attempt that took one.
   */
  takeAttempt(id: string, kind: ChallengeKind, limit: number, now: number): Promise<ChallengeRecord | null>;
  /**
   * Deletes at most `limit` expired challenges (`expiresAt <= now`), and may prune the store's
   * other expired rows here too, at most `limit` of each kind: throttling windows that ended,
   * sessions past their expiry and an earlier release's refresh tokens (the SQL storage and `memoryStorage` do).
   * Returns how many rows it deleted, all kinds together. Each call must be short, one bounded
   * statement per kind: core's sweep (`sweepExpired`, run by the auth instance's timer) calls it
   * again while it returns `limit` or more.
   */
  deleteExpired(now: number, limit: number): Promise<number>;
}
