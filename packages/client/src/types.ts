/** The signed-in user, as every sign-in and `GET /auth/me` answer it. */
export interface AuthUser {
  id: string;
  username: string;
  roles: string[];
  totpEnabled: boolean;
  /** The account's email address, or null. */
  email: string | null;
  /** Whether `email` is proven to be the user's. */
  emailVerified: boolean;
  /** When the account was created, epoch milliseconds. */
  createdAt: number;
}

/**
 * What a client knows of its server from the type of the server's auth instance
 * (`createAuthClient<typeof auth>()`): read from a type-only marker of `@portcullis/core`'s `Auth`,
 * so the client depends on no server package. `unknown` (the default): the contract's user, and
 * fields of any name.
 */
type ServerTypes<Server> = Server extends {
  readonly "~types"?: infer Types;
}
  ? NonNullable<Types>
  : never;

/**
 * The user object of a server (`typeof auth`): the contract's fields and its additional user
 * fields, as `/me` and every sign-in answer them.
 *
 * @example
 * ```ts
 * import type { auth } from "../server/auth";
 * type User = ServerUser<typeof auth>; // AuthUser & { company: string | null; … }
 * ```
 */
export type ServerUser<Server> = [ServerTypes<Server>] extends [never]
  ? AuthUser
  : ServerTypes<Server> extends { user: infer User extends AuthUser }
    ? User
    : AuthUser;

/** The additional fields sign-up takes on a server (those declared `signUp: true`). */
export type ServerSignUpFields<Server> = [ServerTypes<Server>] extends [never]
  ? Record<string, unknown>
  : ServerTypes<Server> extends { signUpFields: infer Fields }
    ? Fields
    : Record<string, unknown>;

/** The additional fields a user may change on a server (those declared `selfEdit: true`). */
export type ServerProfileFields<Server> = [ServerTypes<Server>] extends [never]
  ? Record<string, unknown>
  : ServerTypes<Server> extends { profileFields: infer Fields }
    ? Fields
    : Record<string, unknown>;

/** The `data` of every answer that completes a sign-in (the contract's token set). */
export interface TokenSet {
  accessToken: string;
  refreshToken: string;
  tokenType: "Bearer";
  /** Seconds until the access token expires. */
  expiresIn: number;
  user: AuthUser;
  /**
   * After a sign-in (not a refresh): this client's device token for the account. Browsers also
   * get it as an HttpOnly cookie; a client without cookies sends it back in `login` so that
   * failures from elsewhere cannot lock it out (RL-5).
   */
  deviceToken?: string;
  /**
   * With passkeys on, after a sign-in: whether the server would have the user offered a passkey (a
   * password or email sign-in of an account with none that has not declined lately).
   */
  offerPasskey?: boolean;
}

/** A passkey as its owner sees it. Times are epoch milliseconds. */
export interface PasskeyInfo {
  /** The credential id, base64url. */
  id: string;
  label: string;
  /** How the browser reaches the authenticator: `internal`, `usb`, `nfc`, `ble`, `hybrid`. */
  transports: string[];
  createdAt: number;
  lastUsedAt: number | null;
  /** Whether the passkey may be synced to other devices. */
  backupEligible: boolean;
  /** Whether it was synced (backed up) at its last use. */
  backupState: boolean;
}

/**
 * How a session was signed into (RFC 8176 names): `pwd` password, `otp` TOTP code, `rc` recovery
 * code, `hwk` a device-bound passkey, `swk` a synced passkey, `user` user verification, `fed` a
 * provider, `ldap` the directory (older releases), `mfa` a second factor the provider asserted (beside
 * `fed`), `email` a one-time code or link sent to a verified address (not an RFC 8176 value). A re-authentication replaces them with what it proved.
 */
export type AuthMethod = "pwd" | "otp" | "rc" | "hwk" | "swk" | "user" | "fed" | "ldap" | "mfa" | "email";

/**
 * One of the signed-in user's sessions (`GET /auth/sessions`): no token, only what tells the
 * user which device it is. Times are epoch milliseconds.
 */
export interface SessionInfo {
  /** The session's id: what `client.sessions.end(id)` takes. Not a secret, and never a token. */
  id: string;
  /** Whether this is the session of the client that asked. */
  current: boolean;
  createdAt: number;
  /** Its last refresh, or its creation before any. */
  lastUsedAt: number;
  /** When it ends at the latest: refreshes never move it (RT-4). */
  expiresAt: number;
  /** How the session was signed into. */
  amr: AuthMethod[];
  /** The User-Agent it was last used with, cut to 256 characters; null when none was sent. */
  userAgent: string | null;
  /** The client address it was last used from: IPv4 kept to /24 and IPv6 to /48 unless the operator keeps it whole. */
  address: string | null;
  /** The administrator acting as the user in this session (impersonation), with their username; null for the user's own. */
  impersonatedBy: { id: string; username: string | null } | null;
}

/** A sign-in provider the server lists (`GET /auth/oauth/providers`). */
export interface OAuthProviderInfo {
  /** The name in the provider's routes: `/auth/oauth/<name>/authorize`. */
  name: string;
  /** What to show on its button. */
  displayName: string;
}

/** The answer of `POST /auth/2fa/setup`: what the user's authenticator app needs. */
export interface TotpSetup {
  /** The secret in base32, for typing into the app. */
  secret: string;
  /** The `otpauth://totp/…` URI, for a QR code. Keep it out of URLs and logs: it holds the secret. */
  otpauthUrl: string;
}

/** How a signed-in user proves it is them again before a change that needs it. */
export interface ReauthenticationProof {
  /** The current password. */
  password?: string;
  /** A current TOTP code, when TOTP is on (registering a passkey, ending sessions, changing the address). */
  totpCode?: string;
}
