/** The records `importUsers` reads and the summary it answers (IM-1). */
import type { FieldValue } from "../user-fields/field.js";

/** A passkey of an {@link ImportedUser}, as the system it comes from registered it. */
export interface ImportedPasskey {
  /** The credential id, base64url (1 to 1023 bytes). */
  id: string;
  /** The credential's COSE public key, base64url: ES256, EdDSA or RS256 (WA-2). */
  publicKey: string;
  /** The last signature counter seen; default 0. */
  counter?: number;
  /** The transports the browser reported at registration; default none. */
  transports?: string[];
  /** The name the user sees; default "Passkey". */
  label?: string;
  /** Whether the credential may be synced (the BE flag); default false. */
  backupEligible?: boolean;
  /** Whether it was backed up at its last use (the BS flag); default false. */
  backupState?: boolean;
}

/** A provider link of an {@link ImportedUser}, as OAuth sign-in stores one. */
export interface ImportedIdentity {
  /** The provider's name in `oauthProviders`: 1 to 32 of a-z, 0-9, `_`, `-`, starting with a letter or digit. */
  provider: string;
  /** The provider's subject (`sub`) of the user: 1 to 255 characters. */
  subject: string;
  /** The address the provider gave, kept lower-cased as sign-in keeps it. */
  email?: string;
  /** Whether the provider said the address is verified; default false. */
  emailVerified?: boolean;
}

/** One user to import: one line of the `portcullis import` file. Only `username` is required. */
export interface ImportedUser {
  username: string;
  /**
   * The user's id in the system it comes from, kept as this library's user id (1 to 64 of
   * A-Z, a-z, 0-9, `.`, `_`, `~`, `-`); random when absent. Keep it when the user's passkeys
   * carry its bytes as their user handle, or a discoverable sign-in with them is refused (WA-4).
   */
  id?: string;
  email?: string;
  /** True when the address was proven in the old system; needs `email`. Default false. */
  emailVerified?: boolean;
  roles?: string[];
  disabled?: boolean;
  /** A bcrypt, scrypt, PBKDF2 or argon2 hash (`parseImportedPasswordHash`, IM-1); never a password. */
  passwordHash?: string;
  /** The TOTP secret in base32, at least 20 bytes (TOTP-2): sealed at once (TOTP-6) and enabled. */
  totpSecret?: string;
  /** Unused recovery codes in this library's form (24 Crockford base32 characters, or the 16 issued before); need `totpSecret`. Stored as hashes (RC-2). */
  recoveryCodes?: string[];
  passkeys?: ImportedPasskey[];
  identities?: ImportedIdentity[];
  /**
   * Values of the additional user fields `createAuth` declares (`user.fields`), as an
   * administrator sets them: any declared field, each checked against its kind and limits; the
   * others take their defaults. An undeclared name or a bad value refuses the record, naming it.
   */
  fields?: Record<string, FieldValue>;
}

/**
 * What an item of the records can be besides a record: a line the reader could not make into
 * one (not JSON), refused with this reason and its position like any bad record.
 */
export class UnreadableRecord {
  /** Why the item is not a record; never the item's text. */
  readonly reason: string;
  /** An item refused for `reason`, which must not repeat the item's text. */
  constructor(reason: string) {
    this.reason = reason;
  }
}

/** A record refused by {@link importUsers}: its 1-based position among the records (the line of a file), and why. */
export interface ImportRefusal {
  position: number;
  /** The field at fault (`passkeys[1].publicKey`), or "record" for the record as a whole. */
  field: string;
  /** Why; never the value of a hash, secret or code. */
  reason: string;
}

/** A record {@link importUsers} wrote nothing of because its username is taken. */
export interface ImportSkip {
  position: number;
  username: string;
  /** "exists with different data": the account was left as it is. */
  reason: string;
}

/**
 * An existing account that lacks a factor its record carries (IM-1): an earlier import cut part
 * way (releases before issue 36 wrote the user before its factors), or factors removed since.
 * It signs in without them, so it is reported loudly; {@link importUsers} leaves it as it is.
 */
export interface ImportIncomplete {
  position: number;
  username: string;
  /** {@link existsWithoutItsFactors}. */
  reason: string;
  /**
   * What of the record the account lacks: `totpSecret` (no enabled factor), `recoveryCodes`
   * (none at all), `passkeys[i]` and `identities[i]` (that credential id or link is not the account's).
   */
  missing: string[];
}

/** What {@link importUsers} did, counted. */
export interface ImportSummary {
  /** True when nothing was written (`dryRun`): `imported` then counts the records that would have been. */
  dryRun: boolean;
  /** Records read, bad ones included. */
  read: number;
  imported: number;
  /** Records whose user already exists with the same data: nothing to do. */
  unchanged: number;
  /** Records whose username exists with other data: the account was left as it is. */
  skipped: number;
  refused: number;
  /** Records whose account exists without a factor the record carries ({@link ImportIncomplete}): left as it is, and reported. */
  incomplete: number;
  /** Skips counted by reason. */
  skippedByReason: Record<string, number>;
  /** Refusals counted by field and reason, e.g. `"passwordHash: unknown password hash format: …"`. */
  refusedByReason: Record<string, number>;
}

/** Options of {@link importUsers}. */
export interface ImportUsersOptions {
  /** Check every record, against the storage too, and write nothing. Duplicates within the input are not seen then. */
  dryRun?: boolean;
  /** How many records are checked and written at once; default 8. */
  concurrency?: number;
  /** Called for each refused record, as it is refused. */
  onRefused?(refusal: ImportRefusal): void;
  /** Called for each skipped record. */
  onSkipped?(skip: ImportSkip): void;
  /** Called for each record whose account exists without a factor the record carries: act on each (docs/importing.md). */
  onIncomplete?(account: ImportIncomplete): void;
  /** Called after each record with the summary so far (the same object; do not keep it). */
  onProgress?(summary: ImportSummary): void;
}
