import type { UserRecord } from "./user-store.js";

/**
 * How a session was proven, in Portcullis's own words: the RFC 8176 values `pwd` (a password),
 * `otp` (a TOTP code), `hwk` (a device-bound passkey), `swk` (a synced passkey), `user` (its user
 * verification) and `fed` (a provider), with `rc` for a recovery code and `ldap` for a directory
 * password of older releases, `mfa` for a second factor a provider asserted (STUP-5; beside
 * `fed`, with the provider's own `pwd`, `otp`, `hwk`, `swk`), and `email` for a one-time code or
 * link sent to a verified address (PL-1), a first factor only. Access tokens carry them as RFC 8176
 * values (`amrClaim`: `rc` is `otp`, `ldap` is `pwd`, and `mfa` is added when two factors were
 * proven), but for `email`, which no RFC 8176 value fits and which the claim carries as `email`.
 */
export type AuthMethod = "pwd" | "otp" | "rc" | "hwk" | "swk" | "user" | "fed" | "ldap" | "mfa" | "email";

/** A signed-in session: one login, and the refresh token that carries it on, rotated at each refresh. */
export interface SessionRecord {
  id: string;
  userId: string;
  /** The user's token version when the session began (TV-2). */
  tokenVersion: number;
  /** How the sign-in or re-authentication that began the session was proven (STUP-1); never changed after. */
  amr: AuthMethod[];
  /**
   * When `amr` was proven: the sign-in or re-authentication that began the session (a
   * re-authentication begins a new session: STUP-2); the access tokens' `auth_time` (STUP-1).
   */
  authTime: number;
  createdAt: number;
  /** Never moved by refresh (RT-4). */
  expiresAt: number;
  revokedAt: number | null;
  /** When the session began or last refreshed its tokens; access-token checks never move it. */
  lastUsedAt: number;
  /** The User-Agent it was last used with, cut to 256 characters; shown to the user, never used for a decision. */
  userAgent: string | null;
  /** The client address it was last used from, truncated as configured (IPv4 /24, IPv6 /48 by default). */
  address: string | null;
  /**
   * The SHA-256 of the one refresh token the session accepts now (RT-1); the token names the
   * session and its generation, so a refresh finds the session by its id. Null when it accepts
   * none: a session of an earlier release left with no unspent token.
   */
  refreshHash: string | null;
  /** How many refreshes the session has had: the generation its current refresh token names (0 at sign-in). */
  refreshGeneration: number;
  /** When the current refresh token stops being accepted unused (its idle expiry); never after `expiresAt` (RT-4). */
  refreshExpiresAt: number;
  /**
   * The organization active in the session (OR-7), whose id and the member's roles there its
   * access tokens carry (`org`, `org_roles`); null or absent for none. Set by
   * {@link OrganizationStore.setActiveOrganization}; cleared when the membership or the
   * organization ends, or the organization's rules change.
   */
  activeOrgId?: string | null;
  /**
   * The administrator acting as the user in this session (IMP-1), or null or absent for the
   * user's own. Its access tokens carry `act: { sub }` (RFC 8693); it cannot change credentials or
   * second factors, nor re-authenticate, and it ends at its fixed `expiresAt`.
   */
  impersonatorId?: string | null;
}

/** Where a session was last used from: what {@link SessionStore.rotateRefresh} records. */
export interface SessionUse {
  userAgent: string | null;
  address: string | null;
}

/**
 * A refresh token of an earlier release, kept in a table of its own (one row per token, spent or
 * not) until it expires; what {@link SessionStore.findLegacyRefreshToken} reads. Migration 5 of
 * the SQL storage made each live session hold its newest unspent one as its current token.
 */
export interface LegacyRefreshToken {
  hash: string;
  sessionId: string;
  userId: string;
  createdAt: number;
  expiresAt: number;
  /** When it was exchanged before the migration; a token exchanged then is reuse (RT-2). */
  spentAt: number | null;
}

/** What {@link SessionStore.rotateRefresh} is asked to do: one refresh's one write. */
export interface RefreshRotation {
  sessionId: string;
  /** The SHA-256 of the presented refresh token: the session must hold it as its current one. */
  hash: string;
  now: number;
  /** The SHA-256 of the token that replaces it. */
  nextHash: string;
  /** The generation the replacement names: the session's `refreshGeneration` after the write. */
  nextGeneration: number;
  /** The replacement's idle lifetime in milliseconds: it expires at `now + idleMs`, or with its session if that is sooner (RT-4). */
  idleMs: number;
  /** Where the session is used from, recorded on it (`lastUsedAt`, `userAgent`, `address`) by the same write. */
  use: SessionUse;
}

/**
 * What {@link SessionStore.rotateRefresh} did. `session` and `user` are as they were before the
 * write, `totpEnabled` whether the user's second factor was enabled then.
 */
export type RotationResult =
  | { outcome: "rotated"; session: SessionRecord; user: UserRecord; totpEnabled: boolean }
  /** Nothing written: the session is unknown, holds another token, or may not refresh (see {@link SessionStore.rotateRefresh}). */
  | { outcome: "refused" };

/**
 * What {@link SessionStore.findTokenState} reads for the check of an access token (TV-2): a
 * session, and the standing of the user it belongs to.
 */
export interface TokenState {
  session: Pick<SessionRecord, "userId" | "revokedAt" | "expiresAt" | "activeOrgId">;
  /** The session's user (`session.userId`), or null when no user has that id any more. */
  user: Pick<UserRecord, "tokenVersion" | "disabled"> | null;
  /**
   * The user's roles in the session's active organization, read with the rest (OR-7); null or
   * absent when the session has none active or the user is no longer its member. A store without
   * organizations leaves it out.
   */
  orgRoles?: string[] | null;
}

/** Sessions and their refresh tokens. */
export interface SessionStore {
  /** Inserts a new session; its id is random, so it never meets an existing one. */
  createSession(session: SessionRecord): Promise<void>;
  /** The session with this id, revoked or expired ones included (callers check both), or null. */
  findSession(id: string): Promise<SessionRecord | null>;
  /**
   * Optional: the session with this id (revoked or expired ones included) and its user's token
   * version and disabled flag, in one read (one statement on SQL), or null for an unknown session.
   * What every protected request asks when `tokenStateCacheSeconds` does not answer it. A store
   * without it is served by {@link findSession} and {@link UserStore.findById}, sent together.
   */
  findTokenState?(sessionId: string): Promise<TokenState | null>;
  /**
   * Marks a session revoked, by one conditional write; returns false if it was unknown or already
   * revoked. Of N concurrent calls on one live session exactly one gets true: a re-authentication
   * goes on only when its call ended the session (STUP-2, ASVS 7.2.4).
   */
  revokeSession(id: string, now: number): Promise<boolean>;
  /**
   * Moves a live session to the user's new token version: the session a directory user is
   * refreshing carries on when the refresh changed their roles and raised the version. Returns
   * false, changing nothing, when the session is unknown or revoked.
   */
  setTokenVersion(id: string, tokenVersion: number): Promise<boolean>;
  /**
   * Revokes every session of a user not yet revoked, but the one with the id `exceptSessionId`
   * when given (SE-2: the session that made a change goes on), in one atomic write; returns how
   * many it revoked. Of concurrent calls each session is revoked by one, so their counts add up
   * to the sessions there were (SE-3). An `exceptSessionId` that is not this user's keeps nothing.
   */
  revokeUserSessions(userId: string, now: number, exceptSessionId?: string): Promise<number>;
  /**
   * Revokes every live session of every user (not revoked, `expiresAt` after `now`) at `now`, the
   * incident response of STUP-6; returns how many it revoked. Each session is revoked by one
   * conditional write (`revoked_at IS NULL`), so the counts of concurrent calls add up to the
   * sessions there were. On a large store it must stay bounded: writes of a bounded number of
   * sessions each (the SQL store: 10,000 ids of the primary key at a time), never one statement
   * that holds every row's lock for as long as the table takes. Sessions that begin while it runs
   * may be left live: they are sign-ins after the call.
   */
  revokeAll(now: number): Promise<number>;
  /**
   * The user's live sessions (not revoked, `expiresAt` after `now`), newest first by `createdAt`,
   * at most `limit`. Sessions that began in the same millisecond come in one fixed order (by id),
   * the same on every call, so a shorter `limit` reads the start of a longer one: the cap on
   * sessions per account relies on it under concurrent sign-ins (STUP-8).
   */
  listByUser(userId: string, now: number, limit: number): Promise<SessionRecord[]>;
  /**
   * A refresh's one write, one conditional UPDATE of the session by its id (RT-3): only when the
   * session holds `hash` as its current refresh token, is not revoked, has not expired
   * (`expiresAt`) nor has its token (`refreshExpiresAt`), and its user exists, is not disabled and
   * has the session's token version (TV-2), the session takes `nextHash` as its token, at
   * `nextGeneration`, idle-valid until `now + idleMs` but never past `expiresAt` (RT-4), and records
   * `use` at `now` as where it was last used. Of N concurrent calls with one `hash` at most one
   * rotates; the others, and any call whose condition fails, write nothing and answer `refused`.
   */
  rotateRefresh(rotation: RefreshRotation): Promise<RotationResult>;
  /**
   * Optional, for a store whose earlier releases kept refresh tokens in a table of their own: the token
   * with this hash there, spent or not, or null. A store that never had such tokens leaves it out.
   */
  findLegacyRefreshToken?(hash: string): Promise<LegacyRefreshToken | null>;
}
