import { pbkdf2, scrypt, timingSafeEqual } from "node:crypto";
import { argon2, bcrypt } from "../dependencies.js";
import { phcParameters } from "./password-phc.js";

/**
 * A password hash made by another system, as {@link parseImportedPasswordHash} read it (IM-1).
 *
 * - `argon2`: a PHC string of argon2i, argon2d or argon2id, verified by `@node-rs/argon2`.
 * - `bcrypt`: `$2a$`, `$2b$` or `$2y$`, verified by `@node-rs/bcrypt`; `salt` is the 16 bytes
 *   the 22 characters after the cost encode, `checksum` the last 31 characters.
 * - `scrypt`: a PHC string `$scrypt$ln=…,r=…,p=…$salt$key` (the salt's bytes are decoded), or
 *   Better Auth's `salt:key` in hex (N=16384, r=16, p=1, a 64-byte key, and the 32 hex
 *   characters of the salt used as text, as Better Auth does).
 * - `pbkdf2`: a PHC string `$pbkdf2-sha256$…` or `$pbkdf2-sha512$…` (passlib's `$rounds$` or
 *   the PHC spec's `$i=…[,l=…]$`; decoded salt), or Django's `pbkdf2_sha256$iterations$salt$hash`
 *   (and `pbkdf2_sha1$…`), whose salt is text.
 */
export type ImportedPasswordHash =
  | { format: "argon2"; variant: "argon2i" | "argon2d" | "argon2id"; phc: string }
  | { format: "bcrypt"; cost: number; salt: Buffer; checksum: string }
  | { format: "scrypt"; encoding: "phc" | "better-auth"; N: number; r: number; p: number; salt: Buffer; key: Buffer }
  | {
      format: "pbkdf2";
      encoding: "phc" | "django";
      digest: "sha1" | "sha256" | "sha512";
      iterations: number;
      salt: Buffer;
      key: Buffer;
    };

/**
 * What {@link parseImportedPasswordHash} made of a hash: `stored` is the text an import writes
 * to `UserRecord.passwordHash`, or the reason the hash is refused (it never holds the hash).
 */
export type ImportedPasswordHashParse = { ok: true; hash: ImportedPasswordHash; stored: string } | { ok: false; reason: string };

/**
 * What marks a stored password hash as imported: only an import writes it, so a hash in
 * another format that reached `passwordHash` some other way is still refused (PW-1).
 */
export const IMPORTED_HASH_PREFIX = "imported:";

/**
 * The most an imported hash may cost to verify, each format bounded by the work a verification
 * really does (PW-4): bcrypt by its cost (2^cost rounds); scrypt by N·r·p, which also bounds its
 * memory (128·N·r bytes, at most 64 MiB); PBKDF2 by the iterations times the blocks of the key,
 * ceil(key length / digest length), each block running every iteration; argon2 by m·t (KiB
 * passed over) and m, p lanes sharing the m. Measured (`pnpm bench`, figure 13), each format at
 * its cap costs about one verification of bcrypt at cost 12, the hashes of the service this
 * library replaces (PBKDF2-SHA256 up to 1.7 times that): 3 to 47 default argon2id verifications
 * (docs/migrating.md).
 * These admit the defaults of the systems the formats come from (bcrypt 10–12, Django's
 * PBKDF2 up to 1,200,000 iterations, Better Auth's and passlib's scrypt, argon2 up to Django's
 * 100 MiB). A hash over a cap is refused at import, and one stored by an earlier release is
 * never verified (docs/migrating.md).
 */
export const IMPORTED_HASH_LIMITS = {
  bcryptCost: 12,
  scryptWork: 2 ** 19,
  pbkdf2Work: { sha1: 1_000_000, sha256: 1_500_000, sha512: 250_000 },
  argon2Work: 262_144,
  argon2MemoryKiB: 131_072,
  argon2TimeCost: 20,
  parallelism: 16,
} as const;

/** bcrypt reads at most this many bytes of a password: a longer one was never checked whole (PW-2). */
export const BCRYPT_MAX_PASSWORD_BYTES = 72;

const BETTER_AUTH_SCRYPT = { N: 16384, r: 16, p: 1, keyLength: 64 } as const;
const MIN_KEY_BYTES = 16;
const MAX_KEY_BYTES = 128;

const refuse = (reason: string): ImportedPasswordHashParse => ({ ok: false, reason });

/**
 * Decodes unpadded base64 of the PHC string format, also passlib's variant (`.` for `+`);
 * null when the text is not exactly the encoding of its bytes. Node's decoder skips what is
 * not base64 and takes URL-safe characters, so the bytes are encoded again and compared: that
 * refuses any other character, padding, a length no encoding has, and unused bits set.
 */
function decodePhcBase64(text: string): Buffer | null {
  const standard = text.replaceAll(".", "+");
  const bytes = Buffer.from(standard, "base64");
  return bytes.toString("base64").replace(/=+$/, "") === standard ? bytes : null;
}

/** Decodes padded standard base64 (Django's); null when the text is not exactly the encoding of its bytes (see above). */
function decodePaddedBase64(text: string): Buffer | null {
  const bytes = Buffer.from(text, "base64");
  return bytes.toString("base64") === text ? bytes : null;
}

const BCRYPT_ALPHABET = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const BASE64_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** The 16 salt bytes of bcrypt's 22-character salt (bcrypt's own base64 alphabet). */
function decodeBcryptSalt(text: string): Buffer {
  const translated = [...text].map((character) => BASE64_ALPHABET[BCRYPT_ALPHABET.indexOf(character)]).join("");
  return Buffer.from(translated, "base64").subarray(0, 16);
}

function checkKey(name: string, key: Buffer | null, expectedLength?: number): string | null {
  if (key === null) return `${name}: the hash is not valid base64`;
  if (expectedLength !== undefined && key.length !== expectedLength) {
    return `${name}: the hash must be ${expectedLength} bytes, not ${key.length}`;
  }
  if (key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES) {
    return `${name}: the hash must be ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} bytes, not ${key.length}`;
  }
  return null;
}

function parseBcrypt(text: string): ImportedPasswordHashParse {
  const match = /^\$(2[aby])\$(\d\d)\$([./A-Za-z0-9]{22})([./A-Za-z0-9]{31})$/.exec(text);
  if (!match) return refuse("bcrypt: expected $2a$, $2b$ or $2y$, a two-digit cost and 53 characters of salt and hash");
  const cost = Number(match[2]);
  if (cost < 4 || cost > IMPORTED_HASH_LIMITS.bcryptCost) {
    return refuse(`bcrypt: the cost must be 4 to ${IMPORTED_HASH_LIMITS.bcryptCost}, not ${cost}`);
  }
  // 23 bytes in 31 characters: the last holds 4 bits and two zero ones, so bcrypt never computes any other last character.
  if (BCRYPT_ALPHABET.indexOf(text.at(-1) as string) % 4 !== 0) {
    return refuse("bcrypt: the hash ends in a character bcrypt never writes there: it never verifies");
  }
  const hash = { format: "bcrypt", cost, salt: decodeBcryptSalt(match[3] as string), checksum: match[4] as string } as const;
  return { ok: true, hash, stored: IMPORTED_HASH_PREFIX + text };
}

/** The bounds of scrypt's PHC string, whose N is 2^ln: those a verification can meet, and the work cap. */
function scryptBounds(ln: number, r: number, p: number): string | null {
  if (ln < 1) return "scrypt: N must be a power of two above 1";
  if (r < 1 || p < 1 || p > IMPORTED_HASH_LIMITS.parallelism) return "scrypt: r must be at least 1 and p 1 to 16";
  // RFC 7914 §2 and OpenSSL, which Node's crypto.scrypt calls, refuse N ≥ 2^(128·r/8).
  if (ln >= 16 * r) return `scrypt: N must be below 2^(16·r) (RFC 7914), not 2^${ln} with r = ${r}: this hash never verifies`;
  if (2 ** ln * r * p > IMPORTED_HASH_LIMITS.scryptWork)
    return `scrypt: N·r·p is 2^${ln}·${r}·${p}, over the limit of 2^${Math.log2(IMPORTED_HASH_LIMITS.scryptWork)}`;
  return null;
}

function parseScryptPhc(text: string): ImportedPasswordHashParse {
  const match = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,4}),p=(\d{1,4})\$([^$]+)\$([^$]+)$/.exec(text);
  if (!match) return refuse("scrypt: expected $scrypt$ln=…,r=…,p=…$salt$hash");
  const ln = Number(match[1]);
  const N = 2 ** ln;
  const r = Number(match[2]);
  const p = Number(match[3]);
  const bounds = scryptBounds(ln, r, p);
  if (bounds) return refuse(bounds);
  const salt = decodePhcBase64(match[4] as string);
  if (!salt) return refuse("scrypt: the salt is not valid base64");
  const key = decodePhcBase64(match[5] as string);
  const keyProblem = checkKey("scrypt", key);
  if (keyProblem) return refuse(keyProblem);
  const hash = { format: "scrypt", encoding: "phc", N, r, p, salt, key: key as Buffer } as const;
  return { ok: true, hash, stored: IMPORTED_HASH_PREFIX + text };
}

function parseBetterAuthScrypt(text: string): ImportedPasswordHashParse {
  const match = /^([0-9a-f]{32}):([0-9a-fA-F]+)$/.exec(text);
  if (!match) return refuse("scrypt (Better Auth): expected 32 lower-case hex characters of salt, ':', and the key in hex");
  const keyHex = match[2] as string;
  if (keyHex.length !== BETTER_AUTH_SCRYPT.keyLength * 2) {
    return refuse(`scrypt (Better Auth): the key must be ${BETTER_AUTH_SCRYPT.keyLength} bytes (128 hex characters)`);
  }
  const { N, r, p } = BETTER_AUTH_SCRYPT;
  const hash = {
    format: "scrypt",
    encoding: "better-auth",
    N,
    r,
    p,
    salt: Buffer.from(match[1] as string),
    key: Buffer.from(keyHex, "hex"),
  } as const;
  return { ok: true, hash, stored: IMPORTED_HASH_PREFIX + text };
}

/** The digests' output lengths: Django's key length, and the size of one PBKDF2 block. */
const PBKDF2_KEY_BYTES = { sha1: 20, sha256: 32, sha512: 64 } as const;

/** PBKDF2 runs every iteration once per block of the key (RFC 8018 §5.2), so the cap is on their product. */
function pbkdf2WorkProblem(name: string, digest: keyof typeof PBKDF2_KEY_BYTES, iterations: number, key: Buffer): string | null {
  const blocks = Math.ceil(key.length / PBKDF2_KEY_BYTES[digest]);
  const limit = IMPORTED_HASH_LIMITS.pbkdf2Work[digest];
  if (iterations * blocks <= limit) return null;
  return `${name}: ${iterations} iterations × ${blocks} ${blocks === 1 ? "block" : "blocks"} of the key is over the limit of ${limit} for ${digest}`;
}

function parsePbkdf2Phc(text: string): ImportedPasswordHashParse {
  const match = /^\$pbkdf2-(sha256|sha512)\$(?:(\d{1,8})|i=(\d{1,8})(?:,l=(\d{1,3}))?)\$([^$]+)\$([^$]+)$/.exec(text);
  if (!match) return refuse("pbkdf2: expected $pbkdf2-sha256$ or $pbkdf2-sha512$, the iterations, the salt and the hash");
  const digest = match[1] as "sha256" | "sha512";
  const iterations = Number(match[2] ?? match[3]);
  if (iterations < 1) return refuse("pbkdf2: the iterations must be at least 1");
  const salt = decodePhcBase64(match[5] as string);
  if (!salt) return refuse("pbkdf2: the salt is not valid base64");
  const key = decodePhcBase64(match[6] as string);
  const keyProblem = checkKey("pbkdf2", key, match[4] === undefined ? undefined : Number(match[4]));
  if (keyProblem) return refuse(keyProblem);
  const workProblem = pbkdf2WorkProblem("pbkdf2", digest, iterations, key as Buffer);
  if (workProblem) return refuse(workProblem);
  const hash = { format: "pbkdf2", encoding: "phc", digest, iterations, salt, key: key as Buffer } as const;
  return { ok: true, hash, stored: IMPORTED_HASH_PREFIX + text };
}

function parseDjangoPbkdf2(text: string): ImportedPasswordHashParse {
  const match = /^pbkdf2_(sha256|sha1)\$(\d{1,8})\$([^$]+)\$([^$]+)$/.exec(text);
  if (!match) return refuse("pbkdf2 (Django): expected pbkdf2_sha256$iterations$salt$hash");
  const digest = match[1] as "sha256" | "sha1";
  const iterations = Number(match[2]);
  if (iterations < 1) return refuse("pbkdf2 (Django): the iterations must be at least 1");
  const key = decodePaddedBase64(match[4] as string);
  const keyProblem = checkKey("pbkdf2 (Django)", key, PBKDF2_KEY_BYTES[digest]);
  if (keyProblem) return refuse(keyProblem);
  const workProblem = pbkdf2WorkProblem("pbkdf2 (Django)", digest, iterations, key as Buffer);
  if (workProblem) return refuse(workProblem);
  const salt = Buffer.from(match[3] as string);
  const hash = { format: "pbkdf2", encoding: "django", digest, iterations, salt, key: key as Buffer } as const;
  return { ok: true, hash, stored: IMPORTED_HASH_PREFIX + text };
}

function parseArgon2(text: string): ImportedPasswordHashParse {
  const match = /^\$(argon2(?:id|i|d))\$(?:v=(16|19)\$)?m=(\d{1,9}),t=(\d{1,4}),p=(\d{1,4})\$([^$]+)\$([^$]+)$/.exec(text);
  if (!match) return refuse("argon2: expected $argon2i$, $argon2d$ or $argon2id$, v=19, m=…,t=…,p=…, the salt and the hash");
  const [memoryKiB, timeCost, parallelism] = [Number(match[3]), Number(match[4]), Number(match[5])];
  if (memoryKiB > IMPORTED_HASH_LIMITS.argon2MemoryKiB) return refuse("argon2: m is over the 128 MiB limit");
  if (timeCost < 1 || timeCost > IMPORTED_HASH_LIMITS.argon2TimeCost) {
    return refuse(`argon2: t must be 1 to ${IMPORTED_HASH_LIMITS.argon2TimeCost}`);
  }
  if (memoryKiB * timeCost > IMPORTED_HASH_LIMITS.argon2Work) {
    return refuse(`argon2: m·t is ${memoryKiB * timeCost} KiB, over the limit of ${IMPORTED_HASH_LIMITS.argon2Work}`);
  }
  if (parallelism < 1 || parallelism > IMPORTED_HASH_LIMITS.parallelism || memoryKiB < 8 * parallelism) {
    return refuse(`argon2: p must be 1 to ${IMPORTED_HASH_LIMITS.parallelism}, and m at least 8·p`);
  }
  const salt = decodePhcBase64(match[6] as string);
  if (!salt || salt.length < 8) return refuse("argon2: the salt must be base64 of at least 8 bytes");
  const keyProblem = checkKey("argon2", decodePhcBase64(match[7] as string));
  if (keyProblem) return refuse(keyProblem);
  const hash = { format: "argon2", variant: match[1] as "argon2i" | "argon2d" | "argon2id", phc: text } as const;
  // An argon2id string this library reads as its own is stored as it is: PW-1 re-hashes it when its parameters differ.
  return { ok: true, hash, stored: phcParameters(text) ? text : IMPORTED_HASH_PREFIX + text };
}

/**
 * Reads a password hash exported from another system, at import time (IM-1): bcrypt
 * (`$2a$`, `$2b$`, `$2y$`), scrypt (`$scrypt$…` PHC, Better Auth's `salt:key`), PBKDF2
 * (`$pbkdf2-sha256$…`/`$pbkdf2-sha512$…` PHC, Django's `pbkdf2_sha256$…`/`pbkdf2_sha1$…`) and
 * argon2 (`$argon2i$`, `$argon2d$`, `$argon2id$` PHC). An unknown or malformed format, and a
 * hash costing more than {@link IMPORTED_HASH_LIMITS}, is refused here with the reason, so
 * that sign-in never meets one.
 *
 * The result's `stored` is what the import writes to `passwordHash`: the hash behind the
 * `imported:` marker, or an argon2id PHC string this library reads as its own, as it is. Sign-in verifies it and re-hashes the password to argon2id at the first success (PW-1).
 *
 * @example
 * ```ts
 * const parsed = parseImportedPasswordHash("$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW");
 * if (!parsed.ok) refuseRecord(lineNumber, parsed.reason);
 * else user.passwordHash = parsed.stored;
 * ```
 */
export function parseImportedPasswordHash(text: string): ImportedPasswordHashParse {
  if (typeof text !== "string" || text.length === 0) return refuse("the password hash is empty");
  if (text.length > 512) return refuse("the password hash is longer than 512 characters");
  if (/^\$2[aby]\$/.test(text)) return parseBcrypt(text);
  if (/^\$2[^$]*\$/.test(text))
    return refuse("bcrypt: only $2a$, $2b$ and $2y$ are accepted ($2x$ is crypt_blowfish's buggy variant)");
  if (text.startsWith("$scrypt$")) return parseScryptPhc(text);
  if (text.startsWith("$pbkdf2")) return parsePbkdf2Phc(text);
  if (text.startsWith("pbkdf2_")) return parseDjangoPbkdf2(text);
  if (text.startsWith("$argon2")) return parseArgon2(text);
  if (/^[0-9a-fA-F]+:/.test(text)) return parseBetterAuthScrypt(text);
  return refuse(
    "unknown password hash format: accepted are bcrypt, scrypt (PHC or Better Auth), PBKDF2 (PHC or Django) and argon2",
  );
}

/**
 * What a stored `passwordHash` holds as an imported hash: null when it is not marked as one (an
 * argon2id hash of this library, anything without {@link IMPORTED_HASH_PREFIX}); otherwise the
 * marked text read again under today's rules. A hash an earlier release stored under wider caps,
 * or one that no longer reads, is `{ ok: false, reason }`: sign-in never verifies it (PW-4).
 */
export function readStoredImportedHash(stored: string): ImportedPasswordHashParse | null {
  if (!stored.startsWith(IMPORTED_HASH_PREFIX)) return null;
  return parseImportedPasswordHash(stored.slice(IMPORTED_HASH_PREFIX.length));
}

function scryptKey(password: string, hash: { N: number; r: number; p: number; salt: Buffer; key: Buffer }): Promise<Buffer> {
  // Exactly what OpenSSL's scrypt allocates (its B and V arrays, 128·r·p + 128·r·(N + 2) bytes); the bounds checked at import keep it in reach.
  const maxmem = 128 * hash.r * (hash.N + hash.p + 2);
  return new Promise((resolve, reject) =>
    scrypt(password, hash.salt, hash.key.length, { N: hash.N, r: hash.r, p: hash.p, maxmem }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

function pbkdf2Key(password: string, hash: { digest: string; iterations: number; salt: Buffer; key: Buffer }): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    pbkdf2(password, hash.salt, hash.iterations, hash.key.length, hash.digest, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

/**
 * Checks a prepared password (NFKC, within the byte cap: `preparePassword`) against an imported
 * hash with the format's maintained implementation: `@node-rs/argon2`, `@node-rs/bcrypt`, Node's
 * `crypto.scrypt` and `crypto.pbkdf2`, the result compared in constant time (each is computed at
 * the stored length: 31 characters of bcrypt's checksum, the key's length of scrypt and PBKDF2). The whole
 * computation runs for every password, also one bcrypt cannot take whole (over 72 bytes), which
 * then answers false (PW-2). Rejects only when the library fails.
 */
export async function verifyImportedPasswordHash(hash: ImportedPasswordHash, normalized: string): Promise<boolean> {
  switch (hash.format) {
    case "argon2":
      return (await argon2()).verify(hash.phc, normalized);
    case "bcrypt": {
      const computed = await (await bcrypt()).hash(normalized, hash.cost, hash.salt);
      const matched = timingSafeEqual(Buffer.from(computed.slice(-31)), Buffer.from(hash.checksum));
      return matched && Buffer.byteLength(normalized) <= BCRYPT_MAX_PASSWORD_BYTES;
    }
    case "scrypt":
      return timingSafeEqual(await scryptKey(normalized, hash), hash.key);
    case "pbkdf2":
      return timingSafeEqual(await pbkdf2Key(normalized, hash), hash.key);
  }
}
