/**
 * A service account (SA-1): a principal that is not a person. It has no password and no sign-in
 * page; it gets short access tokens from `POST /auth/token` with the OAuth 2.0 client-credentials
 * grant (RFC 6749 §4.4), its id being the OAuth `client_id`.
 */
export interface ServiceAccountRecord {
  /** Random, not secret: the account's OAuth `client_id`. */
  id: string;
  /** A name an administrator chose, checked like a passkey label. */
  name: string;
  /** The roles its tokens carry; `requireAuth`'s `roles` read them. */
  roles: string[];
  /** The scopes its tokens may carry: a token request asks for some of them, or gets them all. */
  scopes: string[];
  disabled: boolean;
  /**
   * Raised when the account is disabled, its roles or scopes change, or an administrator ends its
   * tokens: a token of an older version is refused at its next request (SA-4).
   */
  tokenVersion: number;
  createdAt: number;
  /** The administrator who made it, or null (made by the host's code). */
  createdBy: string | null;
}

/**
 * A way a service account proves itself at the token endpoint (SA-2): a client secret, stored as
 * its SHA-256 only, or a registered public JWK for `private_key_jwt` (RFC 7523).
 */
export type ServiceAccountCredentialRecord = {
  /** Random, not secret: how lists and removals name the credential. */
  id: string;
  serviceAccountId: string;
  createdAt: number;
  /** When it stops being accepted; null for never. */
  expiresAt: number | null;
  /** When it was last accepted, written at most once a minute (as API keys' `lastUsedAt`); null before. */
  lastUsedAt: number | null;
} & (
  | {
      kind: "secret";
      /** The SHA-256 of the whole secret, as `sha256` writes it (base64url). */
      secretHash: string;
      /** The secret's first characters (`pcs_live_AbCd`), to tell secrets apart: never enough to use it. */
      start: string;
    }
  | {
      kind: "jwk";
      /** The public key, as registered (private members refused), with its `kid` and `alg`. */
      publicJwk: PublicJwk;
    }
);

/** A registered public key of a service account: RSA (2048 bits or more), EC P-256 or P-384, or Ed25519. */
export interface PublicJwk {
  kty: "RSA" | "EC" | "OKP";
  kid: string;
  alg: "RS256" | "PS256" | "ES256" | "ES384" | "EdDSA";
  n?: string;
  e?: string;
  crv?: "P-256" | "P-384" | "Ed25519";
  x?: string;
  y?: string;
}

/** What the token endpoint reads of a client: the account and its credentials, in one read. */
export interface ServiceAccountClient {
  account: ServiceAccountRecord;
  credentials: ServiceAccountCredentialRecord[];
}

/** The changes {@link ServiceAccountStore.updateServiceAccount} makes; absent fields are kept. */
export interface ServiceAccountChanges {
  name?: string;
  roles?: string[];
  scopes?: string[];
  disabled?: boolean;
  /** Raise the token version by one (every issued token is refused from its next request). */
  raiseTokenVersion?: boolean;
}

/** What {@link ServiceAccountStore.addServiceAccountCredential} did. */
export type CredentialAddition = "added" | "limit" | "unknown_account";

/** Service accounts and their credentials. Each method is one atomic operation. */
export interface ServiceAccountStore {
  /** Stores a new account; its id is random, so it never meets an existing one. */
  createServiceAccount(account: ServiceAccountRecord): Promise<void>;
  /** The account of this id, or null. */
  findServiceAccount(id: string): Promise<ServiceAccountRecord | null>;
  /** The account with its credentials (expired ones included: the caller checks), or null. */
  findServiceAccountClient(id: string): Promise<ServiceAccountClient | null>;
  /** Every account, oldest first. */
  listServiceAccounts(): Promise<ServiceAccountRecord[]>;
  /** Changes an account; the account after the change, or null for an unknown id. */
  updateServiceAccount(id: string, changes: ServiceAccountChanges): Promise<ServiceAccountRecord | null>;
  /** Deletes an account with its credentials; false for an unknown id. */
  deleteServiceAccount(id: string): Promise<boolean>;
  /**
   * Adds a credential unless the account already holds `maxOfKind` credentials of its kind that
   * have not expired at `now`, checked and written as one (two concurrent additions to an account
   * holding `maxOfKind - 1` add one): `"limit"` then, `"unknown_account"` for no such account.
   */
  addServiceAccountCredential(
    credential: ServiceAccountCredentialRecord,
    maxOfKind: number,
    now: number,
  ): Promise<CredentialAddition>;
  /** Removes a credential of the account; false when it holds none of that id. */
  removeServiceAccountCredential(serviceAccountId: string, credentialId: string): Promise<boolean>;
  /**
   * Records that a credential was accepted: its `lastUsedAt` becomes `at` where it is older than
   * `at - minIntervalMs` (or null). An unknown id is passed over.
   */
  recordServiceAccountCredentialUse(credentialId: string, at: number, minIntervalMs: number): Promise<void>;
}
