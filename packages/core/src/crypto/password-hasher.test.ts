import { randomBytes as nodeRandomBytes, pbkdf2Sync } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { hash as argon2Hash, verify as argon2Verify } from "@node-rs/argon2";
import { hash as bcryptHash } from "@node-rs/bcrypt";
import bcryptjs from "bcryptjs";
import { describe, expect, it, vi } from "vitest";
import { deferred } from "../../../../test/fixtures/deferred.js";
import { createAuth } from "../auth.js";
import { type AuthConfig, resolveConfig } from "../config.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { memoryStorage } from "../storage/memory.js";
import { parseImportedPasswordHash } from "./imported-password-hash.js";
import { createPasswordHasher, phcParameters } from "./password-hasher.js";

vi.mock("@node-rs/argon2", async (importOriginal) => {
  const argon2 = await importOriginal<typeof import("@node-rs/argon2")>();
  return { ...argon2, hash: vi.fn(argon2.hash), verify: vi.fn(argon2.verify) };
});

vi.mock("@node-rs/bcrypt", async (importOriginal) => {
  const bcrypt = await importOriginal<typeof import("@node-rs/bcrypt")>();
  return { ...bcrypt, hash: vi.fn(bcrypt.hash) };
});

// The EN-2 padding sleeps through this; a test can swap in a recorder for the real wait.
vi.mock("node:timers/promises", async (importOriginal) => {
  const timers = await importOriginal<typeof import("node:timers/promises")>();
  return { ...timers, setTimeout: vi.fn(timers.setTimeout) };
});

/** How many argon2id computations (hash or verify) ran so far. */
const argon2Runs = () => vi.mocked(argon2Hash).mock.calls.length + vi.mocked(argon2Verify).mock.calls.length;

const baseConfig = {
  storage: memoryStorage(),
  issuer: "https://api.example.com",
  audience: "example-api",
  secrets: { signing: "x".repeat(32), encryption: "00".repeat(32) },
};
const defaults = resolveConfig(baseConfig).password;
const randomBytes = (size: number) => new Uint8Array(nodeRandomBytes(size));
/** What the hashers report through `onInternalError`. */
const reported = vi.fn<(error: Error) => void>();
const hasher = createPasswordHasher(defaults, randomBytes, reported);

/** The salt of a PHC string: the fourth `$` segment, unpadded base64. */
const saltOf = (phc: string) => Buffer.from(phc.split("$")[4] as string, "base64");

/**
 * A hasher for other password settings. The dummy hash and the timing reference are kept per
 * process and per argon2id cost, so a test that must make its own uses a cost no other test uses.
 */
const hasherWith = (password: AuthConfig["password"]) =>
  createPasswordHasher(resolveConfig({ ...baseConfig, password }).password, randomBytes, reported);

/**
 * A hasher for its own argon2id memory cost (see above) with `[concurrency, queue]` of the native
 * and the imported-hash queues, the latter set on the resolved options.
 */
const hasherWithQueues = (memoryCost: number, queues: { native: [number, number]; imported: [number, number] }) =>
  createPasswordHasher(
    {
      ...resolveConfig({
        ...baseConfig,
        password: { hashing: { memoryCost }, maxConcurrentHashes: queues.native[0], maxQueuedHashes: queues.native[1] },
      }).password,
      maxConcurrentImportedHashes: queues.imported[0],
      maxQueuedImportedHashes: queues.imported[1],
    },
    randomBytes,
    reported,
  );

/** Makes every `@node-rs/bcrypt` run wait for `release()`; `started` resolves when the first has begun. */
async function holdBcrypt(): Promise<{ started: Promise<void>; release: () => void }> {
  const actual = await vi.importActual<typeof import("@node-rs/bcrypt")>("@node-rs/bcrypt");
  const gate = deferred();
  const first = deferred();
  vi.mocked(bcryptHash).mockImplementation(async (...args) => {
    first.resolve();
    await gate.promise;
    return actual.hash(...args);
  });
  const release = () => {
    vi.mocked(bcryptHash).mockImplementation(actual.hash);
    gate.resolve();
  };
  return { started: first.promise, release };
}

/** Lets every promise chain that can move, move: the next turn of the event loop. */
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The stored form of a bcrypt hash an import read, made by bcryptjs at cost 4. */
async function importedBcrypt(password: string): Promise<string> {
  const parsed = parseImportedPasswordHash(await bcryptjs.hash(password, 4));
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.stored;
}

async function elapsedMs(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

describe("password hasher", () => {
  it("PW-1: a password is stored as an argon2id PHC string with m=19456, t=2, p=1 and a 16-byte salt", async () => {
    const phc = await hasher.hash("correct horse battery staple");
    expect(phc).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
    expect(saltOf(phc)).toHaveLength(16);
    expect(phcParameters(phc)).toEqual({ memoryCost: 19456, timeCost: 2, parallelism: 1 });
    expect(await hasher.verify(phc, "correct horse battery staple")).toBe(true);
    expect(await hasher.verify(phc, "correct horse battery stapl")).toBe(false);
  });

  it("PW-1: the salt is random: the same password hashes differently each time", async () => {
    const [first, second] = await Promise.all([hasher.hash("same password"), hasher.hash("same password")]);
    expect(saltOf(first)).not.toEqual(saltOf(second));
    expect(first).not.toBe(second);
  });

  it("PW-1: a hash with other parameters needs re-hashing; one with the configured parameters does not", async () => {
    const argon2id = 2;
    const weaker = await argon2Hash("pw", { algorithm: argon2id, memoryCost: 8192, timeCost: 2, parallelism: 1 });
    const otherTime = await argon2Hash("pw", { algorithm: argon2id, memoryCost: 19456, timeCost: 3, parallelism: 1 });
    expect(hasher.needsRehash(weaker)).toBe(true);
    expect(hasher.needsRehash(otherTime)).toBe(true);
    expect(hasher.needsRehash(await hasher.hash("pw"))).toBe(false);
    expect(await hasher.verify(otherTime, "pw")).toBe(true);

    const stronger = createPasswordHasher(
      resolveConfig({ ...baseConfig, password: { hashing: { timeCost: 3 } } }).password,
      randomBytes,
      reported,
    );
    expect(stronger.needsRehash(otherTime)).toBe(false);
    expect(stronger.needsRehash(await hasher.hash("pw"))).toBe(true);
  });

  it("PW-1: anything but an argon2id PHC string or a hash an import marked (IM-1) is refused, not verified", async () => {
    const argon2i = await argon2Hash("pw", { algorithm: 1, memoryCost: 19456, timeCost: 2, parallelism: 1 });
    expect(phcParameters(argon2i)).toBeNull();
    expect(await hasher.verify(argon2i, "pw")).toBe(false);
    expect(hasher.needsRehash(argon2i)).toBe(true);
    expect(await hasher.verify("", "pw")).toBe(false);
    expect(await hasher.verify("pw", "pw")).toBe(false);
    expect(await hasher.verify("$argon2id$v=19$m=19456,t=2,p=1$broken", "pw")).toBe(false);
    expect(await hasher.verify("imported:$2b$05$broken", "pw")).toBe(false);
    expect(await hasher.verify("imported:pw", "pw")).toBe(false);
  });

  it("IM-1: a hash an import marked is verified with its own library and always needs re-hashing to argon2id", async () => {
    const argon2i = await argon2Hash("pw", { algorithm: 1, memoryCost: 4096, timeCost: 3, parallelism: 1 });
    const parsed = parseImportedPasswordHash(argon2i);
    if (!parsed.ok) throw new Error(parsed.reason);
    expect(parsed.stored).toBe(`imported:${argon2i}`);
    expect(await hasher.verify(parsed.stored, "pw")).toBe(true);
    expect(await hasher.verify(parsed.stored, "pW")).toBe(false);
    expect(hasher.needsRehash(parsed.stored)).toBe(true);
    const bcrypt = parseImportedPasswordHash(await bcryptjs.hash("\ufb01ve", 4));
    if (!bcrypt.ok) throw new Error(bcrypt.reason);
    expect(await hasher.verify(bcrypt.stored, "\ufb01ve")).toBe(false); // bcryptjs hashed the ligature; sign-in checks NFKC (PW-2)
    const nfkc = parseImportedPasswordHash(await bcryptjs.hash("five", 4));
    if (!nfkc.ok) throw new Error(nfkc.reason);
    expect(await hasher.verify(nfkc.stored, "\ufb01ve")).toBe(true);
  });

  it("IM-1: when the library of an imported hash fails, the sign-in answers false, not the failure", async () => {
    const stored = await importedBcrypt("pw");
    vi.mocked(bcryptHash).mockRejectedValueOnce(new Error("the library failed"));
    await expect(hasher.verify(stored, "pw")).resolves.toBe(false);
    await expect(hasher.verify(stored, "pw")).resolves.toBe(true);
  });

  it("IM-1, PW-4: a password over the byte cap costs no work against an imported hash either", async () => {
    const parsed = parseImportedPasswordHash(await bcryptjs.hash("pw", 4));
    if (!parsed.ok) throw new Error(parsed.reason);
    const bcryptRuns = vi.mocked(bcryptHash).mock.calls.length;
    const before = argon2Runs();
    expect(await hasher.verify(parsed.stored, "a".repeat(1025))).toBe(false);
    expect(argon2Runs()).toBe(before);
    expect(vi.mocked(bcryptHash).mock.calls.length).toBe(bcryptRuns);
    expect(await hasher.verify(parsed.stored, "pw")).toBe(true);
    expect(vi.mocked(bcryptHash).mock.calls.length).toBe(bcryptRuns + 1);
  });

  it("PW-1: needsRehash compares every parameter, each read whole: p=2 needs re-hashing; t=10 and p=10 do not where they are configured", async () => {
    const twoLanes = await argon2Hash("pw", { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 2 });
    expect(hasher.needsRehash(twoLanes)).toBe(true);
    const tenPasses = hasherWith({ hashing: { timeCost: 10 } });
    const own = await tenPasses.hash("pw");
    expect(phcParameters(own)).toEqual({ memoryCost: 19456, timeCost: 10, parallelism: 1 });
    expect(tenPasses.needsRehash(own)).toBe(false);
    const tenLanes = hasherWith({ hashing: { parallelism: 10 } });
    const ownLanes = await tenLanes.hash("pw");
    expect(phcParameters(ownLanes)).toEqual({ memoryCost: 19456, timeCost: 2, parallelism: 10 });
    expect(tenLanes.needsRehash(ownLanes)).toBe(false);
    expect(hasher.needsRehash(ownLanes)).toBe(true);
  });

  it("PW-1: a hash in another system's wrapping is not read as argon2id: Django's argon2$argon2id$…", async () => {
    const django = `argon2${await hasher.hash("pw")}`;
    expect(phcParameters(django)).toBeNull();
    expect(hasher.needsRehash(django)).toBe(true);
    expect(await hasher.verify(django, "pw")).toBe(false);
  });

  it("EN-2: each configuration's dummy hash is made at its own parameters, also after another one made its dummy in the process", async () => {
    // Both hashers are made here, not at module load, so that each reads its cost when the test runs.
    const atDefaults = hasherWith({});
    const slower = hasherWith({ hashing: { timeCost: 3 } });
    const dummyVerifiedBy = async (subject: typeof hasher) => {
      const before = vi.mocked(argon2Verify).mock.calls.length;
      await expect(subject.verify(null, "pw")).resolves.toBe(false);
      return vi
        .mocked(argon2Verify)
        .mock.calls.slice(before)
        .map(([phc]) => phcParameters(String(phc)));
    };
    expect(await dummyVerifiedBy(atDefaults)).toEqual([{ memoryCost: 19456, timeCost: 2, parallelism: 1 }]);
    expect(await dummyVerifiedBy(slower)).toEqual([{ memoryCost: 19456, timeCost: 3, parallelism: 1 }]);
    expect(await dummyVerifiedBy(atDefaults)).toEqual([{ memoryCost: 19456, timeCost: 2, parallelism: 1 }]);
  });

  it("EN-2: the padding target is a moving average (weight 1/8) of verifications at the configured cost, seeded by the dummy hash; only faster answers are padded (injected clock)", async () => {
    const argon2 = await vi.importActual<typeof import("@node-rs/argon2")>("@node-rs/argon2");
    const realSleep = await vi.importActual<typeof import("node:timers/promises")>("node:timers/promises");
    const fresh = hasherWith({ hashing: { memoryCost: 19480 } });
    const current = await fresh.hash("pw");
    const older = await argon2Hash("pw", { algorithm: 2, memoryCost: 1024, timeCost: 2, parallelism: 1 });
    const unreadable = "$argon2id$v=19$m=19480,t=2,p=1$broken";
    let clock = 0;
    const taking = (ms: number) => {
      vi.mocked(argon2Verify).mockImplementationOnce(async (...args) => {
        try {
          return await argon2.verify(...args);
        } finally {
          clock += ms;
        }
      });
    };
    /** Runs one verification whose argon2id step takes `ms` on the clock; the padding it asked for, if any. */
    const padding = async (phc: string | null, ms: number) => {
      taking(ms);
      const before = vi.mocked(sleep).mock.calls.length;
      await fresh.verify(phc, "wrong");
      return vi
        .mocked(sleep)
        .mock.calls.slice(before)
        .map(([delay]) => delay);
    };
    const now = vi.spyOn(performance, "now").mockImplementation(() => clock);
    vi.mocked(sleep).mockImplementation(async () => undefined);
    try {
      vi.mocked(argon2Hash).mockImplementationOnce(async (...args) => {
        const phc = await argon2.hash(...args);
        clock += 100;
        return phc;
      });
      expect(await padding(older, 10)).toEqual([90]); // the dummy hash took 100: the target
      expect(await padding(current, 180)).toEqual([]); // at the configured cost: 100 + (180 − 100) / 8
      expect(await padding(older, 10)).toEqual([100]);
      expect(await padding(older, 110)).toEqual([]); // exactly at the target: nothing to pad
      expect(await padding(older, 150)).toEqual([]); // slower than the target: not padded further
      expect(await padding(unreadable, 5)).toEqual([105]); // not counted, padded like an older hash
      expect(await padding(null, 30)).toEqual([]); // an unknown user counts: 110 + (30 − 110) / 8
      expect(await padding(older, 10)).toEqual([90]);
    } finally {
      now.mockRestore();
      vi.mocked(sleep).mockImplementation(realSleep.setTimeout);
    }
  });

  it("EN-2: with no stored hash verify is false for every password, even the one the dummy hash was made from", async () => {
    const zeros = (size: number) => new Uint8Array(size);
    const fixed = createPasswordHasher(
      resolveConfig({ ...baseConfig, password: { hashing: { memoryCost: 19488 } } }).password,
      zeros,
      reported,
    );
    const dummyPassword = Buffer.from(zeros(24)).toString("base64url");
    await expect(fixed.verify(null, dummyPassword)).resolves.toBe(false);
    const [dummyPhc] = vi.mocked(argon2Verify).mock.lastCall ?? [];
    expect(await argon2Verify(String(dummyPhc), dummyPassword)).toBe(true);
    await expect(fixed.verify("$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW", dummyPassword)).resolves.toBe(
      false,
    );
  });

  it("EN-2: a dummy hash that could not be made (hashing queue full) is made at the next verification, not kept as a failure", async () => {
    const busy = hasherWith({ hashing: { memoryCost: 19464 }, maxConcurrentHashes: 1, maxQueuedHashes: 0 });
    const running = busy.hash("holds the only hashing slot");
    await expect(busy.verify(null, "pw")).rejects.toMatchObject({ code: ErrorCode.Unavailable });
    await running;
    await expect(busy.verify(null, "pw")).resolves.toBe(false);
  });

  it("EN-2: a stored argon2id hash that argon2 cannot read is answered no faster than an unknown user (median ratio, 5 samples)", async () => {
    await hasher.verify(null, "warm up the dummy hash");
    const unreadable = "$argon2id$v=19$m=19456,t=2,p=1$broken";
    const unknown: number[] = [];
    const broken: number[] = [];
    for (let sample = 0; sample < 5; sample += 1) {
      unknown.push(await elapsedMs(() => hasher.verify(null, "pw")));
      broken.push(await elapsedMs(() => hasher.verify(unreadable, "pw")));
    }
    expect(median(broken) / median(unknown)).toBeGreaterThan(0.4);
  });

  it("EN-2: an older, cheaper hash is padded up to the time of a verification at the configured cost, and no further (median ratios, 7 samples)", async () => {
    // The padding target is a moving average of verifications at the configured cost. A hash at
    // m=1024 takes almost no time itself, so its answer time is that target; one at OWASP's former
    // m=15360 takes most of it, so padding past the target would show against the first.
    const nearlyFree = await argon2Hash("pw", { algorithm: 2, memoryCost: 1024, timeCost: 2, parallelism: 1 });
    const formerOwasp = await argon2Hash("pw", { algorithm: 2, memoryCost: 15360, timeCost: 2, parallelism: 1 });
    const current = await hasher.hash("pw");
    await hasher.verify(current, "warm up");
    const atCurrent: number[] = [];
    const atNearlyFree: number[] = [];
    const atFormerOwasp: number[] = [];
    for (let sample = 0; sample < 7; sample += 1) {
      atCurrent.push(await elapsedMs(() => hasher.verify(current, "wrong")));
      atNearlyFree.push(await elapsedMs(() => hasher.verify(nearlyFree, "wrong")));
      atFormerOwasp.push(await elapsedMs(() => hasher.verify(formerOwasp, "wrong")));
    }
    expect(median(atNearlyFree) / median(atCurrent)).toBeGreaterThan(0.5);
    expect(median(atFormerOwasp) / median(atNearlyFree)).toBeLessThan(1.4);
  });

  it("EN-2, IM-1: an imported hash cheaper than the configured argon2id (PBKDF2, 1,000 iterations) is padded to an unknown user's time; a right and a wrong password take the same (median ratios, 7 samples)", async () => {
    const salt = nodeRandomBytes(16);
    const key = pbkdf2Sync("pw", salt, 1000, 32, "sha256").toString("base64");
    const parsed = parseImportedPasswordHash(`pbkdf2_sha256$1000$${salt.toString("hex")}$${key}`);
    if (!parsed.ok) throw new Error(parsed.reason);
    await hasher.verify(null, "warm up the dummy hash");
    const unknown: number[] = [];
    const wrong: number[] = [];
    const right: number[] = [];
    for (let sample = 0; sample < 7; sample += 1) {
      unknown.push(await elapsedMs(() => hasher.verify(null, "pw")));
      wrong.push(await elapsedMs(() => hasher.verify(parsed.stored, "wrong")));
      right.push(await elapsedMs(() => hasher.verify(parsed.stored, "pw")));
    }
    // Unpadded, 1,000 PBKDF2 iterations answer in well under a tenth of an argon2id verification.
    expect(median(wrong) / median(unknown)).toBeGreaterThan(0.5);
    expect(median(right) / median(wrong)).toBeGreaterThan(0.7);
    expect(median(right) / median(wrong)).toBeLessThan(1.4);
  });

  it("EN-2, IM-1: an imported hash that takes longer than the target is not padded further; the padding is asked for only when it answers sooner (injected clock)", async () => {
    const argon2 = await vi.importActual<typeof import("@node-rs/argon2")>("@node-rs/argon2");
    const realSleep = await vi.importActual<typeof import("node:timers/promises")>("node:timers/promises");
    const fresh = hasherWith({ hashing: { memoryCost: 19496 } });
    const parsed = parseImportedPasswordHash(
      await argon2Hash("pw", { algorithm: 1, memoryCost: 1024, timeCost: 2, parallelism: 1 }),
    );
    if (!parsed.ok) throw new Error(parsed.reason);
    let clock = 0;
    const padding = async (ms: number) => {
      vi.mocked(argon2Verify).mockImplementationOnce(async (...args) => {
        try {
          return await argon2.verify(...args);
        } finally {
          clock += ms;
        }
      });
      const before = vi.mocked(sleep).mock.calls.length;
      await fresh.verify(parsed.stored, "wrong");
      return vi
        .mocked(sleep)
        .mock.calls.slice(before)
        .map(([delay]) => delay);
    };
    const now = vi.spyOn(performance, "now").mockImplementation(() => clock);
    vi.mocked(sleep).mockImplementation(async () => undefined);
    try {
      vi.mocked(argon2Hash).mockImplementationOnce(async (...args) => {
        const phc = await argon2.hash(...args);
        clock += 100;
        return phc;
      });
      expect(await padding(10)).toEqual([90]);
      expect(await padding(250)).toEqual([]);
      expect(await padding(100)).toEqual([]); // exactly the target: nothing to wait for
      expect(await padding(40)).toEqual([60]); // an imported hash does not move the target
    } finally {
      now.mockRestore();
      vi.mocked(sleep).mockImplementation(realSleep.setTimeout);
    }
  });

  it("EN-2: before any verification at the configured cost, an older hash is padded to the time the dummy hash took to make", async () => {
    const fresh = hasherWith({ hashing: { memoryCost: 19472 } });
    const older = await argon2Hash("pw", { algorithm: 2, memoryCost: 1024, timeCost: 2, parallelism: 1 });
    await fresh.verify(older, "makes the dummy hash");
    const atOlder: number[] = [];
    for (let sample = 0; sample < 5; sample += 1) atOlder.push(await elapsedMs(() => fresh.verify(older, "wrong")));
    const hashing: number[] = [];
    for (let sample = 0; sample < 3; sample += 1) hashing.push(await elapsedMs(() => fresh.hash("pw")));
    // Unpadded, the m=1024 hash would answer in about a thirtieth of the time of a hash at the configured cost.
    expect(median(atOlder) / median(hashing)).toBeGreaterThan(0.3);
  });

  it("EN-2: without a stored hash, verify spends one argon2id verification against a dummy hash and returns false", async () => {
    await hasher.verify(null, "warm up the dummy hash");
    for (const password of ["whatever", "", "correct horse battery staple"]) {
      const before = vi.mocked(argon2Verify).mock.calls.length;
      await expect(hasher.verify(null, password)).resolves.toBe(false);
      expect(vi.mocked(argon2Verify).mock.calls.length - before, JSON.stringify(password)).toBe(1);
    }
  });

  it("EN-2: a stored hash that is neither argon2id nor marked by an import costs the same dummy verification as no hash at all", async () => {
    await hasher.verify(null, "warm up the dummy hash");
    const bcrypt = "$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW";
    const before = vi.mocked(argon2Verify).mock.calls.length;
    await expect(hasher.verify(bcrypt, "pw")).resolves.toBe(false);
    const verified = vi.mocked(argon2Verify).mock.calls.slice(before);
    expect(verified.map(([phc]) => phcParameters(String(phc)))).toEqual([{ memoryCost: 19456, timeCost: 2, parallelism: 1 }]);
  });

  it("PW-2: a password with a lone surrogate never matches, though argon2 reads it as U+FFFD, and costs no hashing", async () => {
    const stored = await argon2Hash("before \ufffd after", { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 });
    expect(await hasher.verify(stored, "before \ufffd after")).toBe(true);
    const before = argon2Runs();
    for (const typed of ["before \ud800 after", "before \udbff after", "before \udfff after"]) {
      expect(await hasher.verify(stored, typed), JSON.stringify(typed)).toBe(false);
      expect(await hasher.verify(null, typed)).toBe(false);
    }
    expect(argon2Runs()).toBe(before);
  });

  it("PW-2: hash refuses a password that is not well-formed Unicode instead of storing U+FFFD", async () => {
    const error = await hasher.hash("before \ud800 after").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AuthError);
    expect(error).toMatchObject({ code: ErrorCode.ValidationFailed });
  });

  it("PW-2: hash and verify apply NFKC themselves, so callers pass what was typed", async () => {
    const phc = await hasher.hash("\ufb01ve \ufb01sh");
    expect(await hasher.verify(phc, "five fish")).toBe(true);
    expect(await hasher.verify(phc, "\ufb01ve \ufb01sh")).toBe(true);
    expect(await hasher.verify(phc, "FIVE FISH")).toBe(false);
  });

  it("PW-4: over the byte cap of the NFKC form, verify answers false with no argon2id work, stored hash or none", async () => {
    const phc = await hasher.hash("e\u0301".repeat(400));
    expect(await hasher.verify(phc, "e\u0301".repeat(400))).toBe(true);
    expect(await hasher.verify(phc, "\u00e9".repeat(400))).toBe(true);
    const before = argon2Runs();
    for (const typed of ["a".repeat(1025), "\u00e9".repeat(513), "\ufdfa".repeat(32), "x".repeat(1_000_000)]) {
      expect(await hasher.verify(phc, typed)).toBe(false);
      expect(await hasher.verify(null, typed)).toBe(false);
    }
    expect(argon2Runs()).toBe(before);
  });

  it("PW-4: while the imported-hash queue is full of slow verifications, a native sign-in completes, and one more imported verification gets 50300", async () => {
    const queues = hasherWithQueues(19504, { native: [1, 2], imported: [1, 2] });
    const native = await queues.hash("native password");
    expect(await queues.verify(native, "native password")).toBe(true); // also makes the dummy hash
    const imported = await importedBcrypt("imported password");
    const held = await holdBcrypt();
    const finished: string[] = [];
    try {
      const slow = [1, 2, 3].map((run) =>
        queues.verify(imported, "imported password").then((matched) => {
          finished.push(`imported ${run}`);
          return matched;
        }),
      );
      await held.started; // the first holds the imported-hash slot
      await tick(); // and the other two wait behind it: that queue is full
      expect(await queues.verify(native, "native password")).toBe(true);
      finished.push("native");
      await expect(queues.verify(imported, "imported password")).rejects.toMatchObject({ code: ErrorCode.Unavailable });
      expect(await queues.verify(native, "wrong password")).toBe(false);
      expect(finished).toEqual(["native"]);
      held.release();
      expect(await Promise.all(slow)).toEqual([true, true, true]);
      expect(finished).toEqual(["native", "imported 1", "imported 2", "imported 3"]);
    } finally {
      held.release();
    }
  });

  it("PW-4: a stored argon2id hash dearer than the configured parameters (m, or m·t) verifies in the imported-hash queue; one at them or cheaper in the native queue", async () => {
    const queues = hasherWithQueues(19512, { native: [1, 0], imported: [1, 0] });
    const atConfigured = await queues.hash("pw");
    expect(await queues.verify(atConfigured, "pw")).toBe(true);
    const argon2id = (memoryCost: number, timeCost: number, parallelism = 1) =>
      argon2Hash("pw", { algorithm: 2, memoryCost, timeCost, parallelism });
    // Configured: m = 19512, m·t = 39024. Dearer is a larger m (39024 at t = 1, the same m·t) or a larger m·t (t = 3).
    const cheaper = [await argon2id(8192, 4), await argon2id(19512, 1), await argon2id(19512, 2, 4)];
    const dearer = [await argon2id(19512, 3), await argon2id(19520, 2), await argon2id(39024, 1)];
    const held = await holdBcrypt();
    try {
      const holding = queues.verify(await importedBcrypt("pw"), "pw");
      await held.started;
      for (const phc of dearer)
        await expect(queues.verify(phc, "pw"), phc).rejects.toMatchObject({ code: ErrorCode.Unavailable });
      for (const phc of [atConfigured, ...cheaper]) expect(await queues.verify(phc, "pw"), phc).toBe(true);
      held.release();
      expect(await holding).toBe(true);
      for (const phc of dearer) expect(await queues.verify(phc, "pw"), phc).toBe(true);
    } finally {
      held.release();
    }
  });

  it("PW-4, IM-1: a stored hash over the caps (imported by an earlier release) is never verified: false, reported through onInternalError, at the cost of the dummy verification", async () => {
    const subject = hasherWith({ hashing: { memoryCost: 19520 } });
    await subject.verify(null, "makes the dummy hash");
    const salt = nodeRandomBytes(16);
    const b64 = (bytes: Buffer) => bytes.toString("base64").replace(/=+$/, "");
    const fourBlocks = pbkdf2Sync("pw", salt, 400_000, 128, "sha256");
    const overCaps: [string, string][] = [
      [`imported:$pbkdf2-sha256$i=400000,l=128$${b64(salt)}$${b64(fourBlocks)}`, "pbkdf2: 400000 iterations × 4 blocks"],
      [`imported:${await argon2Hash("pw", { algorithm: 1, memoryCost: 65536, timeCost: 5, parallelism: 1 })}`, "argon2: m·t"],
      // argon2id in the library's own form is stored unmarked; dearer than the configured cost and over the caps, it is refused too.
      [await argon2Hash("pw", { algorithm: 2, memoryCost: 65536, timeCost: 5, parallelism: 1 }), "argon2: m·t"],
    ];
    for (const [stored, reason] of overCaps) {
      reported.mockClear();
      const verifiedBefore = vi.mocked(argon2Verify).mock.calls.length;
      expect(await subject.verify(stored, "pw"), stored).toBe(false);
      const verified = vi
        .mocked(argon2Verify)
        .mock.calls.slice(verifiedBefore)
        .map(([phc]) => phcParameters(String(phc)));
      expect(verified).toEqual([{ memoryCost: 19520, timeCost: 2, parallelism: 1 }]);
      expect(reported).toHaveBeenCalledTimes(1);
      const [[error]] = reported.mock.calls as [[Error]];
      const { message } = error;
      expect(message).toContain(reason);
      expect(message).not.toContain(b64(salt));
    }
    reported.mockClear();
    expect(await subject.verify("imported:$2b$05$broken", "pw")).toBe(false);
    expect(reported).toHaveBeenCalledTimes(1);
    // No hash, one that is not marked, and an unreadable argon2id hash at the configured cost are not reported.
    reported.mockClear();
    const unmarkedBcrypt = "$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW";
    for (const stored of [null, unmarkedBcrypt, "$argon2id$v=19$m=19520,t=2,p=1$broken"]) {
      expect(await subject.verify(stored, "pw")).toBe(false);
    }
    expect(reported).not.toHaveBeenCalled();
  });

  it("PW-4: createAuth hands what the hasher reports to onInternalError, with the request id password-hash", async () => {
    const onInternalError = vi.fn();
    const auth = createAuth({ ...baseConfig, onInternalError });
    const overCap = "imported:$2b$13$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";
    expect(await auth.passwords.verify(overCap, "U*U")).toBe(false);
    expect(onInternalError).toHaveBeenCalledTimes(1);
    const [error, requestId] = onInternalError.mock.calls[0] as [Error, string];
    expect(requestId).toBe("password-hash");
    expect(error.message).toContain("bcrypt: the cost must be 4 to 12, not 13");
  });
});
