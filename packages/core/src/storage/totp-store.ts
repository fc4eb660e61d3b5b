/** An encrypted secret: AES-256-GCM with the user id as associated data (TOTP-6). */
export interface EncryptedSecret {
  /** Which configured encryption key sealed it. */
  keyId: string;
  /** base64url of nonce ‖ ciphertext ‖ tag. */
  sealed: string;
}

/** A user's TOTP factor: pending until the first valid code, then enabled. */
export interface TotpRecord {
  userId: string;
  secret: EncryptedSecret;
  enabled: boolean;
  /** The highest time step ever accepted; -1 before the first (TOTP-4). */
  lastUsedStep: number;
  createdAt: number;
}

/** TOTP factors. */
export interface TotpStore {
  /** The user's factor, pending or enabled, or null. */
  get(userId: string): Promise<TotpRecord | null>;
  /** Stores a pending factor, replacing a pending one; returns false if one is enabled. */
  putPending(record: TotpRecord): Promise<boolean>;
  /** Atomically turns the pending factor on; returns false if there is none pending. */
  enable(userId: string): Promise<boolean>;
  /** Removes the factor, pending or enabled; returns whether one existed. */
  remove(userId: string): Promise<boolean>;
  /**
   * Atomically records `step` as used if it is greater than `lastUsedStep`, and returns
   * whether it was (compare-and-set; TOTP-4). Two callers with the same step: one true.
   */
  advanceStep(userId: string, step: number): Promise<boolean>;
  /**
   * Atomically replaces the factor's sealed secret with `next` only if it is still `expected`
   * (the same `keyId` and `sealed`; compare-and-set), keeping `enabled` and `lastUsedStep` as they
   * are: resealing under a new key (KR-2) never undoes a change made since the factor was read
   * (removed, or set up again). Returns whether it wrote (SQL: `UPDATE … WHERE user_id = ? AND
   * secret_key_id = ? AND secret_sealed = ?`).
   */
  replaceSecret(userId: string, expected: EncryptedSecret, next: EncryptedSecret): Promise<boolean>;
}

/** One-time recovery codes, stored only as hashes (RC-2). */
export interface RecoveryCodeStore {
  /** Replaces the user's whole set with `hashes` (RC-1: regenerating voids the old set). */
  replace(userId: string, hashes: string[], now: number): Promise<void>;
  /** Whether the user has an unused code with this hash (both must match; ST-2). Spends nothing. */
  has(userId: string, hash: string): Promise<boolean>;
  /** Atomically removes the code with this hash; true for exactly one caller (RC-3). */
  consume(userId: string, hash: string): Promise<boolean>;
  /** How many unused codes the user has. */
  count(userId: string): Promise<number>;
  /** Deletes every code of the user, as turning the second factor off does. */
  removeAll(userId: string): Promise<void>;
}
