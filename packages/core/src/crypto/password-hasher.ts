import { setTimeout as sleep } from "node:timers/promises";
import type { Algorithm } from "@node-rs/argon2";
import { argon2 } from "../dependencies.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import {
  type ImportedPasswordHash,
  parseImportedPasswordHash,
  readStoredImportedHash,
  verifyImportedPasswordHash,
} from "./imported-password-hash.js";
import { createLimiter } from "./limiter.js";
import type { ResolvedPasswordConfig } from "./password-config.js";
import { phcParameters } from "./password-phc.js";
import { preparePassword } from "./password-policy.js";

/**
 * argon2id hashing of passwords as typed, through a concurrency limit (PW-1, PW-4); imported
 * hashes are verified through a limit of their own. Both methods prepare the password
 * themselves ({@link preparePassword}: well-formed Unicode, NFKC, byte cap), so no caller can
 * skip a step or apply one twice differently (PW-2).
 */
export interface PasswordHasher {
  /**
   * Hashes a password, as typed, that passed `assertAcceptablePassword`: an argon2id PHC
   * string of its NFKC form with a random 16-byte salt (PW-1).
   *
   * @throws {AuthError} 42200 when the password cannot be prepared (only when the policy was skipped), 50300 queue full.
   */
  hash(password: string): Promise<string>;
  /**
   * Checks a password, as typed, against a stored hash: an argon2id PHC string, or a hash an
   * import marked as imported (IM-1: bcrypt, scrypt, PBKDF2, argon2i/d, verified with their
   * own libraries). True only for a match.
   *
   * Imported hashes, and argon2id hashes dearer than the configured parameters (a larger m or
   * m·t), are verified in a queue of their own (`password.maxConcurrentImportedHashes`,
   * `maxQueuedImportedHashes`), so that they never hold the slots of argon2id sign-ins (PW-4).
   * One over `IMPORTED_HASH_LIMITS` (stored by an earlier release under wider caps) is not
   * verified: it answers false like an unreadable hash, and is reported through
   * `onInternalError`.
   *
   * Every outcome costs at least about one argon2id verification at the configured parameters
   * (EN-2): with no stored hash (`null`: unknown user, no local password) or one that is
   * neither argon2id nor imported, a dummy hash is verified instead; a hash with other
   * parameters, or an imported one, that finishes sooner than verifications at the configured
   * ones take in this process waits the difference, outside the hashing slot. One that takes
   * longer (bcrypt at cost 12, Django's PBKDF2) is not shortened: docs/migrating.md says what
   * that tells. A password that can never be a stored one (a lone surrogate, over the byte
   * cap) answers false at once, with no hashing, whatever `phc` is.
   *
   * @throws {AuthError} 50300 when the hashing queue, or for an imported hash its own queue, is full.
   * @example
   * ```ts
   * const proven = await auth.passwords.verify(user?.passwordHash ?? null, input.password);
   * ```
   */
  verify(phc: string | null, password: string): Promise<boolean>;
  /** True when `phc` is not argon2id made with the configured parameters: another cost, or an imported hash (PW-1, IM-1). */
  needsRehash(phc: string): boolean;
}

export { phcParameters } from "./password-phc.js";

/** `Algorithm.Argon2id`: the package declares it as an ambient const enum, which isolated modules cannot read. */
const argon2id = 2 as Algorithm.Argon2id;

/** What one argon2id cost costs in this process: its dummy hash, and how long a verification at it takes. */
interface CostReference {
  /** Made on first use and shared by every auth instance of the process; made again if making it failed. */
  dummyPhc: Promise<string>;
  /** Moving average, in milliseconds, of argon2id runs at this cost; seeded by making the dummy hash. */
  averageMs: number;
}

const costReferences = new Map<string, CostReference>();

function recordDuration(reference: CostReference, elapsedMs: number): void {
  reference.averageMs = reference.averageMs === 0 ? elapsedMs : reference.averageMs + (elapsedMs - reference.averageMs) / 8;
}

/**
 * Where a stored hash is verified: argon2id at or under the configured cost in the hashing
 * queue, an imported one (or a dearer argon2id) in the imported-hash queue. One over the caps,
 * or marked as imported but no longer read, is `refused` with the reason; no hash, or one that
 * is neither argon2id nor marked, is null. Neither is verified: the dummy hash is, instead.
 */
type StoredHash =
  | { queue: "native"; phc: string }
  | { queue: "imported"; hash: ImportedPasswordHash }
  | { queue: "refused"; reason: string }
  | null;

/**
 * Makes the {@link PasswordHasher} for a configuration; `report` receives what sign-in must not
 * verify (a stored hash over the caps), for `onInternalError`.
 */
export function createPasswordHasher(
  config: ResolvedPasswordConfig,
  randomBytes: (size: number) => Uint8Array,
  report: (error: Error) => void,
): PasswordHasher {
  const limiter = createLimiter(config.maxConcurrentHashes, config.maxQueuedHashes);
  const importedLimiter = createLimiter(config.maxConcurrentImportedHashes, config.maxQueuedImportedHashes);
  const options = { algorithm: argon2id, ...config.hashing, outputLen: 32 };
  const costKey = `${config.hashing.memoryCost},${config.hashing.timeCost},${config.hashing.parallelism}`;

  const hashInSlot = (normalized: string) =>
    limiter.run(async () => {
      const { hash } = await argon2();
      const started = performance.now();
      const phc = await hash(normalized, { ...options, salt: Buffer.from(randomBytes(16)) });
      return { phc, elapsedMs: performance.now() - started };
    });

  const verifyInSlot = (phc: string, normalized: string) =>
    limiter.run(async () => {
      const { verify } = await argon2();
      const started = performance.now();
      const outcome = await verify(phc, normalized).then(
        (matched) => ({ matched, malformed: false }),
        () => ({ matched: false, malformed: true }),
      );
      return { ...outcome, elapsedMs: performance.now() - started };
    });

  const verifyImportedInSlot = (imported: ImportedPasswordHash, normalized: string) =>
    importedLimiter.run(async () => {
      const started = performance.now();
      const matched = await verifyImportedPasswordHash(imported, normalized).catch(() => false);
      return { matched, elapsedMs: performance.now() - started };
    });

  const currentCost = (): CostReference => {
    const known = costReferences.get(costKey);
    if (known) return known;
    const made = hashInSlot(Buffer.from(randomBytes(24)).toString("base64url"));
    const reference: CostReference = { dummyPhc: made.then(({ phc }) => phc), averageMs: 0 };
    made.then(
      ({ elapsedMs }) => recordDuration(reference, elapsedMs),
      () => costReferences.delete(costKey),
    );
    costReferences.set(costKey, reference);
    return reference;
  };

  const needsRehash = (phc: string) => {
    const parameters = phcParameters(phc);
    return (
      !parameters ||
      parameters.memoryCost !== config.hashing.memoryCost ||
      parameters.timeCost !== config.hashing.timeCost ||
      parameters.parallelism !== config.hashing.parallelism
    );
  };

  const { memoryCost, timeCost } = config.hashing;
  const storedHash = (phc: string | null): StoredHash => {
    if (phc === null) return null;
    const imported = readStoredImportedHash(phc);
    if (imported) return imported.ok ? { queue: "imported", hash: imported.hash } : { queue: "refused", reason: imported.reason };
    const parameters = phcParameters(phc);
    if (!parameters) return null;
    if (parameters.memoryCost <= memoryCost && parameters.memoryCost * parameters.timeCost <= memoryCost * timeCost) {
      return { queue: "native", phc };
    }
    // Dearer than the configured cost: an argon2id hash an import stored as it is, or one made before the cost was lowered.
    const dearer = parseImportedPasswordHash(phc);
    return dearer.ok ? { queue: "imported", hash: dearer.hash } : { queue: "refused", reason: dearer.reason };
  };

  return {
    async hash(password) {
      const prepared = preparePassword(password, config.maxBytes);
      if (!prepared.ok) throw new AuthError(ErrorCode.ValidationFailed, prepared.refusal);
      return (await hashInSlot(prepared.normalized)).phc;
    },
    async verify(phc, password) {
      const prepared = preparePassword(password, config.maxBytes);
      if (!prepared.ok) return false;
      const reference = currentCost();
      // A known user waits for the dummy hash too, so that the first sign-in of a process
      // does not tell unknown users apart (EN-2).
      const dummyPhc = await reference.dummyPhc;
      const found = storedHash(phc);
      if (found?.queue === "imported") {
        const result = await verifyImportedInSlot(found.hash, prepared.normalized);
        // A cheaper imported hash answers no sooner than an unknown user (EN-2); a dearer one is not shortened.
        if (result.elapsedMs < reference.averageMs) await sleep(reference.averageMs - result.elapsedMs);
        return result.matched;
      }
      if (found?.queue === "refused") {
        report(new Error(`A stored password hash was not verified (IMPORTED_HASH_LIMITS, PW-4): ${found.reason}`));
      }
      const stored = found?.queue === "native" ? found.phc : null;
      const result = await verifyInSlot(stored ?? dummyPhc, prepared.normalized);
      const atCurrentCost = stored === null || !needsRehash(stored);
      if (atCurrentCost && !result.malformed) {
        recordDuration(reference, result.elapsedMs);
      } else if (result.elapsedMs < reference.averageMs) {
        // An older, cheaper hash would answer sooner than an unknown user does (EN-2).
        await sleep(reference.averageMs - result.elapsedMs);
      }
      return stored !== null && result.matched;
    },
    needsRehash,
  };
}
