import type { Auth } from "../auth.js";
import { sealedBindPassword } from "../directory/policy-store.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { sealedTotpSecret } from "../totp/totp-secret.js";
import type { SealedKind, SealedValue } from "./sealed-value.js";

export type { SealedKind } from "./sealed-value.js";

/** Counts of sealed values by the id of the key that sealed them. */
export type CountsByKey = Record<string, number>;

/** What {@link resealSecrets} found and did, for one kind of sealed value or for all of them. */
export interface ResealCounts {
  /** The values found, by the id of the key that sealed them, before any was sealed again. */
  sealedWith: CountsByKey;
  /** How many were sealed again under the current key (always 0 in a dry run). */
  resealed: number;
  /**
   * The values left under a key other than the current one when the run ended, by key id: in a
   * dry run every one found, otherwise those no listed key opens, the pending TOTP setups kept, and
   * any changed meanwhile to a value still under an old key. A key may leave the keyring once it
   * has none here (and none in a run after the last instance stopped sealing with it).
   */
  stillOld: CountsByKey;
  /** How many no listed key opens (a key id not in the keyring, or an altered value): left as they are, never deleted; counted in `stillOld` too. */
  failed: number;
}

/** The answer of {@link resealSecrets}: the counts over every kind, then by kind. No secret, sealed or opened, is in it. */
export interface ResealReport extends ResealCounts {
  dryRun: boolean;
  /** The id of the key values are sealed again under (`secrets.encryption.current`). */
  current: string;
  /**
   * Pending TOTP setups (not yet enabled) left under an old key because `totp.recoveryCodesAtSetup`
   * is on: the recovery codes their setup showed derive from their sealed form (RC-4), so sealing
   * them again would change the codes the user wrote down. Counted in `stillOld`; each is
   * sealed again by a run after its user enables it, or replaced when the user sets up again.
   */
  keptPending: number;
  /** The same counts for each kind of sealed value: enabled TOTP secrets, pending ones, the directory bind password. */
  byKind: Record<SealedKind, ResealCounts>;
}

/** A sealed value no key of the keyring opens, as {@link ResealOptions.onUnopenable} hears of it: whose it is, never what it holds. */
export interface UnopenableValue {
  kind: SealedKind;
  /** The user id of a TOTP secret, `directory.policy` for the bind password. */
  owner: string;
  /** The key id the value names. */
  keyId: string;
}

/** Options of {@link resealSecrets}. */
export interface ResealOptions {
  /** Open and count, and write nothing. */
  dryRun?: boolean;
  /** How many users are read at a time (their TOTP factors read and written together): 1 to 1000, default 100. */
  batchSize?: number;
  /** Hears of each value no key of the keyring opens (left as it is). */
  onUnopenable?(value: UnopenableValue): void;
}

const defaultBatchSize = 100;
const maxBatchSize = 1000;
/** How many times a value changed meanwhile, and still under an old key, is read and sealed again. */
const attemptsPerValue = 3;

const kinds: readonly SealedKind[] = ["totpSecret", "pendingTotpSecret", "directoryBindPassword"];

const add = (counts: CountsByKey, keyId: string, count = 1) => {
  counts[keyId] = (counts[keyId] ?? 0) + count;
};

/**
 * Finishes an encryption-key rotation (KR-1): every value sealed at rest (each user's TOTP secret,
 * pending or enabled, and the directory policy's bind password) that a key other than
 * `secrets.encryption.current` sealed is opened with the keyring and sealed again under the
 * current key. Users are read a page at a time (`users.list`, then each one's factor); nothing is
 * held beyond a page. Each value is written back with a compare-and-set (`totp.replaceSecret`,
 * `settings.replace`), so a change made meanwhile (TOTP turned off or set up again, the policy
 * saved) wins, and the value as it is then is sealed again only if it is still under an old key
 * (KR-2). A value no listed key opens is counted and left as it is, never deleted. Values already
 * under the current key are counted, not opened. With `dryRun` it opens and counts, and writes
 * nothing. Running it again after a complete run reseals nothing.
 *
 * OAuth sign-in states (their sealed PKCE verifiers) are not read: they live 10 minutes.
 *
 * @throws {AuthError} 42200 a `batchSize` outside 1 to 1000; a storage error as it comes.
 * @example
 * ```ts
 * const report = await resealSecrets(auth);
 * if (report.failed === 0 && Object.keys(report.stillOld).length === 0) {
 *   // every key but report.current may leave secrets.encryption.keys
 * }
 * ```
 */
export async function resealSecrets(auth: Auth, options: ResealOptions = {}): Promise<ResealReport> {
  const batchSize = options.batchSize ?? defaultBatchSize;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > maxBatchSize) {
    throw new AuthError(ErrorCode.ValidationFailed, `batchSize must be a whole number from 1 to ${maxBatchSize}`);
  }
  const dryRun = options.dryRun === true;
  const current = auth.secretBox.currentKeyId;
  const keepPending = auth.config.totp.recoveryCodesAtSetup;
  const byKind = Object.fromEntries(
    kinds.map((kind) => [kind, { sealedWith: {}, resealed: 0, stillOld: {}, failed: 0 } satisfies ResealCounts]),
  ) as Record<SealedKind, ResealCounts>;
  let keptPending = 0;

  /** Seals `value` again under the current key, or counts why it stays; `attempts` bounds how often a value changed meanwhile is taken up again. */
  const reseal = async (value: SealedValue, attempts: number): Promise<void> => {
    const counts = byKind[value.kind];
    const { keyId } = value.secret;
    if (keyId === current) return;
    if (value.kind === "pendingTotpSecret" && keepPending) {
      keptPending += 1;
      add(counts.stillOld, keyId);
      return;
    }
    let opened: Buffer;
    try {
      opened = auth.secretBox.open(value.secret, value.associatedData);
    } catch {
      counts.failed += 1;
      add(counts.stillOld, keyId);
      options.onUnopenable?.({ kind: value.kind, owner: value.owner, keyId });
      return;
    }
    try {
      if (dryRun) {
        add(counts.stillOld, keyId);
        return;
      }
      if (await value.replace(auth.secretBox.seal(opened, value.associatedData))) {
        counts.resealed += 1;
        return;
      }
    } finally {
      opened.fill(0);
    }
    const now = await value.reread();
    if (now === null || now.secret.keyId === current) return;
    if (attempts > 1) return reseal(now, attempts - 1);
    add(byKind[now.kind].stillOld, now.secret.keyId);
  };

  const visit = async (value: SealedValue) => {
    add(byKind[value.kind].sealedWith, value.secret.keyId);
    await reseal(value, attemptsPerValue);
  };

  let afterUsernameKey: string | undefined;
  for (;;) {
    const users = await auth.storage.users.list({
      limit: batchSize,
      ...(afterUsernameKey === undefined ? {} : { afterUsernameKey }),
    });
    await Promise.all(
      users.map(async (user) => {
        const record = await auth.storage.totp.get(user.id);
        if (record !== null) await visit(sealedTotpSecret(auth, record));
      }),
    );
    if (users.length < batchSize) break;
    afterUsernameKey = users[users.length - 1]?.usernameKey;
  }
  const bindPassword = await sealedBindPassword(auth);
  if (bindPassword !== null) await visit(bindPassword);

  return { dryRun, current, ...totalOf(Object.values(byKind)), keptPending, byKind };
}

/** The counts of every kind added up. */
function totalOf(parts: readonly ResealCounts[]): ResealCounts {
  const total: ResealCounts = { sealedWith: {}, resealed: 0, stillOld: {}, failed: 0 };
  for (const part of parts) {
    for (const [keyId, count] of Object.entries(part.sealedWith)) add(total.sealedWith, keyId, count);
    for (const [keyId, count] of Object.entries(part.stillOld)) add(total.stillOld, keyId, count);
    total.resealed += part.resealed;
    total.failed += part.failed;
  }
  return total;
}
