/** The SQL dialects the storage speaks: PostgreSQL (also PGlite) and MySQL/MariaDB. */
export type SqlDialect = "postgres" | "mysql";

/** The tables of the storage, each under the configured prefix. */
export interface Tables {
  schema: string;
  users: string;
  totp: string;
  recoveryCodes: string;
  sessions: string;
  /** The refresh tokens of the releases before schema version 5: read only, pruned as they expire. */
  refreshTokens: string;
  challenges: string;
  counters: string;
  passkeys: string;
  identities: string;
  settings: string;
  /** Organizations (schema version 6). */
  organizations: string;
  /** Each organization's members and their roles there. */
  organizationMembers: string;
  organizationInvitations: string;
  /** The email domains each organization claims, and proved. */
  organizationDomains: string;
  /** API keys (schema version 7). */
  apiKeys: string;
  /** Service accounts (schema version 8). */
  serviceAccounts: string;
  /** Each service account's client secrets and public keys. */
  serviceAccountCredentials: string;
}

/**
 * The table names under `prefix`: empty, or a lower-case letter then up to 30 letters, digits
 * or underscores (identifiers are never quoted from input, so this is the whole rule). With
 * `accounts` (the storage's `users` option: your own table holds the users), Portcullis's table of
 * its own data about each user is `<prefix>accounts`, so that it never meets your `users`.
 *
 * @throws {TypeError} naming `prefix` when it is not one.
 */
export function tablesWithPrefix(prefix = "", accounts = false): Tables {
  if (typeof prefix !== "string" || (prefix !== "" && !/^[a-z][a-z0-9_]{0,30}$/.test(prefix))) {
    throw new TypeError(
      `@portcullis/kysely: prefix must be empty or a lower-case letter then up to 30 letters, digits or "_"; got ${JSON.stringify(prefix)}`,
    );
  }
  const name = (table: string) => `${prefix}${table}`;
  return {
    schema: name("portcullis_schema"),
    users: name(accounts ? "accounts" : "users"),
    totp: name("totp"),
    recoveryCodes: name("recovery_codes"),
    sessions: name("sessions"),
    refreshTokens: name("refresh_tokens"),
    challenges: name("challenges"),
    counters: name("counters"),
    passkeys: name("passkeys"),
    identities: name("identities"),
    settings: name("settings"),
    // After the tables that point at it: what drops them in this order drops it last.
    organizationMembers: name("organization_members"),
    organizationInvitations: name("organization_invitations"),
    organizationDomains: name("organization_domains"),
    organizations: name("organizations"),
    apiKeys: name("api_keys"),
    serviceAccountCredentials: name("service_account_credentials"),
    serviceAccounts: name("service_accounts"),
  };
}

/** The rows as the database holds them. Times are epoch milliseconds in BIGINT columns. */
export interface UserRow {
  id: string;
  username: string;
  username_key: string;
  password_hash: string | null;
  /** JSON array. */
  roles: string;
  disabled: boolean | number;
  token_version: number | string;
  source: string;
  email: string | null;
  email_verified: boolean | number;
  /** `emailKeyOf(email)` while the address is verified, else null; unique (EV-1). */
  verified_email_key: string | null;
  created_at: number | string;
  updated_at: number | string;
}

export interface TotpRow {
  user_id: string;
  secret_key_id: string;
  secret_sealed: string;
  enabled: boolean | number;
  last_used_step: number | string;
  created_at: number | string;
}

export interface RecoveryCodeRow {
  user_id: string;
  hash: string;
  created_at: number | string;
}

export interface SessionRow {
  id: string;
  user_id: string;
  token_version: number | string;
  /** JSON array. */
  amr: string;
  /** When `amr` was proven (STUP-1); migration 4 set it to `created_at` for the sessions before it. */
  auth_time: number | string;
  created_at: number | string;
  expires_at: number | string;
  revoked_at: number | string | null;
  last_used_at: number | string;
  user_agent: string | null;
  address: string | null;
  /** The SHA-256 of the one refresh token the session accepts now, or null for none (migration 5). */
  refresh_hash: string | null;
  /** The generation that token names: how many refreshes the session has had. */
  refresh_generation: number | string;
  /** When that token stops being accepted unused; never after `expires_at`. */
  refresh_expires_at: number | string;
  /** The organization active in the session, or null (migration 6). */
  active_org_id: string | null;
  /** The administrator acting as the user in this session, or null (migration 8): not a foreign key. */
  impersonator_id: string | number | bigint | null;
}

/**
 * A refresh token of a release before schema version 5, which kept one row per token, spent or
 * not. Read only now (`findLegacyRefreshToken`); the sweep deletes the rows as they expire.
 */
export interface RefreshTokenRow {
  hash: string;
  session_id: string;
  user_id: string;
  created_at: number | string;
  expires_at: number | string;
  spent_at: number | string | null;
}

export interface ChallengeRow {
  id: string;
  kind: string;
  user_id: string | null;
  /** JSON object. */
  data: string;
  attempts: number | string;
  created_at: number | string;
  expires_at: number | string;
}

export interface CounterRow {
  key: string;
  count: number | string;
  reset_at: number | string;
}

export interface PasskeyRow {
  id: string;
  user_id: string;
  public_key: string;
  counter: number | string;
  /** JSON array. */
  transports: string;
  label: string;
  backup_eligible: boolean | number;
  backup_state: boolean | number;
  created_at: number | string;
  last_used_at: number | string | null;
  /** base64url; null: the account's own handle (migration 9). */
  user_handle: string | null;
}

export interface IdentityRow {
  provider: string;
  subject: string;
  user_id: string;
  email: string | null;
  email_verified: boolean | number;
  created_at: number | string;
  last_used_at: number | string | null;
}

export interface SettingRow {
  key: string;
  /** JSON. */
  value: string;
  updated_at: number | string;
}

export interface OrganizationRow {
  id: string;
  slug: string;
  name: string;
  /** JSON object: the organization's rules. */
  rules: string;
  created_at: number | string;
  updated_at: number | string;
}

export interface OrganizationMemberRow {
  org_id: string;
  user_id: string | number | bigint;
  /** JSON array. */
  roles: string;
  created_at: number | string;
  last_active_at: number | string | null;
}

export interface OrganizationInvitationRow {
  id: string;
  org_id: string;
  /** Case-folded. */
  email: string;
  /** JSON array. */
  roles: string;
  token_hash: string;
  invited_by: string | number | bigint;
  created_at: number | string;
  expires_at: number | string;
  accepted_at: number | string | null;
  accepted_by: string | number | bigint | null;
  revoked_at: number | string | null;
}

export interface OrganizationDomainRow {
  org_id: string;
  domain: string;
  verification_value: string;
  created_at: number | string;
  verified_at: number | string | null;
  /** `domain` while it is verified, else null; unique, so one organization at most has it verified (OR-11). */
  verified_domain: string | null;
}

export interface ApiKeyRow {
  id: string;
  user_id: string | number | bigint;
  /** The SHA-256 (hex) of the whole key; unique. */
  hash: string;
  start: string;
  name: string;
  /** JSON array. */
  scopes: string;
  token_version: number | string;
  /** The organization the key belongs to, or null: not a foreign key, so deleting an organization never fails on its keys. */
  org_id: string | null;
  created_at: number | string;
  expires_at: number | string;
  last_used_at: number | string | null;
  revoked_at: number | string | null;
}

export interface ServiceAccountRow {
  id: string;
  name: string;
  /** JSON array. */
  roles: string;
  /** JSON array. */
  scopes: string;
  disabled: boolean | number;
  token_version: number | string;
  created_at: number | string;
  /** The administrator who made it, or null: not a foreign key. */
  created_by: string | number | bigint | null;
}

export interface ServiceAccountCredentialRow {
  id: string;
  /** References service_accounts, on delete cascade. */
  service_account_id: string;
  /** `secret` or `jwk`. */
  kind: string;
  /** A secret's SHA-256 (hex), unique; null for a key. */
  secret_hash: string | null;
  /** A secret's first characters; null for a key. */
  start: string | null;
  /** A key's public JWK as JSON; null for a secret. */
  public_jwk: string | null;
  created_at: number | string;
  expires_at: number | string | null;
  last_used_at: number | string | null;
}

export interface SchemaRow {
  id: number;
  version: number;
  updated_at: number | string;
}

/** The Kysely database type, keyed by table name; built per prefix, so rows are typed by table role. */
// biome-ignore lint/suspicious/noExplicitAny: table names depend on the prefix chosen at run time.
export type AnyDatabase = Record<string, any>;
