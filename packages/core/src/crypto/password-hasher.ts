import { type Algorithm, hash, verify } from "@node-rs/argon2";
import type { ResolvedConfig } from "../config.js";
import { createLimiter } from "./limiter.js";

/** argon2id hashing through a concurrency limit (PW-1, PW-4). */
export interface PasswordHasher {
  /** Hashes a normalised password as an argon2id PHC string with a random 16-byte salt. */
  hash(password: string): Promise<string>;
  /** Checks a normalised password against a PHC string; false for any malformed hash. */
  verify(phc: string, password: string): Promise<boolean>;
  /** Spends one verification against a dummy hash, so unknown users cost what known ones do (EN-2). */
  verifyDummy(password: string): Promise<void>;
  /** True when `phc` was made with other parameters than the configured ones (PW-1). */
  needsRehash(phc: string): boolean;
}

/** Reads m, t and p from an argon2id PHC string; null for anything else. */
export function phcParameters(phc: string): { memoryCost: number; timeCost: number; parallelism: number } | null {
  const match = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$/.exec(phc);
  if (!match) return null;
  return { memoryCost: Number(match[1]), timeCost: Number(match[2]), parallelism: Number(match[3]) };
}

/** `Algorithm.Argon2id`: the package declares it as an ambient const enum, which isolated modules cannot read. */
const argon2id = 2 as Algorithm.Argon2id;

const dummyHashes = new Map<string, Promise<string>>();

/** The dummy hash for a cost, made on first use and shared by every auth instance of the process. */
function dummyHash(
  cost: ResolvedConfig["password"]["hashing"],
  hashPassword: (password: string) => Promise<string>,
  randomBytes: (size: number) => Uint8Array,
): Promise<string> {
  const key = `${cost.memoryCost},${cost.timeCost},${cost.parallelism}`;
  let phc = dummyHashes.get(key);
  if (!phc) {
    phc = hashPassword(Buffer.from(randomBytes(24)).toString("base64url"));
    phc.catch(() => dummyHashes.delete(key));
    dummyHashes.set(key, phc);
  }
  return phc;
}

/** Makes the {@link PasswordHasher} for a configuration. */
export function createPasswordHasher(
  config: ResolvedConfig["password"],
  randomBytes: (size: number) => Uint8Array,
): PasswordHasher {
  const limiter = createLimiter(config.maxConcurrentHashes, config.maxQueuedHashes);
  const options = { algorithm: argon2id, ...config.hashing, outputLen: 32 };
  const hashPassword = (password: string) =>
    limiter.run(() => hash(password, { ...options, salt: Buffer.from(randomBytes(16)) }));

  return {
    hash: hashPassword,
    async verify(phc, password) {
      if (!phcParameters(phc)) return false;
      // The dummy hash is made once per process and cost; a known user waits for it too, so
      // that the first sign-in of a process does not tell unknown users apart (EN-2).
      await dummyHash(config.hashing, hashPassword, randomBytes);
      return limiter.run(() => verify(phc, password).catch(() => false));
    },
    async verifyDummy(password) {
      const phc = await dummyHash(config.hashing, hashPassword, randomBytes);
      await limiter.run(() => verify(phc, password).catch(() => false));
    },
    needsRehash(phc) {
      const parameters = phcParameters(phc);
      return (
        !parameters ||
        parameters.memoryCost !== config.hashing.memoryCost ||
        parameters.timeCost !== config.hashing.timeCost ||
        parameters.parallelism !== config.hashing.parallelism
      );
    },
  };
}
