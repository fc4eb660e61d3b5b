/** A registered passkey or security key (WebAuthn). */
export interface PasskeyRecord {
  /** base64url credential id. */
  id: string;
  userId: string;
  /** base64url COSE public key. */
  publicKey: string;
  counter: number;
  transports: string[];
  label: string;
  backupEligible: boolean;
  backupState: boolean;
  createdAt: number;
  lastUsedAt: number | null;
  /**
   * The WebAuthn user handle (base64url) the passkey was created with, when it is not the
   * account's own (`userHandleOf(userId)`): a passkey made at sign-up, before the account had an
   * id (PL-15). Null or absent: the account's.
   */
  userHandle?: string | null;
}

/** Passkeys. */
export interface PasskeyStore {
  /** Inserts; false, storing nothing, when the credential id is registered to anyone (WA-6). */
  create(passkey: PasskeyRecord): Promise<boolean>;
  /** The passkey with this credential id, whoever it belongs to, or null. */
  findById(id: string): Promise<PasskeyRecord | null>;
  /** Every passkey of the user, in no particular order. */
  listByUser(userId: string): Promise<PasskeyRecord[]>;
  /**
   * Atomically sets the counter and use time if the stored counter still equals
   * `expectedCounter` (WA-5); returns whether it did.
   */
  updateCounter(id: string, expectedCounter: number, counter: number, backupState: boolean, now: number): Promise<boolean>;
  /** Sets the label of the user's passkey with this id (both must match); returns whether it did. */
  rename(userId: string, id: string, label: string): Promise<boolean>;
  /** Deletes the user's passkey with this id (both must match); returns whether it did. */
  delete(userId: string, id: string): Promise<boolean>;
  /**
   * Atomically deletes the user's passkey with this id only if the user has another passkey:
   * for an account whose passkeys are its only way to sign in. Of concurrent calls on a user's
   * last two passkeys exactly one deletes. `"last"` deletes nothing; `"not_found"` when the
   * user has no passkey with this id.
   */
  deleteUnlessLast(userId: string, id: string): Promise<"deleted" | "last" | "not_found">;
}
