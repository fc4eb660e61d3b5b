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

/** Makes the {@link PasswordHasher} for a configuration. */
export function createPasswordHasher(config: ResolvedConfig["password"], randomBytes: (size: number) => Uint8Array): PasswordHasher {
  const limiter = createLimiter(config.maxConcurrentHashes, config.maxQueuedHashes);
  const options = { algorithm: argon2id, ...config.hashing, outputLen: 32 };
  const hashPassword = (password: string) =>
    limiter.run(() => hash(password, { ...options, salt: Buffer.from(randomBytes(16)) }));
  let dummy: Promise<string> | undefined;

  return {
    hash: hashPassword,
    async verify(phc, password) {
      if (!phcParameters(phc)) return false;
      return limiter.run(() => verify(phc, password).catch(() => false));
    },
    async verifyDummy(password) {
      dummy ??= hashPassword(Buffer.from(randomBytes(24)).toString("base64url"));
      const phc = await dummy;
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
