// `portcullis import` on generated records into PostgreSQL: the time it takes and the peak memory
// (VmHWM, the most resident memory the process ever held) of the command's process.
//
//   node --import tsx bench/import-users.ts [records=1000000] [postgres URL=postgres://postgres@127.0.0.1:5432/test]
//
// Writes the records to a temporary JSON Lines file (every 1000th line broken), migrates tables of
// a fresh prefix, runs the command (`node --import tsx packages/kysely/src/cli.ts import …`),
// samples its /proc status every 500 ms, and drops the tables after.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connectStorage, migrate } from "@portcullis/kysely";
import { sql } from "kysely";

const count = Number(process.argv[2] ?? 1_000_000);
const url = process.argv[3] ?? "postgres://postgres@127.0.0.1:5432/test";
const root = fileURLToPath(new URL("../", import.meta.url));
const prefix = `import_bench_${randomBytes(3).toString("hex")}_`;
const bcrypt = "$2b$04$SG9dRh9XJ4a.WqZKVoAhruPOEUF/N981sTz4TS.j4KqJeYi.SH5rW";

const directory = await mkdtemp(join(tmpdir(), "portcullis-import-bench-"));
const file = join(directory, "users.jsonl");
const out = createWriteStream(file);
for (let index = 0; index < count; index += 1) {
  const line =
    index % 1000 === 999
      ? "{ not json"
      : JSON.stringify({ username: `user${index}`, email: `user${index}@example.com`, roles: ["member"], passwordHash: bcrypt });
  if (!out.write(`${line}\n`)) await new Promise<void>((resolve) => out.once("drain", () => resolve()));
}
await new Promise<void>((resolve) => out.end(() => resolve()));

const storage = await connectStorage({ url, prefix, maxConnections: 1 });
await migrate(storage);
await storage.close();

const started = performance.now();
const child = spawn(
  process.execPath,
  ["--import", "tsx", "packages/kysely/src/cli.ts", "import", file, "--url", url, "--prefix", prefix],
  {
    cwd: root,
    env: {
      ...process.env,
      TSX_TSCONFIG_PATH: `${root}tsconfig.json`,
      AUTH_ENCRYPTION_KEY: randomBytes(32).toString("base64url"),
    },
    stdio: ["ignore", "pipe", "ignore"],
  },
);
let stdout = "";
child.stdout.on("data", (chunk: Buffer) => {
  stdout += chunk;
});
let peakKiB = 0;
const samples: number[] = [];
const timer = setInterval(async () => {
  const status = await readFile(`/proc/${child.pid}/status`, "utf8").catch(() => "");
  const hwm = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  if (hwm > 0) peakKiB = hwm;
  if (rss > 0) samples.push(rss);
}, 500);
const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
clearInterval(timer);
const seconds = (performance.now() - started) / 1000;
const tenth = (index: number) => samples[Math.min(samples.length - 1, Math.floor((samples.length * index) / 10))] ?? 0;
console.log(stdout.trim());
console.log(`exit code ${code}; ${count} lines in ${seconds.toFixed(1)} s (${Math.round(count / seconds)} lines/s)`);
console.log(`peak resident memory ${(peakKiB / 1024).toFixed(1)} MiB`);
console.log(
  `resident memory at each tenth of the run (MiB): ${[1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => (tenth(i) / 1024).toFixed(0)).join(" ")}`,
);

const cleanup = await connectStorage({ url, prefix, maxConnections: 1 });
for (const table of [
  "identities",
  "passkeys",
  "recovery_codes",
  "totp",
  "refresh_tokens",
  "sessions",
  "challenges",
  "counters",
  "settings",
  "users",
  "portcullis_schema",
]) {
  await sql.raw(`drop table if exists ${prefix}${table} cascade`).execute(cleanup.db);
}
await cleanup.close();
await rm(directory, { recursive: true, force: true });
