import type { Auth } from "../auth.js";
import { randomId } from "../crypto/ids.js";
import { organizationAtSignIn, organizationOfSession } from "../organizations/session-organization.js";
import { amrClaim, authTimeOf } from "../step-up/amr.js";
import { sweepNowAndThen } from "../storage/sweep.js";
import type { AuthMethod, SessionRecord, UserRecord } from "../storage/types.js";
import type { FieldValue } from "../user-fields/field.js";
import { publicFieldsOf, tokenFieldsClaim } from "../user-fields/views.js";
import { type PublicUser, withHookFields } from "../users/public-user.js";
import { endSessionsOverCap } from "../users/session-cap.js";
import { type SessionClient, sessionUseOf } from "../users/session-use.js";
import { type ActiveOrganization, signAccessToken } from "./access-token.js";
import { firstRefreshToken } from "./refresh-token.js";

export type { PublicUser } from "../users/public-user.js";

/** The `data` of every response that completes a sign-in (contract: Bodies). */
export interface TokenSet {
  accessToken: string;
  refreshToken: string;
  tokenType: "Bearer";
  /** Seconds until the access token expires. */
  expiresIn: number;
  user: PublicUser;
  /**
   * On an answer that completes a sign-in (not a refresh): the device token of this client for
   * this account, which later sign-ins send back so that their failures spend a budget of their
   * own (RL-5). Also set as an HttpOnly cookie for browsers.
   */
  deviceToken?: string;
  /**
   * With passkeys on, on an answer that completes a sign-in: whether to offer the user a passkey
   * (a password or email sign-in of an account with none that has not declined lately; PL-13).
   */
  offerPasskey?: boolean;
}

/**
 * The public view of a user (token sets, `/me`, the admin views): the contract's fields, with the
 * additional fields not declared `inMe: false` and those of the `publicUser` hook of `createAuth`
 * added; the contract's fields win over both, the declared fields over the hook's.
 */
export async function publicUser(auth: Auth, user: UserRecord): Promise<PublicUser> {
  const totp = await auth.storage.totp.get(user.id);
  return publicUserOf(auth, user, totp?.enabled === true);
}

/** {@link publicUser} for a caller that already knows whether the user's TOTP is enabled. */
function publicUserOf(auth: Auth, user: UserRecord, totpEnabled: boolean): Promise<PublicUser> {
  const fields = {
    ...publicFieldsOf(auth, user),
    id: user.id,
    username: user.username,
    roles: [...user.roles],
    totpEnabled,
    email: user.email,
    emailVerified: user.emailVerified,
    createdAt: user.createdAt,
  };
  return withHookFields(fields, auth.publicUserHook);
}

/**
 * The token set of a session whose refresh token, `refreshToken`, is already stored (a sign-in
 * stores it with the session, a refresh with the spend of the old one): signs the access token.
 */
export async function rotatedTokenSet(
  auth: Auth,
  user: UserRecord,
  session: SessionRecord,
  refreshToken: string,
  totpEnabled: boolean,
): Promise<TokenSet> {
  sweepNowAndThen(auth, auth.now());
  const [view, org] = await Promise.all([
    publicUserOf(auth, user, totpEnabled),
    session.activeOrgId ? organizationOfSession(auth, user.id, session.activeOrgId) : null,
  ]);
  return tokenSetOf(auth, user, session, refreshToken, view, org);
}

async function tokenSetOf(
  auth: Auth,
  user: UserRecord,
  session: SessionRecord,
  refreshToken: string,
  view: PublicUser,
  org: ActiveOrganization | null,
): Promise<TokenSet> {
  const accessToken = await accessTokenOf(auth, user, session, org);
  return { accessToken, refreshToken, tokenType: "Bearer", expiresIn: auth.config.ttl.access, user: view };
}

/**
 * Signs an access token of `session` for `user`, now: its `amr` and `auth_time` are the session's
 * (STUP-1), its `org` and `org_roles` those of `org`, the session's active organization (OR-7), and
 * its `act` the administrator acting in an impersonated session (IMP-1).
 */
export function accessTokenOf(
  auth: Auth,
  user: UserRecord,
  session: SessionRecord,
  org: ActiveOrganization | null,
): Promise<string> {
  const issuedAt = Math.floor(auth.now() / 1000);
  return signAccessToken(auth.keys, {
    iss: auth.config.issuer,
    aud: auth.config.audience,
    sub: user.id,
    iat: issuedAt,
    exp: issuedAt + auth.config.ttl.access,
    jti: randomId(auth),
    sid: session.id,
    tv: user.tokenVersion,
    roles: [...user.roles],
    amr: amrClaim(session.amr),
    auth_time: Math.floor(authTimeOf(session) / 1000),
    ...fieldsClaim(auth, user),
    ...(org === null ? {} : { org: org.id, org_roles: [...org.roles] }),
    ...(session.impersonatorId ? { act: { sub: session.impersonatorId } } : {}),
  });
}

/** The `fields` claim of `user`'s tokens, or nothing when no field is declared `inToken`. */
function fieldsClaim(auth: Auth, user: UserRecord): { fields?: Record<string, FieldValue> } {
  const fields = tokenFieldsClaim(auth, user);
  return fields === undefined ? {} : { fields };
}

/** What {@link beginSession} makes a new session of. */
export interface NewSession {
  /** How it was proven (STUP-1). */
  amr: AuthMethod[];
  /** When `amr` was proven: the access tokens' `auth_time`. */
  authTime: number;
  /** Its absolute end, never moved by a refresh (RT-4). */
  expiresAt: number;
  /** The request that begins it: its `User-Agent` and address, as the sessions list shows them. */
  client: SessionClient;
  /** The organization active in it from the start, with the member's roles (OR-7); none when absent. */
  org?: ActiveOrganization | null;
  /** The administrator acting as the user in it (IMP-1); none when absent. */
  impersonatorId?: string | null;
}

/**
 * Stores a new session of `user` at its token version, begun now with a random id, and mints its
 * first tokens: the part a sign-in and a re-authentication share (PW-7, STUP-2). Emits nothing
 * and ends no other session: each caller says why the session began.
 */
export async function beginSession(
  auth: Auth,
  user: UserRecord,
  { amr, authTime, expiresAt, client, org = null, impersonatorId = null }: NewSession,
): Promise<{ session: SessionRecord; tokens: TokenSet }> {
  const now = auth.now();
  const id = randomId(auth);
  const refresh = firstRefreshToken(auth, id);
  const session: SessionRecord = {
    id,
    userId: user.id,
    tokenVersion: user.tokenVersion,
    amr,
    authTime,
    createdAt: now,
    expiresAt,
    revokedAt: null,
    lastUsedAt: now,
    ...sessionUseOf(auth, client),
    refreshHash: refresh.hash,
    refreshGeneration: refresh.generation,
    refreshExpiresAt: Math.min(now + auth.config.ttl.refreshIdle * 1000, expiresAt),
    activeOrgId: org?.id ?? null,
    impersonatorId,
  };
  await auth.storage.sessions.createSession(session);
  sweepNowAndThen(auth, now);
  return { session, tokens: await tokenSetOf(auth, user, session, refresh.value, await publicUser(auth, user), org) };
}

/**
 * Begins a new session for a user whose every required factor was just proven, and mints its
 * first tokens. Nothing from before the login (temporary token, ceremony id) becomes part of
 * it (PW-7). The session records the client's `User-Agent` and address as the sessions list
 * shows them (see `sessionUseOf`), never used for a decision. With `sessions.maxPerUser`, the
 * account's oldest sessions beyond it end (STUP-8). Its `authTime` is `authTime` when the first
 * factor was proven before now (a provider's `auth_time`: STUP-5), else now.
 */
export async function startSession(
  auth: Auth,
  user: UserRecord,
  amr: AuthMethod[],
  client: SessionClient = {},
  authTime?: number,
): Promise<TokenSet> {
  const now = auth.now();
  const { session, tokens } = await beginSession(auth, user, {
    amr,
    authTime: Math.min(authTime ?? now, now),
    expiresAt: now + auth.config.ttl.refresh * 1000,
    client,
    org: await organizationAtSignIn(auth, user, amr),
  });
  auth.emit({ type: "login.succeeded", userId: user.id, sessionId: session.id, amr, at: now, ip: client.ip });
  await endSessionsOverCap(auth, user.id);
  return tokens;
}
