/** A link between an account and an external identity: (provider, subject) is unique (OA-7). */
export interface IdentityRecord {
  provider: string;
  subject: string;
  userId: string;
  /** The email the provider gave, lower-cased; null when it gave none. */
  email: string | null;
  emailVerified: boolean;
  createdAt: number;
  lastUsedAt: number | null;
}

/** External identities (OAuth/OIDC). */
export interface IdentityStore {
  /** Inserts; false, storing nothing, when (provider, subject) is already linked. */
  link(identity: IdentityRecord): Promise<boolean>;
  /** The link of this provider's subject, or null: how a returning provider sign-in finds its account. */
  find(provider: string, subject: string): Promise<IdentityRecord | null>;
  /** Every identity linked to the user, in no particular order. */
  listByUser(userId: string): Promise<IdentityRecord[]>;
  /**
   * The identities whose `emailVerified` is true and whose `email` equals `email` exactly, code
   * point for code point (no case or accent folding: the flows store and ask lower-cased
   * addresses). For linking by verified email, where a provider is set to (OA-7).
   */
  findByVerifiedEmail(email: string): Promise<IdentityRecord[]>;
  /** Deletes the link of (provider, subject) if it is this user's; returns whether it did. */
  unlink(userId: string, provider: string, subject: string): Promise<boolean>;
}
