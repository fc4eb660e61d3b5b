// Benchmark harness: `pnpm bench` (tsx bench/run.ts).
//
// Every case is reported as ops/sec and as a ratio against a baseline measured in the same run on the
// same machine, so the numbers compare across machines; nothing here asserts an absolute speed.
// Each case runs for BENCH_SECONDS (default 2) after a short warm-up, then the process exits.
import { randomBytes } from "node:crypto";
import { SignJWT, jwtVerify } from "jose";
import { createAuth, createUser, login, memoryStorage, verifyAccessToken } from "../packages/core/src/index.js";

const seconds = Number(process.env.BENCH_SECONDS ?? "2");
if (!Number.isFinite(seconds) || seconds <= 0) throw new TypeError("BENCH_SECONDS must be a positive number");
const warmupMs = Math.min(300, seconds * 250);

interface Result {
  name: string;
  ops: number;
  opsPerSecond: number;
}

/** Runs `fn` back to back for the warm-up, then for `seconds`, and counts completed calls. */
async function measure(name: string, fn: () => Promise<unknown>): Promise<Result> {
  const warmupEnd = performance.now() + warmupMs;
  while (performance.now() < warmupEnd) await fn();

  const budget = seconds * 1000;
  const start = performance.now();
  let ops = 0;
  let elapsed = 0;
  // Check the clock every batch of calls rather than every call, so timing costs little.
  const batch = 16;
  while (elapsed < budget) {
    for (let i = 0; i < batch; i++) await fn();
    ops += batch;
    elapsed = performance.now() - start;
  }
  return { name, ops, opsPerSecond: (ops / elapsed) * 1000 };
}

function report(baseline: Result, cases: Result[]): void {
  const width = Math.max(...[baseline, ...cases].map((r) => r.name.length));
  const line = (r: Result, ratio: string) =>
    `${r.name.padEnd(width)}  ${Math.round(r.opsPerSecond).toLocaleString("en-US").padStart(12)} ops/s  ${ratio}`;
  console.log(line(baseline, "(baseline)"));
  for (const r of cases) {
    console.log(line(r, `ratio ${(r.opsPerSecond / baseline.opsPerSecond).toFixed(3)} of baseline`));
  }
}

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${seconds}s per case`);

  // (a) Baseline: jose's own HS256 verification with a plain key: the floor for any JWT check.
  const key = randomBytes(32);
  const plainToken = await new SignJWT({ sub: "bench" })
    .setProtectedHeader({ alg: "HS256" })
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(key);
  const baseline = await measure("jose jwtVerify HS256", () => jwtVerify(plainToken, key));

  // (b) Portcullis: signature and claim checks plus the token-version/session check in storage.
  const auth = createAuth({
    storage: memoryStorage(),
    issuer: "https://api.example.com",
    audience: "example-api",
    secrets: {
      signing: randomBytes(32).toString("base64url"),
      encryption: randomBytes(32).toString("base64url"),
    },
  });
  const password = `bench-${randomBytes(12).toString("base64url")}`;
  await createUser(auth, { username: "bench-user", password, roles: ["user"] });
  const signedIn = await login(auth, { username: "bench-user", password });
  if (signedIn.status !== "authenticated") throw new Error(`login returned ${signedIn.status}, expected authenticated`);
  const accessToken = signedIn.tokens.accessToken;
  const portcullis = await measure("portcullis verifyAccessToken", () => verifyAccessToken(auth, { token: accessToken }));

  report(baseline, [portcullis]);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
