import { availableParallelism } from "node:os";
import { type OptionNames, fail, positiveInteger, refuseUnknownOptions } from "../config-values.js";

/** The `password` options of `createAuth`: the policy, argon2id's cost and how many hashes run at once. */
export interface PasswordConfig {
  /** Minimum length in characters. Default 8; at least 8. */
  minLength?: number;
  /** Passwords longer than this many UTF-8 bytes are refused before hashing. Default 1024. */
  maxBytes?: number;
  /** argon2id cost. Defaults are OWASP's: memoryCost 19456 KiB, timeCost 2, parallelism 1. */
  hashing?: { memoryCost?: number; timeCost?: number; parallelism?: number };
  /** Hashes computed at once; more wait in line. Default: the cores this process may use, less one, from 1 to 4. */
  maxConcurrentHashes?: number;
  /** Hashes that may wait; past that, requests get 50300. Default 256. */
  maxQueuedHashes?: number;
  /**
   * Verifications of imported hashes (IM-1: bcrypt, scrypt, PBKDF2, argon2, and argon2id dearer
   * than `hashing`) computed at once, in a queue of their own, so that they never hold the
   * argon2id slots of other sign-ins (PW-4). Default 1.
   */
  maxConcurrentImportedHashes?: number;
  /** Imported-hash verifications that may wait; past that, such a sign-in gets 50300. Default 16. */
  maxQueuedImportedHashes?: number;
  /** More passwords to refuse, on top of the built-in list of common ones. */
  blocklist?: Iterable<string>;
  /**
   * Asks whether a new password appears in a data breach, e.g. through a k-anonymity range
   * API (see `docs/examples/breached-passwords.ts`). Called with the NFKC form once every
   * other check passed; true refuses the password with 42200. A hook that throws or rejects
   * refuses it with 50300, its error kept as `cause` (fail closed); to fail open, catch
   * inside the hook and return false.
   */
  isBreached?: (password: string) => boolean | Promise<boolean>;
}

/** {@link PasswordConfig} with its defaults filled in; the blocklist in NFKC lower case. */
export interface ResolvedPasswordConfig {
  minLength: number;
  maxBytes: number;
  hashing: { memoryCost: number; timeCost: number; parallelism: number };
  maxConcurrentHashes: number;
  maxQueuedHashes: number;
  maxConcurrentImportedHashes: number;
  maxQueuedImportedHashes: number;
  blocklist: Set<string>;
  isBreached: ((password: string) => boolean | Promise<boolean>) | undefined;
}

/** The OWASP argon2id parameters (PW-1). */
export const defaultHashing = { memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/**
 * argon2id runs at once by default: one core fewer than the process may use, so that a login
 * flood leaves a core to the event loop and signed-in requests keep their latency, and at most
 * 4, the size of libuv's thread pool that runs them.
 */
function defaultConcurrentHashes(): number {
  return Math.min(4, Math.max(1, availableParallelism() - 1));
}

const passwordOptions = {
  minLength: true,
  maxBytes: true,
  hashing: true,
  maxConcurrentHashes: true,
  maxQueuedHashes: true,
  maxConcurrentImportedHashes: true,
  maxQueuedImportedHashes: true,
  blocklist: true,
  isBreached: true,
} satisfies OptionNames<PasswordConfig>;
const hashingOptions = { memoryCost: true, timeCost: true, parallelism: true } satisfies OptionNames<
  NonNullable<PasswordConfig["hashing"]>
>;

/** Checks the `password` options and fills in their defaults; throws a `TypeError` naming a bad one. */
export function resolvePasswordConfig(config: PasswordConfig | undefined): ResolvedPasswordConfig {
  refuseUnknownOptions(config, passwordOptions, "password.");
  refuseUnknownOptions(config?.hashing, hashingOptions, "password.hashing.");
  const hashing = {
    memoryCost: config?.hashing?.memoryCost ?? defaultHashing.memoryCost,
    timeCost: config?.hashing?.timeCost ?? defaultHashing.timeCost,
    parallelism: config?.hashing?.parallelism ?? defaultHashing.parallelism,
  };
  if (
    !Object.values(hashing).every(Number.isSafeInteger) ||
    hashing.memoryCost < defaultHashing.memoryCost ||
    hashing.timeCost < defaultHashing.timeCost ||
    hashing.parallelism < 1
  ) {
    fail("password.hashing must be at least memoryCost 19456, timeCost 2, parallelism 1 (OWASP argon2id minimum)");
  }
  const minLength = positiveInteger(config?.minLength, "password.minLength", 8, 8);
  const maxBytes = positiveInteger(config?.maxBytes, "password.maxBytes", 1024, 64);
  const isBreached = config?.isBreached;
  if (isBreached !== undefined && typeof isBreached !== "function") {
    const got = isBreached === null ? "null" : typeof isBreached;
    fail(`password.isBreached must be a function (password) => boolean | Promise<boolean>; got ${got}`);
  }
  return {
    minLength,
    maxBytes,
    hashing,
    maxConcurrentHashes: positiveInteger(config?.maxConcurrentHashes, "password.maxConcurrentHashes", defaultConcurrentHashes()),
    maxQueuedHashes: positiveInteger(config?.maxQueuedHashes, "password.maxQueuedHashes", 256, 0),
    maxConcurrentImportedHashes: positiveInteger(config?.maxConcurrentImportedHashes, "password.maxConcurrentImportedHashes", 1),
    maxQueuedImportedHashes: positiveInteger(config?.maxQueuedImportedHashes, "password.maxQueuedImportedHashes", 16, 0),
    blocklist: new Set([...(config?.blocklist ?? [])].map((entry) => entry.normalize("NFKC").toLowerCase())),
    isBreached,
  };
}
