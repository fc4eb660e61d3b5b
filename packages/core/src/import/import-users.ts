import type { Auth } from "../auth.js";
import { randomId } from "../crypto/ids.js";
import { parseImportedPasswordHash } from "../crypto/imported-password-hash.js";
import { base64url } from "../crypto/random.js";
import { otpauth } from "../dependencies.js";
import { AuthError } from "../errors/auth-error.js";
import { checkRoles } from "../flows/create-user.js";
import { maxRegistrationCounter, passkeyAlgorithms } from "../flows/webauthn-register.js";
import type { IdentityRecord, NewAccount, PasskeyRecord, TotpRecord, UserRecord } from "../storage/types.js";
import { hashRecoveryCode, normalizeRecoveryCode } from "../totp/recovery-codes.js";
import { totpSecretBytes } from "../totp/totp.js";
import { openTotpSecret, sealTotpSecret } from "../totp/totp-secret.js";
import type { FieldValue } from "../user-fields/field.js";
import { newUserFields, readFieldInput, storedFieldValues } from "../user-fields/values.js";
import { emailKeyOf, normalizeEmail } from "../users/email.js";
import { normalizeUsername } from "../users/username.js";
import { readLabel } from "../webauthn/passkey-info.js";
import { publicKeyProblem } from "../webauthn/public-key.js";

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

/** The most passkeys, identities and recovery codes one record may hold. */
export const importListLimits = { passkeys: 20, identities: 20, recoveryCodes: 20 } as const;

/** The text of the reason of {@link ImportSkip} for a username that exists with other data. */
export const existsWithOtherData = "exists with different data";

/** The text of the reason of {@link ImportIncomplete}: the account exists without a factor its record carries. */
export const existsWithoutItsFactors = "exists without factors its record carries";

const recordFields = new Set([
  "username",
  "id",
  "email",
  "emailVerified",
  "roles",
  "disabled",
  "passwordHash",
  "totpSecret",
  "recoveryCodes",
  "passkeys",
  "identities",
  "fields",
]);
const passkeyFields = new Set(["id", "publicKey", "counter", "transports", "label", "backupEligible", "backupState"]);
const identityFields = new Set(["provider", "subject", "email", "emailVerified"]);

/** A record found bad: `field` and `reason` make its {@link ImportRefusal}. */
class Refused extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/** A record checked whole and ready to store. */
interface CheckedRecord {
  user: UserRecord;
  /** Whether `id` came from the record. */
  idGiven: boolean;
  totpSecret: Buffer | null;
  recoveryCodes: string[];
  passkeys: Omit<PasskeyRecord, "userId">[];
  identities: Omit<IdentityRecord, "userId">[];
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function onlyFields(value: Record<string, unknown>, allowed: Set<string>, at: string): void {
  for (const key of Object.keys(value)) {
    if (!allowed.has(key))
      throw new Refused(at === "" ? key : `${at}.${key}`, `unknown field; accepted are ${[...allowed].join(", ")}`);
  }
}

/** Runs a check that throws {@link AuthError}, refusing `field` with its message (the messages never echo the value). */
function checked<T>(field: string, check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof AuthError) throw new Refused(field, error.message);
    throw error;
  }
}

function optionalBoolean(value: unknown, field: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw new Refused(field, "must be true or false");
  return value;
}

function stringOf(value: unknown, field: string, required: boolean): string | undefined {
  if (value === undefined || value === null) {
    if (required) throw new Refused(field, "is required");
    return undefined;
  }
  if (typeof value !== "string") throw new Refused(field, "must be a string");
  if (required && value === "") throw new Refused(field, "is required");
  return value;
}

function listOf(value: unknown, field: string, max: number): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new Refused(field, "must be a list");
  if (value.length > max) throw new Refused(field, `must hold at most ${max}`);
  return value;
}

async function readTotpSecret(value: unknown): Promise<Buffer | null> {
  const text = stringOf(value, "totpSecret", false);
  if (text === undefined) return null;
  const compact = text.replace(/[\s-]/g, "").replace(/=+$/, "").toUpperCase();
  if (!/^[A-Z2-7]+$/.test(compact)) throw new Refused("totpSecret", "must be base32 (A-Z, 2-7)");
  const { Secret } = await otpauth();
  const bytes = Buffer.from(Secret.fromBase32(compact).bytes);
  if (bytes.length < totpSecretBytes) {
    bytes.fill(0);
    throw new Refused("totpSecret", `must be at least ${totpSecretBytes} bytes (TOTP-2), not ${bytes.length}`);
  }
  return bytes;
}

function readRecoveryCodes(value: unknown, hasTotp: boolean): string[] {
  const codes = listOf(value, "recoveryCodes", importListLimits.recoveryCodes);
  if (codes.length > 0 && !hasTotp)
    throw new Refused("recoveryCodes", "need totpSecret: they are asked for only after a password with TOTP");
  const normalized = codes.map((code, index) => {
    const field = `recoveryCodes[${index}]`;
    const form = normalizeRecoveryCode(stringOf(code, field, true) as string);
    if (form === null)
      throw new Refused(field, "is not a recovery code of 24 Crockford base32 characters (or 16, as issued before)");
    return form;
  });
  if (new Set(normalized).size !== normalized.length) throw new Refused("recoveryCodes", "hold the same code twice");
  return normalized;
}

function readBase64url(value: unknown, field: string, maxBytes: number): Buffer {
  const text = stringOf(value, field, true) as string;
  const bytes = Buffer.from(text, "base64url");
  // Encoded again and compared: refuses any other character, padding, and a length or unused bits no encoding has ("" is refused as required above).
  if (bytes.toString("base64url") !== text) {
    throw new Refused(field, "must be unpadded base64url");
  }
  if (bytes.length > maxBytes) throw new Refused(field, `must be at most ${maxBytes} bytes`);
  return bytes;
}

async function readPasskey(value: unknown, index: number, now: number): Promise<Omit<PasskeyRecord, "userId">> {
  const at = `passkeys[${index}]`;
  if (!isObject(value)) throw new Refused(at, "must be an object");
  onlyFields(value, passkeyFields, at);
  const id = readBase64url(value.id, `${at}.id`, 1023);
  const publicKey = readBase64url(value.publicKey, `${at}.publicKey`, 2048);
  const problem = await publicKeyProblem(new Uint8Array(publicKey), passkeyAlgorithms);
  if (problem !== null) throw new Refused(`${at}.publicKey`, `is not a usable COSE public key: ${problem}`);
  const counter = value.counter ?? 0;
  if (typeof counter !== "number" || !Number.isInteger(counter) || counter < 0 || counter > maxRegistrationCounter) {
    throw new Refused(`${at}.counter`, `must be a whole number from 0 to ${maxRegistrationCounter}`);
  }
  const transports = listOf(value.transports, `${at}.transports`, 8).map((transport, position) => {
    const field = `${at}.transports[${position}]`;
    const name = stringOf(transport, field, true) as string;
    if (!/^[a-z-]{1,32}$/.test(name))
      throw new Refused(field, "must be a transport name such as usb, nfc, ble, internal or hybrid");
    return name;
  });
  const label =
    value.label === undefined || value.label === null ? "Passkey" : checked(`${at}.label`, () => readLabel(value.label));
  const backupEligible = optionalBoolean(value.backupEligible, `${at}.backupEligible`) ?? false;
  const backupState = optionalBoolean(value.backupState, `${at}.backupState`) ?? false;
  // WebAuthn §6.1.3: BS may be set only when BE is; registration refuses the pair as well (WA-3).
  if (backupState && !backupEligible) {
    throw new Refused(`${at}.backupState`, "cannot be true when backupEligible is false (WA-3)");
  }
  return {
    id: base64url(id),
    publicKey: base64url(publicKey),
    counter,
    transports: [...new Set(transports)],
    label,
    backupEligible,
    backupState,
    createdAt: now,
    lastUsedAt: null,
  };
}

function readIdentity(value: unknown, index: number, now: number): Omit<IdentityRecord, "userId"> {
  const at = `identities[${index}]`;
  if (!isObject(value)) throw new Refused(at, "must be an object");
  onlyFields(value, identityFields, at);
  const provider = stringOf(value.provider, `${at}.provider`, true) as string;
  if (!/^[a-z0-9][a-z0-9_-]{0,31}$/.test(provider)) {
    throw new Refused(`${at}.provider`, "must be a provider name: 1 to 32 of a-z, 0-9, _ and -, starting with a letter or digit");
  }
  const subject = stringOf(value.subject, `${at}.subject`, true) as string;
  if ([...subject].length > 255) throw new Refused(`${at}.subject`, "must be at most 255 characters");
  const email = stringOf(value.email, `${at}.email`, false)?.trim();
  const emailVerified = optionalBoolean(value.emailVerified, `${at}.emailVerified`) ?? false;
  if (emailVerified && !email) throw new Refused(`${at}.emailVerified`, "needs an email");
  if (email) checked(`${at}.email`, () => normalizeEmail(email, "email"));
  return { provider, subject, email: email ? email.toLowerCase() : null, emailVerified, createdAt: now, lastUsedAt: null };
}

/** Checks a record whole, without storage: every field, or the first fault as a {@link Refused}. */
async function checkRecord(auth: Auth, value: unknown): Promise<CheckedRecord> {
  if (value instanceof UnreadableRecord) throw new Refused("record", value.reason);
  if (!isObject(value)) throw new Refused("record", "must be a JSON object");
  onlyFields(value, recordFields, "");
  const { username, usernameKey } = checked("username", () =>
    normalizeUsername(stringOf(value.username, "username", true) as string),
  );
  const givenId = stringOf(value.id, "id", false);
  if (givenId !== undefined && !/^[A-Za-z0-9._~-]{1,64}$/.test(givenId)) {
    throw new Refused("id", "must be 1 to 64 of A-Z, a-z, 0-9, '.', '_', '~' and '-'");
  }
  const rawEmail = stringOf(value.email, "email", false);
  const email = rawEmail === undefined ? null : checked("email", () => normalizeEmail(rawEmail, "email"));
  const emailVerified = optionalBoolean(value.emailVerified, "emailVerified") ?? false;
  if (emailVerified && email === null) throw new Refused("emailVerified", "needs an email");
  const roles = checked("roles", () => checkRoles(value.roles ?? []));
  const disabled = optionalBoolean(value.disabled, "disabled") ?? false;
  let passwordHash: string | null = null;
  if (value.passwordHash !== undefined && value.passwordHash !== null) {
    if (typeof value.passwordHash !== "string") throw new Refused("passwordHash", "must be a string");
    const parsed = parseImportedPasswordHash(value.passwordHash);
    if (!parsed.ok) throw new Refused("passwordHash", parsed.reason);
    passwordHash = parsed.stored;
  }
  const now = auth.now();
  const passkeys: Omit<PasskeyRecord, "userId">[] = [];
  for (const [index, passkey] of listOf(value.passkeys, "passkeys", importListLimits.passkeys).entries()) {
    passkeys.push(await readPasskey(passkey, index, now));
  }
  if (new Set(passkeys.map((passkey) => passkey.id)).size !== passkeys.length) {
    throw new Refused("passkeys", "hold the same credential id twice");
  }
  const identities = listOf(value.identities, "identities", importListLimits.identities).map((identity, index) =>
    readIdentity(identity, index, now),
  );
  if (new Set(identities.map((identity) => `${identity.provider}\0${identity.subject}`)).size !== identities.length) {
    throw new Refused("identities", "hold the same provider and subject twice");
  }
  const fields = checked("fields", () => newUserFields(auth.userFields, readFieldInput(auth.userFields, value.fields, "admin")));
  const totpSecret = await readTotpSecret(value.totpSecret);
  const recoveryCodes = readRecoveryCodes(value.recoveryCodes, totpSecret !== null);
  const user: UserRecord = {
    id: givenId ?? randomId(auth),
    username,
    usernameKey,
    passwordHash,
    roles,
    disabled,
    tokenVersion: 0,
    source: "local",
    email,
    emailVerified,
    createdAt: now,
    updatedAt: now,
    ...(auth.userFields.length > 0 ? { fields } : {}),
  };
  return { user, idGiven: givenId !== undefined, totpSecret, recoveryCodes, passkeys, identities };
}

/** The keys no two records may hold at once, so that records sharing one are checked and written one after the other. */
function claimedKeys(record: CheckedRecord): string[] {
  const { user } = record;
  const keys = [`username\0${user.usernameKey}`];
  if (record.idGiven) keys.push(`id\0${user.id}`);
  if (user.email !== null && user.emailVerified) keys.push(`email\0${emailKeyOf(user.email)}`);
  for (const passkey of record.passkeys) keys.push(`passkey\0${passkey.id}`);
  for (const identity of record.identities) keys.push(`identity\0${identity.provider}\0${identity.subject}`);
  return keys;
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && new Set([...a, ...b]).size === a.length;

/** What an existing account holds of the factors a record can carry. */
interface StoredFactors {
  totp: TotpRecord | null;
  recoveryCodes: number;
  passkeys: PasskeyRecord[];
  identities: IdentityRecord[];
}

async function storedFactors({ storage }: Auth, userId: string): Promise<StoredFactors> {
  const [totp, recoveryCodes, passkeys, identities] = await Promise.all([
    storage.totp.get(userId),
    storage.recoveryCodes.count(userId),
    storage.passkeys.listByUser(userId),
    storage.identities.listByUser(userId),
  ]);
  return { totp, recoveryCodes, passkeys, identities };
}

const sameLink = (a: Pick<IdentityRecord, "provider" | "subject">, b: Pick<IdentityRecord, "provider" | "subject">) =>
  a.provider === b.provider && a.subject === b.subject;

/**
 * What of `record` the account holding `stored` lacks (IM-1): the TOTP factor (none enabled), the
 * recovery codes (none at all: codes used since leave the rest), each passkey and link by its key.
 * Only factors: the password hash changes at the first sign-in, the factors do not.
 */
function missingFactors(record: CheckedRecord, stored: StoredFactors): string[] {
  const missing: string[] = [];
  if (record.totpSecret !== null && stored.totp?.enabled !== true) missing.push("totpSecret");
  if (record.recoveryCodes.length > 0 && stored.recoveryCodes === 0) missing.push("recoveryCodes");
  for (const [index, passkey] of record.passkeys.entries()) {
    if (!stored.passkeys.some((candidate) => candidate.id === passkey.id)) missing.push(`passkeys[${index}]`);
  }
  for (const [index, identity] of record.identities.entries()) {
    if (!stored.identities.some((candidate) => sameLink(candidate, identity))) missing.push(`identities[${index}]`);
  }
  return missing;
}

/** Whether the stored factor (pending or enabled) holds `secret`; both absent counts as the same. */
function sameTotpSecret(auth: Auth, stored: TotpRecord | null, secret: Buffer | null, userId: string): boolean {
  if (stored === null || secret === null) return stored === secret;
  const opened = openTotpSecret(auth, stored.secret, userId);
  const same = opened.equals(secret);
  opened.fill(0);
  return same;
}

/** Whether the account `existing`, holding `stored`, holds exactly what `record` would import. */
async function holdsSameData(auth: Auth, existing: UserRecord, stored: StoredFactors, record: CheckedRecord): Promise<boolean> {
  const { user } = record;
  if (
    existing.username !== user.username ||
    existing.email !== user.email ||
    existing.emailVerified !== user.emailVerified ||
    existing.disabled !== user.disabled ||
    existing.passwordHash !== user.passwordHash ||
    !sameSet(existing.roles, user.roles) ||
    !sameFieldValues(auth, existing, user) ||
    stored.recoveryCodes !== record.recoveryCodes.length ||
    stored.passkeys.length !== record.passkeys.length ||
    stored.identities.length !== record.identities.length ||
    // Same counts, every link held (else it was incomplete): a passkey's key may still differ.
    !record.passkeys.every((passkey) =>
      stored.passkeys.some((candidate) => candidate.id === passkey.id && candidate.publicKey === passkey.publicKey),
    ) ||
    !sameTotpSecret(auth, stored.totp, record.totpSecret, existing.id)
  ) {
    return false;
  }
  for (const code of record.recoveryCodes) {
    if (!(await auth.storage.recoveryCodes.has(existing.id, hashRecoveryCode(existing.id, code)))) return false;
  }
  return true;
}

/** Whether the account holds the record's field values (a user stored before a field was declared reads its default). */
function sameFieldValues(auth: Auth, existing: UserRecord, user: UserRecord): boolean {
  const held = storedFieldValues(auth.userFields, existing.fields);
  const given = storedFieldValues(auth.userFields, user.fields);
  return JSON.stringify(held) === JSON.stringify(given);
}

/** What a record is, against the account that holds its username. */
type Verdict = { kind: "unchanged" } | { kind: "other" } | { kind: "incomplete"; missing: string[] };

/**
 * Compares a record with the account holding its username: another account (another id given,
 * or a directory account) is other data whatever it holds; the record's account lacking a factor
 * of the record is incomplete (IM-1); else unchanged when it holds exactly the record.
 */
async function verdictOn(auth: Auth, existing: UserRecord, record: CheckedRecord): Promise<Verdict> {
  if ((record.idGiven && existing.id !== record.user.id) || existing.source !== "local") return { kind: "other" };
  const stored = await storedFactors(auth, existing.id);
  const missing = missingFactors(record, stored);
  if (missing.length > 0) return { kind: "incomplete", missing };
  return (await holdsSameData(auth, existing, stored, record)) ? { kind: "unchanged" } : { kind: "other" };
}

/** Why a new record cannot be stored as the storage is now, or null when it can. */
async function storageConflict(auth: Auth, record: CheckedRecord): Promise<Refused | null> {
  const { storage } = auth;
  const { user } = record;
  if (record.idGiven && (await storage.users.findById(user.id))) return new Refused("id", "is another user's id");
  if (user.email !== null && user.emailVerified && (await storage.users.findByVerifiedEmail(emailKeyOf(user.email)))) {
    return new Refused("email", "is verified on another account");
  }
  for (const [index, passkey] of record.passkeys.entries()) {
    if (await storage.passkeys.findById(passkey.id))
      return new Refused(`passkeys[${index}].id`, "is registered to another account");
  }
  for (const [index, identity] of record.identities.entries()) {
    if (await storage.identities.find(identity.provider, identity.subject)) {
      return new Refused(`identities[${index}]`, "is linked to another account");
    }
  }
  return null;
}

/** A checked record as the one unit {@link UserStore.createAccount} stores: the secret sealed (TOTP-6), the codes hashed (RC-2). */
function accountOf(auth: Auth, record: CheckedRecord): NewAccount {
  const { user } = record;
  return {
    user,
    totp:
      record.totpSecret === null
        ? null
        : {
            secret: sealTotpSecret(auth, user.id, record.totpSecret),
            enabled: true,
            lastUsedStep: -1,
            createdAt: user.createdAt,
          },
    recoveryCodeHashes: record.recoveryCodes.map((code) => hashRecoveryCode(user.id, code)),
    passkeys: record.passkeys,
    identities: record.identities,
  };
}

/** What became of a record. */
type Outcome = Verdict | { kind: "imported" } | { kind: "refused"; refused: Refused };

/** Decides a record against the storage as it is now: its username's account, or a key another account holds. */
async function decide(auth: Auth, record: CheckedRecord): Promise<Verdict | Refused | null> {
  const existing = await auth.storage.users.findByUsernameKey(record.user.usernameKey);
  if (existing) return verdictOn(auth, existing, record);
  return storageConflict(auth, record);
}

/**
 * Decides a record and, unless `dryRun`, writes it whole with one `createAccount` (IM-1). When
 * the store refuses it (another writer took a key since the checks; nothing was written), the
 * record is decided again against what that writer stored.
 */
async function settle(auth: Auth, record: CheckedRecord, dryRun: boolean): Promise<Outcome> {
  const decided = await decide(auth, record);
  if (decided instanceof Refused) return { kind: "refused", refused: decided };
  if (decided !== null) return decided;
  if (dryRun) return { kind: "imported" };
  const created = await auth.storage.users.createAccount(accountOf(auth, record));
  if (created) {
    const userId = typeof created === "string" ? created : record.user.id;
    auth.emit({ type: "user.created", userId, by: "import", at: auth.now() });
    return { kind: "imported" };
  }
  const again = await decide(auth, record);
  if (again instanceof Refused) return { kind: "refused", refused: again };
  return (
    again ?? {
      kind: "refused",
      refused: new Refused("record", "another account took its username, id, address, credential id or link as it was written"),
    }
  );
}

const count = (counts: Record<string, number>, key: string) => {
  counts[key] = (counts[key] ?? 0) + 1;
};

/** The reason a refusal is counted under: its field without list positions, and its reason. */
const reasonKey = (refused: Refused) => `${refused.field.replace(/\[\d+\]/g, "[]")}: ${refused.reason}`;

/**
 * Imports users from another system (IM-1): each record is an {@link ImportedUser}, read as
 * it comes from `records` (a list, a generator or a stream of parsed lines) with at most
 * `concurrency` records in hand, so a million records take no more memory than a thousand.
 *
 * Each record is checked whole before anything of it is written: every field (the password
 * hash by `parseImportedPasswordHash`, the TOTP secret's length, the recovery codes' form, each
 * passkey's public key and backup flags as registration checks them (WA-2, WA-3), each provider
 * link), then against the storage (an id, a verified address, a credential id or a provider link
 * held by another account). A bad record is refused whole, with its 1-based position and the
 * field and reason, never with the value of a hash, secret or code. A good one is written as one
 * unit by `storage.users.createAccount` (IM-1): the user, the TOTP secret sealed under the
 * configured encryption key and enabled (TOTP-6), the recovery codes as hashes (RC-2), the
 * passkeys and the links, all or nothing, so no account ever signs in without the second factor
 * its record carries. The password hash is verified at sign-in and re-hashed to argon2id at the
 * first success (PW-1).
 *
 * A username that exists is never changed. With the same data (same fields, TOTP secret,
 * recovery codes, passkeys and links) the record counts as `unchanged`, so running the same
 * input again changes nothing. When the account lacks a factor the record carries (no enabled
 * TOTP factor, no recovery code at all, a passkey or link of the record not its own), it is
 * `incomplete` ({@link ImportIncomplete}, `onIncomplete`): it signs in without that factor, as an
 * import cut part way by releases before issue 36 could leave it, and the operator must act
 * (docs/importing.md). Else, with other data, it is `skipped` ({@link existsWithOtherData}), as is
 * a record whose `id` names another account. Records that share a username, id, verified address,
 * credential id or link are handled one after the other, so the second is refused or unchanged,
 * never written in part; a key another writer takes between the checks and the write refuses
 * nothing written, and the record is decided again.
 *
 * A failing storage stops the import: the error is thrown once the records in hand are done.
 * Every account written is whole; running the input again imports the rest.
 *
 * @example
 * ```ts
 * const summary = await importUsers(auth, [
 *   { username: "alice", email: "alice@example.com", passwordHash: "$2b$12$…", roles: ["admin"] },
 * ], { onRefused: (refusal) => console.error(`line ${refusal.position}: ${refusal.field} ${refusal.reason}`) });
 * ```
 */
export async function importUsers(
  auth: Auth,
  records: Iterable<unknown> | AsyncIterable<unknown>,
  options: ImportUsersOptions = {},
): Promise<ImportSummary> {
  const dryRun = options.dryRun === true;
  const concurrency = options.concurrency ?? 8;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new TypeError("importUsers: concurrency must be a whole number of at least 1");
  const summary: ImportSummary = {
    dryRun,
    read: 0,
    imported: 0,
    unchanged: 0,
    skipped: 0,
    refused: 0,
    incomplete: 0,
    skippedByReason: {},
    refusedByReason: {},
  };
  const claims = new Map<string, Promise<void>>();
  const running = new Set<Promise<void>>();
  let failure: { error: unknown } | null = null;

  const refuse = (position: number, refused: Refused) => {
    summary.refused += 1;
    count(summary.refusedByReason, reasonKey(refused));
    options.onRefused?.({ position, field: refused.field, reason: refused.reason });
  };

  let previousClaimed: Promise<void> = Promise.resolve();

  async function handle(position: number, value: unknown, claimedAfter: Promise<void>, claimed: () => void): Promise<void> {
    let record: CheckedRecord;
    try {
      record = await checkRecord(auth, value);
    } catch (error) {
      await claimedAfter;
      claimed();
      if (error instanceof Refused) return refuse(position, error);
      throw error;
    }
    // Records claim their keys in the order they come, so the first of two records sharing one is the one written.
    await claimedAfter;
    const keys = claimedKeys(record);
    const before = keys.map((key) => claims.get(key)).filter((claim) => claim !== undefined);
    let release = () => {};
    const done = new Promise<void>((resolve) => {
      release = resolve;
    });
    for (const key of keys) claims.set(key, done);
    claimed();
    try {
      await Promise.all(before);
      const outcome = await settle(auth, record, dryRun);
      const { username } = record.user;
      if (outcome.kind === "refused") return refuse(position, outcome.refused);
      if (outcome.kind === "incomplete") {
        summary.incomplete += 1;
        options.onIncomplete?.({ position, username, reason: existsWithoutItsFactors, missing: outcome.missing });
      } else if (outcome.kind === "other") {
        summary.skipped += 1;
        count(summary.skippedByReason, existsWithOtherData);
        options.onSkipped?.({ position, username, reason: existsWithOtherData });
      } else {
        summary[outcome.kind] += 1;
      }
    } finally {
      record.totpSecret?.fill(0);
      for (const key of keys) if (claims.get(key) === done) claims.delete(key);
      release();
    }
  }

  let position = 0;
  for await (const value of records) {
    position += 1;
    summary.read += 1;
    let claimed = () => {};
    const claimedAfter = previousClaimed;
    previousClaimed = new Promise<void>((resolve) => {
      claimed = resolve;
    });
    const task = handle(position, value, claimedAfter, claimed).then(
      () => options.onProgress?.(summary),
      (error: unknown) => {
        failure ??= { error };
      },
    );
    running.add(task);
    void task.finally(() => running.delete(task));
    while (running.size >= concurrency) await Promise.race(running);
    if (failure) break;
  }
  await Promise.all(running);
  if (failure) throw (failure as { error: unknown }).error;
  return summary;
}
