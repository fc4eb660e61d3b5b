// Figure 13: one sign-in's verification of an imported password hash made at each format's cap
// (IMPORTED_HASH_LIMITS), against one verification of a default argon2id hash (m=19456 KiB,
// t=2, p=1), both through `auth.passwords.verify` of the same auth instance, in the same round.
import { pbkdf2Sync, randomBytes, scryptSync } from "node:crypto";
import { hash as argon2Hash } from "@node-rs/argon2";
import { createAuth, memoryStorage, parseImportedPasswordHash } from "@portcullis/core";
import { type Row, formatNumber, ratiosByRound, spreadOf } from "./stats.js";

const password = "portcullis bench password";
/** bcrypt of `password` at cost 12 (the cap) and 10, made by bcryptjs (the bench has no bcrypt of its own to make one). */
const bcryptAtCap = "$2b$12$CZ5XLEMkMphKzJYkdxzskuy3VEmwRTX3mnIoDVifqLsyH/.yVO7Wu";
const bcryptAtCost10 = "$2b$10$IoBP5yOxvdxX9KwH53xZ4uyr0vCebCNZvhQ2.cpoMCJ0Fj/hrDd2m";
/** Verifications of the default argon2id hash per baseline sample, the median taken: one takes a few tens of milliseconds. */
const baselineVerifications = 5;

const unpadded = (bytes: Buffer) => bytes.toString("base64").replace(/=+$/, "");

/**
 * Each format at its cap, as the text an import reads: the name of the row and how to make it;
 * and bcrypt at cost 10, the most common default, for scale.
 */
function hashesAtTheCaps(): [string, () => Promise<string>][] {
  const salt = randomBytes(16);
  const scrypt = (ln: number, r: number, p: number) => {
    const key = scryptSync(password, salt, 32, { N: 2 ** ln, r, p, maxmem: 128 * r * (2 ** ln + p + 2) });
    return `$scrypt$ln=${ln},r=${r},p=${p}$${unpadded(salt)}$${unpadded(key)}`;
  };
  const pbkdf2 = (digest: "sha256" | "sha512", iterations: number, length: number) => {
    const key = pbkdf2Sync(password, salt, iterations, length, digest);
    return `$pbkdf2-${digest}$i=${iterations},l=${length}$${unpadded(salt)}$${unpadded(key)}`;
  };
  const argon2 = (algorithm: 0 | 1 | 2, memoryCost: number, timeCost: number, parallelism: number) =>
    argon2Hash(password, { algorithm, memoryCost, timeCost, parallelism });
  return [
    ["bcrypt, cost 12 (the cap)", async () => bcryptAtCap],
    ["bcrypt, cost 10 (a common default, not a cap)", async () => bcryptAtCost10],
    ["scrypt, ln=16 r=8 p=1 (N·r·p = 2^19, 64 MiB)", async () => scrypt(16, 8, 1)],
    ["scrypt, ln=12 r=8 p=16 (N·r·p = 2^19)", async () => scrypt(12, 8, 16)],
    ["PBKDF2-SHA256, 1,500,000 × 1 block (32-byte key)", async () => pbkdf2("sha256", 1_500_000, 32)],
    ["PBKDF2-SHA256, 375,000 × 4 blocks (128-byte key)", async () => pbkdf2("sha256", 375_000, 128)],
    [
      "PBKDF2-SHA1 (Django), 1,000,000 × 1 block",
      async () => `pbkdf2_sha1$1000000$benchsalt$${pbkdf2Sync(password, "benchsalt", 1_000_000, 20, "sha1").toString("base64")}`,
    ],
    ["PBKDF2-SHA512, 250,000 × 1 block (64-byte key)", async () => pbkdf2("sha512", 250_000, 64)],
    ["argon2id, m=128 MiB t=2 p=1 (m·t at the cap)", () => argon2(2, 131_072, 2, 1)],
    ["argon2i, m=13107 t=20 p=16 (m·t, t and p at the caps)", () => argon2(1, 13_107, 20, 16)],
  ];
}

async function elapsedMs(run: () => Promise<boolean>): Promise<number> {
  const started = performance.now();
  if (!(await run())) throw new Error("figure 13: a verification of the right password answered false");
  return performance.now() - started;
}

/**
 * Figure 13: `rounds` rounds; in each, every format at its cap is verified once, right after
 * `baselineVerifications` verifications of the default argon2id hash (their median is the
 * round's baseline). Each row is the median of the rounds' ratios.
 */
export async function importedHashFigure(rounds: number): Promise<Row[]> {
  console.log(
    `\nFigure 13: imported hashes at their caps (and bcrypt 10) against a default argon2id verification, ${rounds} round(s)`,
  );
  const auth = createAuth({
    storage: memoryStorage(),
    issuer: "https://api.example.com",
    audience: "bench-api",
    secrets: { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("base64url") },
    sweepInterval: false,
  });
  const native = await auth.passwords.hash(password);
  const cases: { name: string; stored: string; samples: number[]; baselines: number[] }[] = [];
  for (const [name, make] of hashesAtTheCaps()) {
    const parsed = parseImportedPasswordHash(await make());
    if (!parsed.ok) throw new Error(`figure 13: ${name} is refused at import: ${parsed.reason}`);
    cases.push({ name, stored: parsed.stored, samples: [], baselines: [] });
  }
  await elapsedMs(() => auth.passwords.verify(native, password)); // makes the dummy hash
  for (let round = 0; round < rounds; round++) {
    const measured: string[] = [];
    for (const entry of cases) {
      const baseline: number[] = [];
      for (let run = 0; run < baselineVerifications; run++)
        baseline.push(await elapsedMs(() => auth.passwords.verify(native, password)));
      entry.baselines.push(spreadOf(baseline).median);
      entry.samples.push(await elapsedMs(() => auth.passwords.verify(entry.stored, password)));
      measured.push(`${formatNumber(entry.samples[round] as number, 0)} ms`);
    }
    console.log(`  round ${round + 1}/${rounds}: ${measured.join(", ")}`);
  }
  return cases.map(({ name, samples, baselines }) => ({
    figure: `13 imported hash: ${name}`,
    baseline: "default argon2id verification",
    ratio: spreadOf(ratiosByRound(samples, baselines)),
    raw: `${formatNumber(spreadOf(samples).median, 1)} vs ${formatNumber(spreadOf(baselines).median, 1)} ms`,
  }));
}
