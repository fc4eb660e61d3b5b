import type { Auth } from "../auth.js";
import { randomId } from "../crypto/ids.js";
import { parseImportedPasswordHash } from "../crypto/imported-password-hash.js";
import { base64url } from "../crypto/random.js";
import { otpauth } from "../dependencies.js";
import { AuthError } from "../errors/auth-error.js";
import { checkRoles } from "../flows/create-user.js";
import { maxRegistrationCounter, passkeyAlgorithms } from "../flows/webauthn-register.js";
import type { IdentityRecord, PasskeyRecord, UserRecord } from "../storage/types.js";
import { normalizeRecoveryCode } from "../totp/recovery-codes.js";
import { totpSecretBytes } from "../totp/totp.js";
import { newUserFields, readFieldInput } from "../user-fields/values.js";
import { normalizeEmail } from "../users/email.js";
import { normalizeUsername } from "../users/username.js";
import { readLabel } from "../webauthn/passkey-info.js";
import { publicKeyProblem } from "../webauthn/public-key.js";
import { UnreadableRecord } from "./import-types.js";

/** The most passkeys, identities and recovery codes one record may hold. */
export const importListLimits = { passkeys: 20, identities: 20, recoveryCodes: 20 } as const;

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
export class Refused extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/** A record checked whole and ready to store. */
export interface CheckedRecord {
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
export async function checkRecord(auth: Auth, value: unknown): Promise<CheckedRecord> {
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
