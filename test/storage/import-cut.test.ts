// IM-1 on every SQL store: `portcullis import` (runImport, as the command runs it) of a few hundred
// users, each with a password hash, a TOTP secret and a recovery code, cut by a database failure at
// a random point, then run again through a restored connection. Afterwards every account must hold
// exactly its record's factors: none may sign in with the password alone (issue 36: the user row
// was written before its factors, and the second run counted such accounts as "skipped").
//
// PostgreSQL and MariaDB are reached through the TCP forwarder of the fault tests, which drops the
// n-th chunk a client sends and resets every connection: the server rolls back what each had open.
// PGlite runs in this process and has no connection to cut, so the cut is made where one would
// fall: in front of its `query`, the one call every statement of pgliteStorage goes through. After
// n statements the next fails, either before it runs or after it ran with its answer lost (the
// seed picks), and the engine rolls back an open transaction, as a server does when a client's
// connection drops; every later statement fails until the "connection" is restored. That is the
// real storage code over the real engine, cut between or inside its transactions. (Serving PGlite
// over a socket needs @electric-sql/pglite-socket, which is not installed, and would test `pg`'s
// path instead of pgliteStorage's.)
//
// Each cut point comes from a seed, printed with it; `PORTCULLIS_IMPORT_CUT_SEEDS=7,8` replays
// those seeds. No password is hashed: the import stores the hash it is given.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Auth, createAuth } from "@portcullis/core";
import { type KyselyStorage, connectStorage, migrate } from "@portcullis/kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { hashRecoveryCode } from "../../packages/core/src/totp/recovery-codes.js";
import { openTotpSecret } from "../../packages/core/src/totp/totp-secret.js";
import { mariadbUrl, postgresUrl, serverMissing } from "../../packages/kysely/src/databases.test-support.js";
import { runImport } from "../../packages/kysely/src/import-command.js";
import { pgliteStorageWith } from "../../packages/kysely/src/pglite.js";
import { base32Decode } from "../fixtures/auth.js";
import { describeNeedingService } from "../fixtures/required-service.js";
import { seeded } from "../fixtures/seeded.js";
import { type TcpForwarder, startTcpForwarder } from "../fixtures/tcp-forwarder.js";
import { createScratchDatabase, createScratchSchema } from "./scratch-schema.js";

const recordsPerRun = 300;
const seeds = (process.env.PORTCULLIS_IMPORT_CUT_SEEDS ?? "1,2,3").split(",").map(Number);
/** bcrypt (cost 4) of a password no test signs in with: only parsed, never verified here. */
const bcrypt = "$2b$04$SG9dRh9XJ4a.WqZKVoAhruPOEUF/N981sTz4TS.j4KqJeYi.SH5rW";
const encryptionKey = randomBytes(32).toString("base64url");
const base32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** One user of the file, and what its account must hold. */
interface CutRecord {
  username: string;
  totpSecret: string;
  recoveryCode: string;
}

/** The records of one seed: distinct usernames per seed, a random 20-byte secret and a random code each. */
function recordsOf(seed: number): CutRecord[] {
  const random = seeded(seed);
  const pick = (alphabet: string, length: number) =>
    Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join("");
  return Array.from({ length: recordsPerRun }, (_, index) => ({
    username: `cut${seed}-user${index}`,
    totpSecret: pick(base32, 32),
    recoveryCode: pick(crockford, 16),
  }));
}

const lineOf = ({ username, totpSecret, recoveryCode }: CutRecord) =>
  JSON.stringify({ username, passwordHash: bcrypt, totpSecret, recoveryCodes: [recoveryCode] });

/** A database the import can be cut from, and a way back to it. */
interface CutTarget {
  /** The cut point is drawn from 1 to this: within the first run for every version of the import. */
  range: number;
  /** Arms the cut at the `at`-th unit, `random` picking anything else the target leaves to chance; says where it cuts. */
  arm(at: number, random: () => number): string;
  /** Undoes the cut. */
  restore(): void;
  /** The storage a run of the command opens: through the cut for the first, restored for the second. */
  open(): Promise<KyselyStorage>;
  /** Closes what `open` gave (a no-op where both runs share one storage). */
  done(storage: KyselyStorage): Promise<void>;
  /** The database as it is, not through the cut: what the checks read. */
  direct: KyselyStorage;
  close(): Promise<void>;
}

const connectTimeoutMs = 1000;
const queryTimeoutMs = 2000;

/** PostgreSQL or MariaDB in a scratch schema of its own, reached through a forwarder. */
async function serverTarget(scratch: { url: string; urlVia(port: number): string; drop(): Promise<void> }, port: number) {
  const direct = await connectStorage({ url: scratch.url });
  await migrate(direct);
  const forwarder: TcpForwarder = await startTcpForwarder(port);
  const target: CutTarget = {
    range: recordsPerRun * 3,
    arm(at) {
      void forwarder.cutAtSentChunk(at);
      return `the ${at}th chunk a client sends`;
    },
    restore: () => forwarder.restore(),
    // As the command connects (`maxConnections: 8`), with the fault tests' bounded waits.
    open: () => connectStorage({ url: scratch.urlVia(forwarder.port), maxConnections: 8, connectTimeoutMs, queryTimeoutMs }),
    done: (storage) => storage.close(),
    direct,
    async close() {
      await direct.close();
      await forwarder.close();
      await scratch.drop();
    },
  };
  return target;
}

/** The connection's error when it is cut: what `pg` says of a connection that dropped. */
const cutError = () => Object.assign(new Error("Connection terminated unexpectedly (cut by the test)"), { code: "ECONNRESET" });

/** PGlite in memory, with the cut in front of its `query` (see the top of the file). */
async function pgliteTarget(): Promise<CutTarget> {
  const fromKysely = createRequire(new URL("../../packages/kysely/package.json", import.meta.url));
  // The type of PGlite is not reachable from here: only what this file calls of it.
  type Engine = { query(text: string, values?: unknown[]): Promise<unknown>; close(): Promise<void> };
  const { PGlite } = (await import(fromKysely.resolve("@electric-sql/pglite"))) as {
    PGlite: { create(dataDir: string): Promise<Engine> };
  };
  const engine = await PGlite.create("memory://");
  let cut: { left: number; answerLost: boolean } | null = null;
  let dead = false;
  const database = {
    async query(text: string, values?: unknown[]) {
      if (dead) throw cutError();
      if (cut !== null && --cut.left === 0) {
        const { answerLost } = cut;
        cut = null;
        dead = true;
        if (answerLost) await engine.query(text, values);
        // The server's side of a dropped connection: what it had open is rolled back.
        await engine.query("ROLLBACK");
        throw cutError();
      }
      return engine.query(text, values);
    },
    close: () => engine.close(),
  };
  const storage = await pgliteStorageWith({ dataDir: "memory://" }, async () => ({ PGlite: { create: async () => database } }));
  return {
    range: recordsPerRun * 4,
    arm(at, random) {
      cut = { left: at, answerLost: random() < 0.5 };
      return `statement ${at}, ${cut.answerLost ? "after it ran, its answer lost" : "before it runs"}`;
    },
    restore() {
      cut = null;
      dead = false;
    },
    open: async () => storage,
    done: async () => {},
    direct: storage,
    close: () => storage.close(),
  };
}

/** What a run printed, and its exit code. */
async function runOnce(storage: KyselyStorage, file: string) {
  const lines: string[] = [];
  const output = { out: (line: string) => lines.push(line), err: (line: string) => lines.push(line) };
  const code = await runImport(storage, file, { dryRun: false, env: { AUTH_ENCRYPTION_KEY: encryptionKey }, output });
  return { code, lines };
}

/** The records whose account, as stored, does not hold exactly the record's factors, each with what is wrong. */
async function accountsNotAsRecorded(auth: Auth, records: CutRecord[]): Promise<string[]> {
  const { storage } = auth;
  const wrong: string[] = [];
  for (const record of records) {
    const user = await storage.users.findByUsernameKey(record.username);
    if (user === null) {
      wrong.push(`${record.username}: no account`);
      continue;
    }
    const totp = await storage.totp.get(user.id);
    const secret = totp === null ? null : openTotpSecret(auth, totp.secret, user.id);
    const codes = await storage.recoveryCodes.count(user.id);
    const hasCode = await storage.recoveryCodes.has(user.id, hashRecoveryCode(user.id, record.recoveryCode));
    const problems = [
      user.passwordHash === `imported:${bcrypt}` ? null : "another password hash",
      totp === null ? "no TOTP secret" : totp.enabled ? null : "TOTP not enabled",
      secret === null || secret.equals(Buffer.from(base32Decode(record.totpSecret))) ? null : "another TOTP secret",
      codes === 1 && hasCode ? null : `${codes} recovery codes${hasCode ? "" : ", not its own"}`,
    ].filter((problem) => problem !== null);
    if (problems.length > 0) wrong.push(`${record.username}: ${problems.join(", ")}`);
  }
  return wrong;
}

const targets = [
  { name: "PGlite", missing: async () => null, make: pgliteTarget },
  {
    name: "PostgreSQL",
    missing: () => serverMissing(postgresUrl),
    make: async () => serverTarget(await createScratchSchema(), Number(new URL(postgresUrl).port || 5432)),
  },
  {
    name: "MariaDB",
    missing: () => serverMissing(mariadbUrl),
    make: async () => serverTarget(await createScratchDatabase(), Number(new URL(mariadbUrl).port || 3306)),
  },
];

for (const { name, missing, make } of targets) {
  const describeStore = describeNeedingService("test/storage/import-cut.test.ts", await missing());

  describeStore(`IM-1: portcullis import cut at random points on ${name}`, () => {
    let target: CutTarget;
    let directory: string;
    let auth: Auth;

    beforeAll(async () => {
      target = await make();
      directory = await mkdtemp(join(tmpdir(), "portcullis-import-cut-"));
      auth = createAuth({
        storage: target.direct,
        issuer: "https://portcullis-import.invalid",
        audience: "portcullis-import",
        secrets: { signing: randomBytes(32).toString("base64url"), encryption: encryptionKey },
        sweepInterval: false,
      });
    });

    afterAll(async () => {
      await target?.close();
      if (directory) await rm(directory, { recursive: true, force: true });
    });

    for (const seed of seeds) {
      it(`IM-1: cut at a random point (seed ${seed}), run again: every account holds exactly its record's factors`, {
        timeout: 120_000,
      }, async () => {
        const records = recordsOf(seed);
        const file = join(directory, `users-${seed}.jsonl`);
        await writeFile(file, `${records.map(lineOf).join("\n")}\n`);
        const random = seeded(seed * 7919);
        const at = 1 + Math.floor(random() * target.range);
        const where = target.arm(at, random);
        console.info(`IM-1 import cut on ${name}: seed ${seed}, cut at ${where} (replay: PORTCULLIS_IMPORT_CUT_SEEDS=${seed})`);
        const cutStorage = await target.open();
        const first = await runOnce(cutStorage, file).finally(() => target.done(cutStorage));
        expect(first.code, first.lines.join("\n")).toBe(1);
        expect(first.lines.join("\n")).toContain("import failed");

        target.restore();
        const restored = await target.open();
        const second = await runOnce(restored, file).finally(() => target.done(restored));

        expect(await accountsNotAsRecorded(auth, records)).toEqual([]);
        expect(second.code, second.lines.join("\n")).toBe(0);
        expect(second.lines.find((line) => line.includes(" read, "))).toMatch(
          new RegExp(`^${recordsPerRun} read, \\d+ imported, \\d+ unchanged, 0 skipped, 0 refused`),
        );
      });
    }
  });
}
