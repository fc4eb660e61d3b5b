// Compiled by scripts/check-packages.sh with tsc together with examples/nestjs/src (beside which it
// is copied as check.ts) in the empty project where the packed tarballs are installed, then run
// with node: starts the NestJS example on Nest's Express and Fastify platforms and drives a
// sign-in and the guarded routes over HTTP. Prints one line per platform; exits 1 on any mismatch.
import { randomBytes } from "node:crypto";
import type { INestApplication } from "@nestjs/common";
import { type Auth, createAuth, createUser, memoryStorage } from "@portcullis/core";

interface Answer {
  status: number;
  cacheControl: string | null;
  body: { code?: number; data?: Record<string, unknown> } & Record<string, unknown>;
}

const randomText = (bytes = 32) => randomBytes(bytes).toString("base64url");

async function call(base: string, method: string, path: string, init: { body?: unknown; token?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (init.body !== undefined) headers["content-type"] = "application/json";
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  return { status: response.status, cacheControl: response.headers.get("cache-control"), body: text ? JSON.parse(text) : {} };
}

/** Runs the walk on one running app; returns what differed from the expected answers. */
async function walk(auth: Auth, base: string): Promise<string[]> {
  const problems: string[] = [];
  const expect = (what: string, actual: unknown, expected: unknown) => {
    if (JSON.stringify(actual) !== JSON.stringify(expected)) {
      problems.push(`${what}: got ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
    }
  };
  const signIn = async (username: string, roles: string[]) => {
    const password = randomText(18);
    const user = await createUser(auth, { username, password, roles });
    const answer = await call(base, "POST", "/api/v1/auth/login", { body: { username, password } });
    expect(`POST /api/v1/auth/login as ${username}`, [answer.status, answer.body.code], [200, 0]);
    return { userId: user.id, token: String(answer.body.data?.accessToken) };
  };

  const alice = await signIn("alice", ["admin"]);
  const bob = await signIn("bob", []);

  const profile = await call(base, "GET", "/api/profile", { token: bob.token });
  expect("GET /api/profile with a token", [profile.status, profile.body], [200, { userId: bob.userId, roles: [] }]);
  const anonymous = await call(base, "GET", "/api/profile");
  expect("GET /api/profile without a token", [anonymous.status, anonymous.body.code], [401, 40101]);
  expect("GET /api/profile without a token, Cache-Control", anonymous.cacheControl, "no-store");
  const refused = await call(base, "GET", "/api/admin/report", { token: bob.token });
  expect("GET /api/admin/report without the role", [refused.status, refused.body.code], [403, 40300]);
  const report = await call(base, "GET", "/api/admin/report", { token: alice.token });
  expect(
    "GET /api/admin/report with the role",
    [report.status, report.body],
    [200, { report: "all good", readBy: alice.userId }],
  );
  const me = await call(base, "GET", "/api/v1/auth/me", { token: alice.token });
  expect("GET /api/v1/auth/me", [me.status, me.body.data?.username], [200, "alice"]);
  return problems;
}

// Loaded one by one, so that a package that does not resolve is named in one line.
const platforms: Array<[string, () => Promise<(auth: Auth) => Promise<INestApplication>>]> = [
  ["Express", async () => (await import("./express-app.js")).createExpressApp],
  ["Fastify", async () => (await import("./fastify-app.js")).createFastifyApp],
];
for (const [platform, load] of platforms) {
  const auth = createAuth({
    storage: memoryStorage(),
    issuer: "https://api.example.com",
    audience: "example-api",
    secrets: { signing: randomText(), encryption: randomText() },
  });
  let problems: string[];
  let app: INestApplication | undefined;
  try {
    app = await (await load())(auth);
    await app.listen(0, "127.0.0.1");
    problems = await walk(auth, (await app.getUrl()).replace("[::1]", "127.0.0.1"));
  } catch (error) {
    problems = [error instanceof Error ? `${error.name}: ${error.message}` : String(error)];
  } finally {
    await app?.close();
  }
  if (problems.length === 0) {
    console.log(`nestjs on ${platform}: sign-in, /api/profile, /api/admin/report (40101, 40300, 200), /api/v1/auth/me ok`);
  } else {
    console.error(`nestjs on ${platform}: FAILED\n  ${problems.join("\n  ")}`);
    process.exitCode = 1;
  }
}
