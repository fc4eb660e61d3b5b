import type { Auth } from "../auth.js";
import type { IdentityRecord, NewAccount, PasskeyRecord, TotpRecord, UserRecord } from "../storage/types.js";
import { hashRecoveryCode } from "../totp/recovery-codes.js";
import { openTotpSecret, sealTotpSecret } from "../totp/totp-secret.js";
import { storedFieldValues } from "../user-fields/values.js";
import { emailKeyOf } from "../users/email.js";
import { type CheckedRecord, Refused } from "./check-record.js";

/** The text of the reason of {@link ImportSkip} for a username that exists with other data. */
export const existsWithOtherData = "exists with different data";

/** The text of the reason of {@link ImportIncomplete}: the account exists without a factor its record carries. */
export const existsWithoutItsFactors = "exists without factors its record carries";

/** The keys no two records may hold at once, so that records sharing one are checked and written one after the other. */
export function claimedKeys(record: CheckedRecord): string[] {
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
export type Outcome = Verdict | { kind: "imported" } | { kind: "refused"; refused: Refused };

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
export async function settle(auth: Auth, record: CheckedRecord, dryRun: boolean): Promise<Outcome> {
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
