// `pnpm bench`: every figure as a ratio against a baseline measured in the same run, so the
// figures compare across machines. Servers and load generators are separate processes, pinned
// to different cores where the machine has two; each comparison runs its cases round-robin
// after a discarded warm-up, and reports the median ratio of its rounds with their range.
// `BENCH_QUICK=1` is a smoke run (one short round) that fails only when something answers wrongly.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  type Auth,
  type Storage,
  type TokenSet,
  createAuth,
  defaultPageSize,
  listUsers,
  login,
  refresh,
  sweepExpired,
  verifyAccessToken,
} from "@portcullis/core";
import type { KyselyStorage } from "@portcullis/kysely";
import { measureKeyCheck } from "./api-key-check.js";
import {
  type BenchSecrets,
  type ServerMode,
  type ServerOptions,
  adminUsersPath,
  apiKeyProtectedPath,
  argon2LoginPath,
  audience,
  issuer,
  jsonPostPath,
  loginPath,
  orgProtectedPath,
  protectedPath,
  refreshPath,
  username,
} from "./common.js";
import { importedHashFigure } from "./imported-hashes.js";
import type { LoadResult, LoadSpec } from "./load.js";
import { type ScratchDatabase, createScratchDatabase, mariadbMissing, recordingMysqlStorage } from "./mariadb.js";
import { checkStorages, measureOrgCheck } from "./org-check.js";
import { type ScratchSchema, createScratchSchema, postgresMissing, postgresUrl } from "./postgres.js";
import {
  type Pinning,
  type RunningServer,
  benchDirectory,
  choosePinning,
  runLoad,
  runToEnd,
  startServer,
  stopLoadProcesses,
} from "./processes.js";
import { fillAtScale, migrateSchema, recordingStorage, sequentialScansIn, withClient } from "./scale.js";
import { type Row, type Spread, formatNumber, formatTable, ratiosByRound, spreadOf } from "./stats.js";

/** The password hash of figure 10's generated users: a string in the stored argon2id format (none of them signs in). */
const scaleFillerHash = "$argon2id$v=19$m=19456,t=2,p=1$c2NhbGVzY2FsZXNjYWxl$Ny3Wz8a4dXqP3l4m0cL5pYkq5a1XqjQ0s2hK9b8v7m4";

const quick = process.env.BENCH_QUICK === "1";
/**
 * Rounds, seconds per measurement, seconds of the discarded warm-up (none in a quick run),
 * cold-import samples. Figures 1–3 compare eleven servers whose rates swing by a fifth from one
 * few-second stretch to the next on a shared machine: more, shorter rounds in the same time
 * give their medians the robustness of five samples. Each of their samples follows a discarded
 * second of the same load: a server idle while ten others were measured starts slower.
 */
const plan = quick
  ? { rounds: 1, seconds: 1, warmupSeconds: 0, importSamples: 5, protectedRoute: { rounds: 1, seconds: 1, rewarmSeconds: 0 } }
  : { rounds: 3, seconds: 5, warmupSeconds: 2, importSamples: 10, protectedRoute: { rounds: 5, seconds: 3, rewarmSeconds: 1 } };
/** Load runs of each case: the rounds and the warm-up. A refresh case needs fresh tokens for each. */
const loadsPerCase = plan.rounds + (plan.warmupSeconds > 0 ? 1 : 0);

/** Connections of the throughput figures (1–3, 6), the login figures (4, 5) and figure 7 (also pgbench's clients and the pool's size). */
const connections = { protectedRoute: 50, login: 16, refresh: 50, postgres: 10 };
/**
 * Figure 5: the protected route's modest load, idle and under the login flood. autocannon sends
 * each second's quota at once, so two connections keep the route from queueing behind itself.
 */
const modestLoad = { connections: 2, overallRate: 200 };
/** Figure 2: distinct access tokens the load rotates through. */
const accessTokenPool = 2000;

const pinning: Pinning = choosePinning();
const secrets: BenchSecrets = {
  BENCH_SIGNING_SECRET: randomBytes(32).toString("base64url"),
  BENCH_PASSWORD: `bench-${randomBytes(18).toString("base64url")}`,
};
const jsonHeaders = { "content-type": "application/json" };

/** One thing measured in turn with the other cases of its comparison. */
interface Case {
  name: string;
  unit: "req/s" | "ms" | "TPS" | "req/CPU s";
  /** Checks, before any load, that the server answers as the measurement expects. */
  probe?: () => Promise<void>;
  /** One sample; `run` counts this case's runs from 0, the warm-up first when there is one. */
  measure: (run: number, seconds: number) => Promise<number>;
}

/** Fails when a load run saw anything but 2xx answers, or no answer at all. */
function checked(name: string, result: LoadResult): LoadResult {
  const problems: string[] = [];
  if (result.non2xx > 0) problems.push(`${result.non2xx} non-2xx answers (by status: ${JSON.stringify(result.statusCodes)})`);
  if (result.errors > 0) problems.push(`${result.errors} errors, ${result.timeouts} of them timeouts`);
  if (result.requests === 0) problems.push("no answer at all");
  if (problems.length > 0) throw new Error(`${name}: ${problems.join("; ")}`);
  return result;
}

/** Fails unless the request answers `expected`. */
async function expectStatus(what: string, url: string, init: RequestInit, expected: number): Promise<void> {
  const response = await fetch(url, init);
  await response.arrayBuffer();
  if (response.status !== expected) {
    throw new Error(`${what}: ${init.method ?? "GET"} ${url} answered ${response.status}, expected ${expected}`);
  }
}

/** A case measured by one load process, as requests per second. */
function throughputCase(name: string, specFor: (run: number) => Omit<LoadSpec, "seconds">, probe?: () => Promise<void>): Case {
  return {
    name,
    unit: "req/s",
    probe,
    measure: async (run, seconds) => checked(name, await runLoad(pinning, { ...specFor(run), seconds })).requestsPerSecond,
  };
}

/**
 * A protected GET measured at `connections.protectedRoute`; the probe checks 200 with the
 * credentials and 401 without.
 */
function protectedRouteCase(name: string, server: RunningServer, headers: Record<string, string> | undefined): Case {
  const url = server.url(protectedPath);
  return throughputCase(
    name,
    () => ({ url, method: "GET", connections: connections.protectedRoute, headers }),
    async () => {
      await expectStatus(name, url, { headers }, 200);
      if (headers) await expectStatus(`${name}, without credentials`, url, {}, 401);
    },
  );
}

/**
 * A bare route with no check, sent the same request as the protected route it is the baseline
 * of, its `Authorization` header included (which it ignores): the ratio then counts only what the
 * check does with the request, not the bytes every client of a protected route sends anyway.
 */
function bareRouteCase(name: string, server: RunningServer, headers: Record<string, string> | undefined): Case {
  const url = server.url(protectedPath);
  return throughputCase(
    name,
    () => ({ url, method: "GET", connections: connections.protectedRoute, headers }),
    () => expectStatus(name, url, { headers }, 200),
  );
}

/**
 * A protected GET measured at `connections.protectedRoute` as requests per CPU second of the
 * server process (its user and system time over the run, every thread, from `/proc`): what a
 * request costs the server, which other work on a busy machine moves far less than the rate.
 * Where there is no `/proc`, requests per second.
 */
function serverCpuCase(
  name: string,
  server: RunningServer,
  url: string,
  headers: Record<string, string> | undefined,
  probe: () => Promise<void>,
): Case {
  return {
    name,
    unit: "req/CPU s",
    probe,
    measure: async (_run, seconds) => {
      const before = server.cpuSeconds();
      const result = checked(
        name,
        await runLoad(pinning, { url, method: "GET", connections: connections.protectedRoute, headers, seconds }),
      );
      const after = server.cpuSeconds();
      return before === null || after === null ? result.requestsPerSecond : result.requests / (after - before);
    },
  };
}

/**
 * Runs the probe and the warm-up of every case, then `rounds` rounds in which each case is
 * measured once (after `rewarmSeconds` of discarded load, when given), round-robin, starting one
 * case later each round. Returns the samples of each case.
 */
async function roundRobin<K extends string>(
  title: string,
  cases: Record<K, Case>,
  { rounds, seconds, rewarmSeconds = 0 }: { rounds: number; seconds: number; rewarmSeconds?: number } = plan,
): Promise<Record<K, number[]>> {
  console.log(`\n${title}`);
  const keys = Object.keys(cases) as K[];
  const runs = new Map<K, number>(keys.map((key) => [key, 0]));
  const measure = (key: K, seconds: number) => {
    const run = runs.get(key) ?? 0;
    runs.set(key, run + 1);
    return cases[key].measure(run, seconds);
  };
  for (const key of keys) {
    await cases[key].probe?.();
    if (plan.warmupSeconds > 0) await measure(key, plan.warmupSeconds);
  }
  const samples = Object.fromEntries(keys.map((key) => [key, [] as number[]])) as Record<K, number[]>;
  for (let round = 0; round < rounds; round++) {
    const measured: string[] = [];
    for (let step = 0; step < keys.length; step++) {
      const key = keys[(round + step) % keys.length] as K;
      if (rewarmSeconds > 0) await measure(key, rewarmSeconds);
      const value = await measure(key, seconds);
      samples[key].push(value);
      const { name, unit } = cases[key];
      measured.push(`${name} ${formatNumber(value, unit === "ms" ? 2 : 0)} ${unit}`);
    }
    console.log(`  round ${round + 1}/${rounds}: ${measured.join(", ")}`);
  }
  return samples;
}

/**
 * A row of the table: the median ratio of the rounds' `value / baseline`, and both raw medians,
 * with one unit for both or a unit each.
 */
function rowOf(
  figure: string,
  baseline: string,
  values: number[],
  baselineValues: number[],
  units: string | [string, string],
  note = "",
): Row {
  const median = (samples: number[]) => formatNumber(spreadOf(samples).median, units === "ms" ? 2 : 0);
  const raw =
    typeof units === "string"
      ? `${median(values)} vs ${median(baselineValues)} ${units}`
      : `${median(values)} ${units[0]} vs ${median(baselineValues)} ${units[1]}`;
  const ratio: Spread = spreadOf(ratiosByRound(values, baselineValues));
  return { figure, baseline, ratio, raw: note ? `${raw}; ${note}` : raw };
}

/** Starts servers at once, runs `body` with them, and stops every one that started, whatever happens. */
async function withServers<K extends string, T>(
  starting: Record<K, Promise<RunningServer>>,
  body: (servers: Record<K, RunningServer>) => Promise<T>,
): Promise<T> {
  const keys = Object.keys(starting) as K[];
  const started = await Promise.allSettled(keys.map((key) => starting[key]));
  const running = started.flatMap((outcome) => (outcome.status === "fulfilled" ? [outcome.value] : []));
  try {
    const failure = started.find((outcome) => outcome.status === "rejected");
    if (failure) throw failure.reason;
    return await body(
      Object.fromEntries(keys.map((key, index) => [key, running[index] as RunningServer])) as Record<K, RunningServer>,
    );
  } finally {
    await Promise.all(running.map((server) => server.stop()));
  }
}

/** Figures 1–3: the protected GET route of every server against bare Express (and Portcullis on Hono against bare Hono). */
function protectedRouteFigures(): Promise<Row[]> {
  const start = (mode: ServerMode, options?: ServerOptions) => startServer(pinning, secrets, mode, options);
  const servers = {
    bareExpress: start("bare-express"),
    portcullis: start("portcullis-express", { accessTokens: accessTokenPool }),
    jwtKey: start("express-jwt-keyobject"),
    jwtString: start("express-jwt-string"),
    passportKey: start("passport-jwt-keyobject"),
    passportString: start("passport-jwt-string"),
    betterAuthCookie: start("better-auth-cookie"),
    betterAuthBearer: start("better-auth-bearer"),
    bareHono: start("bare-hono"),
    portcullisHono: start("portcullis-hono"),
  };
  return withServers(servers, async (s) => {
    // The JWT peers verify Portcullis' own access token: same secret, issuer and audience.
    const bearer = s.portcullis.ready.authHeaders;
    const pool = s.portcullis.ready.accessTokens ?? [];
    const poolUrl = s.portcullis.url(protectedPath);
    const samples = await roundRobin(
      `Figures 1–3: protected GET ${protectedPath}, autocannon -c ${connections.protectedRoute}`,
      {
        bareExpress: bareRouteCase("bare Express", s.bareExpress, bearer),
        portcullis: protectedRouteCase("Portcullis Express", s.portcullis, bearer),
        portcullisNewToken: throughputCase(
          "Portcullis Express, new token per request",
          () => ({ url: poolUrl, method: "GET", connections: connections.protectedRoute, bearerTokens: pool }),
          async () => {
            if (pool.length !== accessTokenPool)
              throw new Error(`the token pool holds ${pool.length} tokens, not ${accessTokenPool}`);
            for (const token of [pool[0], pool[pool.length - 1]]) {
              await expectStatus("a pooled token", poolUrl, { headers: { authorization: `Bearer ${token}` } }, 200);
            }
          },
        ),
        jwtKey: protectedRouteCase("express-jwt KeyObject", s.jwtKey, bearer),
        jwtString: protectedRouteCase("express-jwt string", s.jwtString, bearer),
        passportKey: protectedRouteCase("passport-jwt KeyObject", s.passportKey, bearer),
        passportString: protectedRouteCase("passport-jwt string", s.passportString, bearer),
        betterAuthCookie: protectedRouteCase("Better Auth cookie", s.betterAuthCookie, s.betterAuthCookie.ready.authHeaders),
        betterAuthBearer: protectedRouteCase("Better Auth bearer", s.betterAuthBearer, s.betterAuthBearer.ready.authHeaders),
        bareHono: bareRouteCase("bare Hono", s.bareHono, s.portcullisHono.ready.authHeaders),
        portcullisHono: protectedRouteCase("Portcullis Hono", s.portcullisHono, s.portcullisHono.ready.authHeaders),
      },
      plan.protectedRoute,
    );
    const vsExpress = (figure: string, values: number[]) =>
      rowOf(figure, "bare Express route", values, samples.bareExpress, "req/s");
    return [
      vsExpress("1 Express: Portcullis requireAuth, one token", samples.portcullis),
      vsExpress("1 Express: express-jwt, KeyObject secret", samples.jwtKey),
      vsExpress("1 Express: express-jwt, string secret", samples.jwtString),
      vsExpress("1 Express: passport-jwt, KeyObject secret", samples.passportKey),
      vsExpress("1 Express: passport-jwt, string secret", samples.passportString),
      vsExpress("1 Express: Better Auth getSession, cookie", samples.betterAuthCookie),
      vsExpress("1 Express: Better Auth getSession, bearer plugin", samples.betterAuthBearer),
      vsExpress(
        `2 Express: Portcullis requireAuth, new token per request (pool of ${accessTokenPool})`,
        samples.portcullisNewToken,
      ),
      vsExpress("3 bare Hono route", samples.bareHono),
      rowOf("3 Hono: Portcullis requireAuth, one token", "bare Hono route", samples.portcullisHono, samples.bareHono, "req/s"),
    ];
  });
}

/**
 * Figure 11: Portcullis on Fastify against bare Fastify, measured as figures 1–3 are (same
 * rounds, samples, re-warming and connections), in a comparison of its own so that it can be
 * run alone (`BENCH_FIGURES=11`).
 */
function fastifyFigure(): Promise<Row[]> {
  const start = (mode: ServerMode) => startServer(pinning, secrets, mode);
  return withServers({ bareFastify: start("bare-fastify"), portcullisFastify: start("portcullis-fastify") }, async (s) => {
    const samples = await roundRobin(
      `Figure 11: protected GET ${protectedPath} on Fastify, autocannon -c ${connections.protectedRoute}`,
      {
        bareFastify: bareRouteCase("bare Fastify", s.bareFastify, s.portcullisFastify.ready.authHeaders),
        portcullisFastify: protectedRouteCase("Portcullis Fastify", s.portcullisFastify, s.portcullisFastify.ready.authHeaders),
      },
      plan.protectedRoute,
    );
    return [
      rowOf(
        "11 Fastify: Portcullis requireAuth, one token",
        "bare Fastify route",
        samples.portcullisFastify,
        samples.bareFastify,
        "req/s",
      ),
    ];
  });
}

/** Where figure 12's revocation channel meets: `BENCH_REDIS_URL`, or the machine's Redis. */
const redisUrl = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";

/** Why no Redis answers at {@link redisUrl}, or null when one does. */
async function redisMissing(): Promise<string | null> {
  const { createClient } = await import("redis");
  const probe = createClient({ url: redisUrl, socket: { connectTimeout: 1000, reconnectStrategy: false } });
  probe.on("error", () => {});
  try {
    await probe.connect();
    await probe.ping();
    return null;
  } catch (error) {
    return `no Redis answers at ${redisUrl} (${(error as Error).message}); set BENCH_REDIS_URL`;
  } finally {
    if (probe.isOpen) probe.destroy();
  }
}

/**
 * Figure 12: the protected route on PostgreSQL storage against bare Express, measured as figures
 * 1–3 are: without a revocation channel, as configured by default (the token state read from
 * PostgreSQL on every request, so a revocation is seen at the next one), with a 60 s token-state
 * cache alone (a revocation seen elsewhere within 60 s), and with the cache and a Redis revocation
 * channel (seen everywhere within the channel's latency). Each server on a schema of its own.
 */
async function revocationChannelFigure(): Promise<Row[]> {
  const figures = [
    "12 PostgreSQL: Portcullis requireAuth, no cache, no channel",
    "12 PostgreSQL: Portcullis requireAuth, 60 s cache, no channel",
    "12 PostgreSQL: Portcullis requireAuth, 60 s cache, Redis revocation channel",
  ];
  const baseline = "bare Express route";
  const missing = (await postgresMissing()) ?? (await redisMissing());
  if (missing) {
    console.log(`\nFigure 12 skipped: ${missing}`);
    return figures.map((figure) => ({ figure, baseline, raw: "", skipped: `skipped: ${missing}` }));
  }
  const schemas = await Promise.all([createScratchSchema(), createScratchSchema(), createScratchSchema()]);
  const [uncached, cached, channel] = schemas as [ScratchSchema, ScratchSchema, ScratchSchema];
  const start = (mode: ServerMode, options?: ServerOptions) => startServer(pinning, secrets, mode, options);
  try {
    const servers = {
      bareExpress: start("bare-express"),
      uncached: start("portcullis-express", { postgresUrl: uncached.url }),
      cached: start("portcullis-express", { postgresUrl: cached.url, tokenStateCacheSeconds: 60 }),
      channel: start("portcullis-express", {
        postgresUrl: channel.url,
        tokenStateCacheSeconds: 60,
        revocationRedisUrl: redisUrl,
      }),
    };
    return await withServers(servers, async (s) => {
      const samples = await roundRobin(
        `Figure 12: protected GET ${protectedPath} on PostgreSQL storage, autocannon -c ${connections.protectedRoute}`,
        {
          bareExpress: bareRouteCase("bare Express", s.bareExpress, s.channel.ready.authHeaders),
          uncached: protectedRouteCase("Portcullis PostgreSQL, no cache", s.uncached, s.uncached.ready.authHeaders),
          cached: protectedRouteCase("Portcullis PostgreSQL, 60 s cache", s.cached, s.cached.ready.authHeaders),
          channel: protectedRouteCase("Portcullis PostgreSQL, 60 s cache + channel", s.channel, s.channel.ready.authHeaders),
        },
        plan.protectedRoute,
      );
      return [samples.uncached, samples.cached, samples.channel].map((values, index) =>
        rowOf(figures[index] as string, baseline, values, samples.bareExpress, "req/s"),
      );
    });
  } finally {
    await Promise.all(schemas.map((schema) => schema.drop()));
  }
}

/** The storages figures 14 and 15 compare a route on: memory, PGlite in memory, PostgreSQL when there is one. */
const storageNames = { memory: "memory", pglite: "PGlite", postgres: "PostgreSQL" };
type StorageKey = keyof typeof storageNames;

/** What one of figures 14 and 15 measures, per storage, over HTTP and in the bench process. */
interface PairedStorageFigure {
  figure: number;
  /** The options of each storage's Express server. */
  serverOptions: Partial<ServerOptions>;
  /** The title of the round robin over HTTP. */
  httpTitle: string;
  /** The two cases of a storage's server, each with its probe: the measured one and its baseline. */
  httpCases(server: RunningServer, name: string): { measured: Case; baseline: Case };
  /** The figure's row name and baseline name over HTTP, for a storage's name. */
  httpRow: (name: string) => [figure: string, baseline: string];
  /** The line announcing the in-process part. */
  inProcessTitle: (check: CheckPlan) => string;
  /** The in-process row of a storage. */
  inProcessRow(storage: CheckStorage, check: CheckPlan): Promise<Row>;
  /** The row names and baselines left out without PostgreSQL: over HTTP, in process. */
  postgresRows: [figure: string, baseline: string][];
}

type CheckPlan = { pairs: number; batchMs: number; warmupPairs: number };
type CheckStorage = ReturnType<typeof checkStorages>[number];

/**
 * Runs a {@link PairedStorageFigure}: one Portcullis Express server per storage, both cases of
 * each measured as requests per server CPU second in a round robin, then the in-process rows on
 * the same storages (PostgreSQL in scratch schemas of its own, dropped at the end).
 */
async function pairedStorageFigure(spec: PairedStorageFigure): Promise<Row[]> {
  const missing = await postgresMissing();
  if (missing) console.log(`\nFigure ${spec.figure}'s PostgreSQL rows skipped: ${missing}`);
  const schemas = missing ? [] : await Promise.all([createScratchSchema(), createScratchSchema()]);
  const [serverSchema, inProcessSchema] = schemas;
  try {
    const start = (options: ServerOptions) =>
      startServer(pinning, secrets, "portcullis-express", { ...spec.serverOptions, ...options });
    const storages = {
      memory: start({}),
      pglite: start({ pglite: true }),
      ...(serverSchema ? { postgres: start({ postgresUrl: serverSchema.url }) } : {}),
    } as Record<StorageKey, Promise<RunningServer>>;
    const overHttp = await withServers(storages, async (s) => {
      const keys = Object.keys(s) as StorageKey[];
      const cases: Record<string, Case> = {};
      for (const key of keys) {
        const { measured, baseline } = spec.httpCases(s[key], storageNames[key]);
        cases[`${key}-measured`] = measured;
        cases[`${key}-baseline`] = baseline;
      }
      const samples = await roundRobin(spec.httpTitle, cases, plan.protectedRoute);
      return keys.map((key) =>
        rowOf(
          ...spec.httpRow(storageNames[key]),
          samples[`${key}-measured`] ?? [],
          samples[`${key}-baseline`] ?? [],
          "req/CPU s",
        ),
      );
    });
    const check = quick ? { pairs: 5, batchMs: 20, warmupPairs: 1 } : { pairs: 41, batchMs: 50, warmupPairs: 5 };
    console.log(`\n${spec.inProcessTitle(check)}`);
    const inProcess: Row[] = [];
    for (const storage of checkStorages(inProcessSchema?.url ?? null)) inProcess.push(await spec.inProcessRow(storage, check));
    const skipped = missing
      ? spec.postgresRows.map(([figure, baseline]) => ({ figure, baseline, raw: "", skipped: `skipped: ${missing}` }))
      : [];
    return [...overHttp, ...skipped.slice(0, 1), ...inProcess, ...skipped.slice(1)];
  } finally {
    await Promise.all(schemas.map((schema) => schema.drop()));
  }
}

const medianOf = (values: number[]) => formatNumber(spreadOf(values).median, 0);

/**
 * Figure 14: the protected route that asks for an active organization (`requireAuth(auth, { org:
 * true })`) against the same route without it (`requireAuth(auth)`), with one access token that
 * carries an organization, per storage (memory, PGlite in memory, PostgreSQL when there is one):
 * the ratio counts only what the `org` option adds, the token state (membership and roles
 * included, OR-8) being read either way. Over HTTP, one Portcullis Express server per storage
 * serving both routes, measured as figures 1–3 are; the probe checks that the org route lets the
 * token through and refuses a session without an organization (40300). Then in the bench process,
 * `authorizeRequest` with and without `org` in alternating batches (`org-check.ts`), which a busy
 * machine disturbs far less.
 */
function organizationFigure(): Promise<Row[]> {
  return pairedStorageFigure({
    figure: 14,
    serverOptions: { organization: true },
    httpTitle: `Figure 14: protected GET with and without requireAuth's org option, autocannon -c ${connections.protectedRoute}`,
    httpCases(server, name) {
      const headers = server.ready.authHeaders;
      const plainUrl = server.url(protectedPath);
      const orgUrl = server.url(orgProtectedPath);
      return {
        baseline: serverCpuCase(`${name} requireAuth`, server, plainUrl, headers, async () => {
          await expectStatus(`${name} route`, plainUrl, { headers }, 200);
          await expectStatus(`${name} route, no organization`, plainUrl, { headers: server.ready.noOrgAuthHeaders }, 200);
        }),
        measured: serverCpuCase(`${name} requireAuth { org: true }`, server, orgUrl, headers, async () => {
          await expectStatus(`${name} org route`, orgUrl, { headers }, 200);
          await expectStatus(`${name} org route, no organization`, orgUrl, { headers: server.ready.noOrgAuthHeaders }, 403);
          await expectStatus(`${name} org route, without credentials`, orgUrl, {}, 401);
        }),
      };
    },
    httpRow: (name) => [`14 ${name}: requireAuth { org: true }, over HTTP`, "requireAuth without org, same server"],
    inProcessTitle: (check) =>
      `Figure 14 in process: authorizeRequest with and without { org: true }, ${check.pairs} pairs of batches of about ${check.batchMs} ms of CPU, alternating`,
    async inProcessRow(storage, check) {
      const samples = await measureOrgCheck(storage, check);
      console.log(
        `  ${storage.name}: ${medianOf(samples.withOrg)} vs ${medianOf(samples.without)} calls/CPU s, ${samples.batch} calls a batch`,
      );
      return rowOf(
        `14 ${storage.name}: authorizeRequest { org: true }, in process`,
        "authorizeRequest without org",
        samples.withOrg,
        samples.without,
        "calls/CPU s",
      );
    },
    postgresRows: [
      ["14 PostgreSQL: requireAuth { org: true }, over HTTP", "the same without org"],
      ["14 PostgreSQL: authorizeRequest { org: true }, in process", "the same without org"],
    ],
  });
}

/**
 * Figure 15: the protected route authenticated by an API key against the same route by an access
 * token of the same user, `lastUsedAt` recorded as always (written at most once a minute per key,
 * so a steady stream of one key's requests writes nothing after its first), per storage (memory,
 * PGlite in memory, PostgreSQL when there is one). Over HTTP, one Portcullis Express server per
 * storage whose route is guarded by `requireAuth(auth, { credentials: "any" })`, called with the
 * key and with the token, as requests per server CPU second as figure 14's; the probe checks that
 * the route lets both through and refuses no credentials, and that the plain route refuses the
 * key. Then in the bench process, `verifyApiKey` against `verifyAccessToken` in alternating batches
 * timed in CPU (`api-key-check.ts`). Each reads storage once per call (the key with its user; the
 * token's session and user), the defaults having no token-state cache.
 */
function apiKeyFigure(): Promise<Row[]> {
  const baseline = "verifyAccessToken, same user";
  return pairedStorageFigure({
    figure: 15,
    serverOptions: { apiKey: true },
    httpTitle: `Figure 15: protected GET behind requireAuth { credentials: "any" } by API key and by access token, autocannon -c ${connections.protectedRoute}`,
    httpCases(server, name) {
      const url = server.url(apiKeyProtectedPath);
      const { authHeaders, apiKeyHeaders } = server.ready;
      return {
        baseline: serverCpuCase(`${name} access token`, server, url, authHeaders, async () => {
          await expectStatus(`${name} key route, access token`, url, { headers: authHeaders }, 200);
          await expectStatus(`${name} key route, without credentials`, url, {}, 401);
        }),
        measured: serverCpuCase(`${name} API key`, server, url, apiKeyHeaders, async () => {
          await expectStatus(`${name} key route, API key`, url, { headers: apiKeyHeaders }, 200);
          await expectStatus(`${name} plain route, API key`, server.url(protectedPath), { headers: apiKeyHeaders }, 401);
        }),
      };
    },
    httpRow: (name) => [`15 ${name}: requireAuth by API key, over HTTP`, "the same by access token"],
    inProcessTitle: (check) =>
      `Figure 15 in process: verifyApiKey against verifyAccessToken, ${check.pairs} pairs of batches of about ${check.batchMs} ms of CPU, alternating`,
    async inProcessRow(storage, check) {
      const samples = await measureKeyCheck(storage, check);
      const writes = `${samples.writes} lastUsedAt write(s) in ${formatNumber(samples.seconds, 0)} s`;
      console.log(
        `  ${storage.name}: ${medianOf(samples.key)} vs ${medianOf(samples.token)} calls/CPU s, ${samples.batch} calls a batch, ${writes}`,
      );
      return rowOf(`15 ${storage.name}: verifyApiKey, in process`, baseline, samples.key, samples.token, "calls/CPU s", writes);
    },
    postgresRows: [
      ["15 PostgreSQL: requireAuth by API key, over HTTP", "the same by access token"],
      ["15 PostgreSQL: verifyApiKey, in process", baseline],
    ],
  });
}

/** A login request's body and headers for the bench user, with `password`. */
function loginRequest(url: string, password: string): Omit<LoadSpec, "seconds"> {
  return {
    url,
    method: "POST",
    connections: connections.login,
    headers: jsonHeaders,
    body: JSON.stringify({ username, password }),
  };
}

/** A case that logs in (or verifies the password) and checks first that the right password answers 200 and a wrong one 401. */
function loginCase(name: string, url: string): Case {
  const request = loginRequest(url, secrets.BENCH_PASSWORD);
  return throughputCase(
    name,
    () => request,
    async () => {
      await expectStatus(name, url, { method: "POST", headers: jsonHeaders, body: request.body }, 200);
      const wrong = loginRequest(url, `${secrets.BENCH_PASSWORD}-wrong`).body;
      await expectStatus(`${name}, wrong password`, url, { method: "POST", headers: jsonHeaders, body: wrong }, 401);
    },
  );
}

/** Figure 4: login through the Express adapter against one raw argon2id `verify` in bare Express. */
function loginFigure(): Promise<Row[]> {
  const servers = {
    portcullis: startServer(pinning, secrets, "portcullis-express", { generousThrottle: true }),
    bare: startServer(pinning, secrets, "bare-express"),
  };
  return withServers(servers, async ({ portcullis, bare }) => {
    const hashed = portcullis.ready.passwordHashParameters;
    if (!hashed || hashed !== bare.ready.passwordHashParameters) {
      throw new Error(`the stored hashes differ in cost: Portcullis ${hashed}, bare ${bare.ready.passwordHashParameters}`);
    }
    const samples = await roundRobin(`Figure 4: login, autocannon -c ${connections.login}, both hashes ${hashed}`, {
      login: loginCase("Portcullis login", portcullis.url(loginPath)),
      verifyOnly: loginCase("raw argon2 verify", bare.url(argon2LoginPath)),
    });
    return [rowOf("4 login, Express adapter", "bare Express + raw argon2id verify", samples.login, samples.verifyOnly, "req/s")];
  });
}

/** Figure 5: the protected route's p99 at a modest rate while another load process floods login, against its p99 alone. */
function loginFloodFigure(): Promise<Row[]> {
  const servers = { portcullis: startServer(pinning, secrets, "portcullis-express", { generousThrottle: true }) };
  return withServers(servers, async ({ portcullis }) => {
    const url = portcullis.url(protectedPath);
    const modest: Omit<LoadSpec, "seconds"> = { url, method: "GET", ...modestLoad, headers: portcullis.ready.authHeaders };
    const flood = loginRequest(portcullis.url(loginPath), secrets.BENCH_PASSWORD);
    const idle: Case = {
      name: "idle",
      unit: "ms",
      probe: () => expectStatus("protected route", url, { headers: modest.headers }, 200),
      measure: async (_run, seconds) => checked("idle p99", await runLoad(pinning, { ...modest, seconds })).p99Ms,
    };
    const underFlood: Case = {
      name: "under login flood",
      unit: "ms",
      probe: () => expectStatus("login", flood.url, { method: "POST", headers: jsonHeaders, body: flood.body }, 200),
      measure: async (_run, seconds) => {
        // The flood starts first and ends after the measurement, which starts once it is under way.
        const flooding = runLoad(pinning, { ...flood, seconds: seconds + 2 });
        await sleep(750);
        const [measured, flooded] = await Promise.all([runLoad(pinning, { ...modest, seconds }), flooding]);
        checked("login flood", flooded);
        return checked("p99 under login flood", measured).p99Ms;
      },
    };
    const title = `Figure 5: protected route p99 at ${modestLoad.overallRate} req/s (-c ${modestLoad.connections}), idle and under a login flood (-c ${connections.login})`;
    const samples = await roundRobin(title, { idle, underFlood });
    return [rowOf("5 protected p99 under login flood", "same route's idle p99", samples.underFlood, samples.idle, "ms")];
  });
}

/** A refresh case: each run has its own unused tokens, one per connection; the probe spends the spare last one. */
function refreshCase(name: string, url: string, tokens: string[], perRun: number): Case {
  return throughputCase(
    name,
    (run) => ({
      url,
      method: "POST",
      connections: perRun,
      headers: jsonHeaders,
      refreshTokens: tokens.slice(run * perRun, (run + 1) * perRun),
    }),
    async () => {
      const needed = loadsPerCase * perRun + 1;
      if (tokens.length < needed) throw new Error(`${name}: ${tokens.length} refresh tokens, ${needed} needed`);
      const spare = JSON.stringify({ refreshToken: tokens[tokens.length - 1] });
      await expectStatus(name, url, { method: "POST", headers: jsonHeaders, body: spare }, 200);
    },
  );
}

/** Tokens for the bare JSON POST, the size of refresh tokens: it answers each with a new one, as refresh does. */
function placeholderTokens(count: number): string[] {
  return Array.from({ length: count }, () => randomBytes(32).toString("base64url"));
}

/** Figure 6: refresh on memory storage against a bare Express JSON POST of the same shape. */
function refreshFigure(): Promise<Row[]> {
  const perRun = connections.refresh;
  const refreshTokens = perRun * loadsPerCase + 1;
  const servers = {
    portcullis: startServer(pinning, secrets, "portcullis-express", { refreshTokens }),
    bare: startServer(pinning, secrets, "bare-express"),
  };
  return withServers(servers, async ({ portcullis, bare }) => {
    const samples = await roundRobin(`Figure 6: refresh on memory storage, autocannon -c ${perRun}`, {
      refresh: refreshCase("Portcullis refresh", portcullis.url(refreshPath), portcullis.ready.refreshTokens ?? [], perRun),
      post: refreshCase("bare JSON POST", bare.url(jsonPostPath), placeholderTokens(refreshTokens), perRun),
    });
    return [rowOf("6 refresh, memory storage", "bare Express JSON POST", samples.refresh, samples.post, "req/s")];
  });
}

/** Figure 7's ceiling: bare Express answering the JSON POST of figure 6 after pgbench's one-row UPDATE. */
const ceilingName = "bare Express JSON POST + pgbench's UPDATE";
/** Figure 7's MariaDB ceiling: the same JSON POST after the same one-row UPDATE on MariaDB, prepared (mysql2 `execute`). */
const mariadbCeilingName = "bare Express JSON POST + 1-row UPDATE on MariaDB";

/**
 * Figure 7: refreshes per second on PostgreSQL beside pgbench's TPS for a single-row UPDATE, same
 * client count; and beside its ceiling, bare Express that makes pgbench's UPDATE and answers the
 * JSON POST: one round trip to PostgreSQL per request and nothing else. In the same rounds, the
 * refresh on MariaDB (`connectStorage` on a `mysql://` URL, a scratch database) beside its own
 * ceiling: bare Express answering the same POST after the same UPDATE on MariaDB, on a `mysql2`
 * pool of the same size. Each database's rows are skipped, with the reason, when it is missing.
 */
async function postgresFigure(): Promise<Row[]> {
  const figure = "7 refresh, PostgreSQL (refreshes/s)";
  const baseline = "pgbench 1-row UPDATE (TPS)";
  const mariadbFigure = "7 refresh, MariaDB";
  const [postgresGone, mariadbGone] = await Promise.all([postgresMissing(), mariadbMissing()]);
  const skipped: Row[] = [];
  if (postgresGone) {
    console.log(`\nFigure 7 (PostgreSQL rows) skipped: ${postgresGone}`);
    skipped.push({ figure, baseline, raw: "", skipped: `skipped: ${postgresGone}` });
  }
  if (mariadbGone) {
    console.log(`\nFigure 7 (MariaDB rows) skipped: ${mariadbGone}`);
    skipped.push({ figure: mariadbFigure, baseline: mariadbCeilingName, raw: "", skipped: `skipped: ${mariadbGone}` });
  }
  if (postgresGone && mariadbGone) return skipped;
  const clients = connections.postgres;
  const refreshTokens = clients * loadsPerCase + 1;
  let schema: ScratchSchema | null = null;
  let database: ScratchDatabase | null = null;
  try {
    if (!postgresGone) schema = await createScratchSchema();
    if (!mariadbGone) database = await createScratchDatabase();
    const servers: Record<string, Promise<RunningServer>> = {};
    if (schema) {
      servers.portcullis = startServer(pinning, secrets, "portcullis-express", { postgresUrl: schema.url, refreshTokens });
      servers.ceiling = startServer(pinning, secrets, "bare-express", { postgresUrl: schema.url, pool: clients });
    }
    if (database) {
      servers.mariadb = startServer(pinning, secrets, "portcullis-express", { mysqlUrl: database.url, refreshTokens });
      servers.mariadbCeiling = startServer(pinning, secrets, "bare-express", { mysqlUrl: database.url, pool: clients });
    }
    const rows = await withServers(servers, async (s) => {
      const url = (key: string, path: string) => (s[key] as RunningServer).url(path);
      const tokens = (key: string) => (s[key] as RunningServer).ready.refreshTokens ?? [];
      const cases: Record<string, Case> = {};
      const where: string[] = [];
      if (schema) {
        const pgbench = schema;
        where.push(`on PostgreSQL (schema ${pgbench.name}, pool of ${clients})`);
        cases.refresh = refreshCase("Portcullis refresh", url("portcullis", refreshPath), tokens("portcullis"), clients);
        cases.pgbench = {
          name: "pgbench",
          unit: "TPS",
          measure: (_run, seconds) => pgbench.pgbenchTps(pinning, clients, seconds),
        };
        cases.ceiling = refreshCase(ceilingName, url("ceiling", jsonPostPath), placeholderTokens(refreshTokens), clients);
      }
      if (database) {
        where.push(`on MariaDB (database ${database.name}, pool of ${clients})`);
        cases.mariadb = refreshCase("Portcullis refresh, MariaDB", url("mariadb", refreshPath), tokens("mariadb"), clients);
        cases.mariadbCeiling = refreshCase(
          mariadbCeilingName,
          url("mariadbCeiling", jsonPostPath),
          placeholderTokens(refreshTokens),
          clients,
        );
      }
      const title = `Figure 7: refresh ${where.join(" and ")}, autocannon -c ${clients}${schema ? `; pgbench -c ${clients}` : ""}`;
      const samples = await roundRobin(title, cases);
      const of = (key: string) => samples[key] as number[];
      // After the rounds, so that nothing else runs while they measure.
      const rows: Row[] = [];
      if (schema) {
        const { storage, sent } = recordingStorage(schema.url);
        const note = reportStatements("PostgreSQL", await statementsOfARefresh(storage, sent));
        rows.push(
          rowOf(figure, baseline, of("refresh"), of("pgbench"), ["refreshes/s", "TPS"]),
          rowOf(`7 ${ceilingName} (req/s)`, baseline, of("ceiling"), of("pgbench"), ["req/s", "TPS"]),
          rowOf("7 refresh, PostgreSQL", ceilingName, of("refresh"), of("ceiling"), "req/s", note),
        );
      }
      if (database) {
        const { storage, sent } = recordingMysqlStorage(database.url);
        const note = reportStatements("MariaDB", await statementsOfARefresh(storage, sent));
        rows.push(rowOf(mariadbFigure, mariadbCeilingName, of("mariadb"), of("mariadbCeiling"), "req/s", note));
      }
      return rows;
    });
    return [...rows, ...skipped];
  } finally {
    await Promise.all([schema?.drop(), database?.drop()]);
  }
}

/**
 * Figure 9: login on PostgreSQL (the storage of figure 7, throttling counters and all) against one
 * raw argon2id `verify` in bare Express: what the database adds to a login.
 */
async function postgresLoginFigure(): Promise<Row[]> {
  const figure = "9 login, PostgreSQL";
  const baseline = "bare Express + raw argon2id verify";
  const missing = await postgresMissing();
  if (missing) {
    console.log(`\nFigure 9 skipped: ${missing}`);
    return [{ figure, baseline, raw: "", skipped: `skipped: ${missing}` }];
  }
  const schema = await createScratchSchema();
  try {
    const servers = {
      portcullis: startServer(pinning, secrets, "portcullis-express", { postgresUrl: schema.url, generousThrottle: true }),
      bare: startServer(pinning, secrets, "bare-express"),
    };
    return await withServers(servers, async ({ portcullis, bare }) => {
      const hashed = portcullis.ready.passwordHashParameters;
      if (!hashed || hashed !== bare.ready.passwordHashParameters) {
        throw new Error(`the stored hashes differ in cost: Portcullis ${hashed}, bare ${bare.ready.passwordHashParameters}`);
      }
      const title = `Figure 9: login on PostgreSQL (schema ${schema.name}), autocannon -c ${connections.login}, both hashes ${hashed}`;
      const samples = await roundRobin(title, {
        login: loginCase("Portcullis login on PostgreSQL", portcullis.url(loginPath)),
        verifyOnly: loginCase("raw argon2 verify", bare.url(argon2LoginPath)),
      });
      return [rowOf(figure, baseline, samples.login, samples.verifyOnly, "req/s")];
    });
  } finally {
    await schema.drop();
  }
}

/** Figure 10's size: `BENCH_SCALE_USERS`, by default a million (ten thousand in a quick run). */
const scaleUsers = Number(process.env.BENCH_SCALE_USERS ?? (quick ? 10_000 : 1_000_000));

/**
 * Figure 10: login, refresh, the protected route and the administrators' user list on a PostgreSQL
 * schema holding {@link scaleUsers} users, as many live sessions and twice as many expired ones
 * (each session holding its current refresh token), each against the same on a schema holding one page of users
 * (the issue's "empty schema", with a full first page for the user list); the plan of every
 * statement those flows send; and the protected route's p99 while the sweep deletes the expired
 * rows, against its p99 without, with the longest sweep statement.
 */
async function scaleFigure(): Promise<Row[]> {
  const figure = "10 at scale";
  const missing = await postgresMissing();
  if (missing) {
    console.log(`\nFigure 10 skipped: ${missing}`);
    return [{ figure, baseline: "small schema", raw: "", skipped: `skipped: ${missing}` }];
  }
  const small = await createScratchSchema();
  const big = await createScratchSchema();
  try {
    await Promise.all([migrateSchema(big.url), migrateSchema(small.url)]);
    // The small schema holds one full page of users, so both user lists answer a page of the same size.
    await fillAtScale(postgresUrl, small.name, defaultPageSize, scaleFillerHash, Date.now());
    const filling = performance.now();
    const counts = await fillAtScale(postgresUrl, big.name, scaleUsers, scaleFillerHash, Date.now());
    const filled = `${formatNumber(counts.users, 0)} users (${formatNumber(counts.totp, 0)} with TOTP), ${formatNumber(counts.liveSessions, 0)} live and ${formatNumber(counts.expiredSessions, 0)} expired sessions, each holding its current refresh token (no refresh-token rows)`;
    console.log(`\nFigure 10: filled ${big.name} with ${filled} in ${formatNumber((performance.now() - filling) / 1000, 0)} s`);
    const perRun = connections.postgres;
    const options = (url: string): ServerOptions => ({
      postgresUrl: url,
      generousThrottle: true,
      admin: true,
      sweep: false,
      refreshTokens: perRun * loadsPerCase + 1,
    });
    const servers = {
      onSmall: startServer(pinning, secrets, "portcullis-express", options(small.url)),
      atScale: startServer(pinning, secrets, "portcullis-express", options(big.url)),
    };
    const rows = await withServers(servers, async ({ onSmall, atScale }) => {
      // The sweep first, while the backlog of expired rows is there; what it leaves is swept before
      // the rates, so that the servers' own write-triggered sweeps find nothing to do while measured.
      const sweepRow = await sweepUnderLoad(atScale, big.url);
      await drainExpired(big.url);
      await vacuumed(big.url);
      const cases = (server: RunningServer, label: string) => ({
        login: { ...loginCase(`login, ${label}`, server.url(loginPath)) },
        refresh: refreshCase(`refresh, ${label}`, server.url(refreshPath), server.ready.refreshTokens ?? [], perRun),
        protectedRoute: throughputCase(`protected route, ${label}`, () => ({
          url: server.url(protectedPath),
          method: "GET",
          connections: connections.protectedRoute,
          headers: server.ready.authHeaders,
        })),
        adminList: throughputCase(
          `user list, first page, ${label}`,
          () => ({ url: server.url(adminUsersPath), method: "GET", connections: perRun, headers: server.ready.authHeaders }),
          () => expectStatus("user list", server.url(adminUsersPath), { headers: server.ready.authHeaders }, 200),
        ),
      });
      const few = cases(onSmall, `${defaultPageSize} users`);
      const large = cases(atScale, `${formatNumber(scaleUsers, 0)} users`);
      const samples = await roundRobin(`Figure 10: four flows on a schema of ${defaultPageSize} users and at scale (${filled})`, {
        loginSmall: few.login,
        loginLarge: large.login,
        refreshSmall: few.refresh,
        refreshLarge: large.refresh,
        protectedSmall: few.protectedRoute,
        protectedLarge: large.protectedRoute,
        listSmall: few.adminList,
        listLarge: large.adminList,
      });
      const baseline = `same, ${defaultPageSize} users`;
      const rates = [
        rowOf(
          `${figure}: login (${formatNumber(scaleUsers, 0)} users)`,
          baseline,
          samples.loginLarge,
          samples.loginSmall,
          "req/s",
        ),
        rowOf(`${figure}: refresh`, baseline, samples.refreshLarge, samples.refreshSmall, "req/s"),
        rowOf(`${figure}: protected route`, baseline, samples.protectedLarge, samples.protectedSmall, "req/s"),
        rowOf(`${figure}: admin user list, first page`, baseline, samples.listLarge, samples.listSmall, "req/s"),
      ];
      return [...rates, sweepRow];
    });
    await reportPlans(big.url);
    return rows;
  } finally {
    await Promise.all([small.drop(), big.drop()]);
  }
}

/**
 * The protected route's p99 at figure 5's modest load while this process sweeps the scale
 * schema's expired rows with core's `sweepExpired` (the batches and statements of the server's
 * timer),
 * against its p99 with no sweep; prints the sweep's longest statement and the rows it deleted.
 */
async function sweepUnderLoad(server: RunningServer, url: string): Promise<Row> {
  const { storage, sent } = recordingStorage(url);
  const route = server.url(protectedPath);
  const modest: Omit<LoadSpec, "seconds"> = { url: route, method: "GET", ...modestLoad, headers: server.ready.authHeaders };
  let deleted = 0;
  const idle: Case = {
    name: "no sweep",
    unit: "ms",
    measure: async (_run, seconds) => checked("p99 without a sweep", await runLoad(pinning, { ...modest, seconds })).p99Ms,
  };
  const sweeping: Case = {
    name: "sweeping",
    unit: "ms",
    measure: async (_run, seconds) => {
      // Core's sweep, as the server's timer runs it, stopped with the load between two batches.
      const stop = new AbortController();
      const sweeper = (async () => {
        while (!stop.signal.aborted) {
          const result = await sweepExpired({ storage, now: () => Date.now() }, { signal: stop.signal });
          deleted += result.deleted;
          if (result.complete) await sleep(100);
        }
      })();
      try {
        return checked("p99 while sweeping", await runLoad(pinning, { ...modest, seconds })).p99Ms;
      } finally {
        stop.abort();
        await sweeper;
      }
    },
  };
  try {
    // Samples of 3 s, so the backlog lasts through every sweeping one (the run checks that some is left).
    const samples = await roundRobin(
      `Figure 10: protected route p99 at ${modestLoad.overallRate} req/s, with and without the sweep`,
      { idle, sweeping },
      { ...plan, seconds: Math.min(plan.seconds, 3) },
    );
    const times = sent
      .filter((statement) => /^delete from/i.test(statement.text.trim()))
      .map((statement) => statement.ms)
      .sort((a, b) => a - b);
    const at = (share: number) => formatNumber(times[Math.min(times.length - 1, Math.floor(share * times.length))] ?? 0, 1);
    const over = times.filter((ms) => ms > 100).length;
    const note = `sweep: ${formatNumber(deleted, 0)} rows in ${formatNumber(times.length, 0)} DELETE statements, median ${at(0.5)} ms, p99 ${at(0.99)} ms, longest ${at(1)} ms, ${over} over 100 ms`;
    console.log(`  ${note}`);
    return rowOf(
      "10 at scale: protected p99 while the sweep deletes",
      "same, no sweep",
      samples.sweeping,
      samples.idle,
      "ms",
      note,
    );
  } finally {
    await storage.close();
  }
}

/**
 * Deletes what is left of the scale schema's expired rows in one statement per table (quicker
 * than the sweep's batches, and not what is measured): the state a database reaches once its
 * sweeps have kept up.
 */
function drainExpired(url: string): Promise<void> {
  return withClient(url, async (client) => {
    const started = performance.now();
    let deleted = 0;
    for (const table of ["sessions", "challenges"]) {
      deleted += (await client.query(`delete from ${table} where expires_at <= $1`, [Date.now()])).rowCount ?? 0;
    }
    console.log(
      `  what the sweep had not reached by its last sample, deleted: ${formatNumber(deleted, 0)} rows in ${formatNumber((performance.now() - started) / 1000, 1)} s${deleted === 0 ? " (none: the backlog ran out, so the later sweeping samples measured a sweep with nothing to do)" : ""}`,
    );
  });
}

/**
 * Vacuums the tables the sweep emptied, as autovacuum would soon after, and flushes what that
 * wrote, so that neither runs during the measured rates: they are those of a database in its
 * steady state.
 */
function vacuumed(url: string): Promise<void> {
  return withClient(url, async (client) => {
    const started = performance.now();
    await client.query("vacuum (analyze) sessions");
    await client.query("checkpoint");
    console.log(`  vacuum (analyze) sessions: ${formatNumber((performance.now() - started) / 1000, 1)} s`);
  });
}

/** An auth instance of this process on `storage` (no sweep timer), and a sign-in of the bench user on it. */
async function benchSignIn(storage: Storage): Promise<{ auth: Auth; tokens: TokenSet }> {
  const auth = createAuth({
    storage,
    issuer,
    audience,
    secrets: { signing: secrets.BENCH_SIGNING_SECRET, encryption: randomBytes(32).toString("base64url") },
    sweepInterval: false,
  });
  const signedIn = await login(auth, { username, password: secrets.BENCH_PASSWORD });
  if (signedIn.status !== "authenticated") throw new Error(`login answered ${signedIn.status}`);
  return { auth, tokens: signedIn.tokens };
}

/**
 * The statements (each a round trip) one refresh sends through `storage`, whose pool records
 * what it sends in `sent`: the bench user signs in, then refreshes once. Closes the storage.
 */
async function statementsOfARefresh(storage: KyselyStorage, sent: readonly { text: string }[]): Promise<string[]> {
  try {
    const { auth, tokens } = await benchSignIn(storage);
    const before = sent.length;
    await refresh(auth, { refreshToken: tokens.refreshToken });
    return sent.slice(before).map((statement) => statement.text.replace(/\s+/g, " ").trim());
  } finally {
    await storage.close();
  }
}

/** Prints the statements of one refresh on `database` and returns the row's note: how many there are. */
function reportStatements(database: string, statements: string[]): string {
  const count = `${statements.length} statement${statements.length === 1 ? "" : "s"} per refresh`;
  console.log(`  one refresh on ${database}: ${count}`);
  for (const text of statements) console.log(`    ${text.length > 160 ? `${text.slice(0, 157)}...` : text}`);
  return count;
}

/**
 * Runs login, refresh, the protected route's check and the user list's first page once on the
 * scale schema through a storage that explains each statement before it runs, prints the plans'
 * lines that read or write a table, and fails on a sequential scan of a table at full size.
 */
async function reportPlans(url: string): Promise<void> {
  const { storage, sent } = recordingStorage(url, { explain: true });
  try {
    const { auth, tokens } = await benchSignIn(storage);
    const refreshed = await refresh(auth, { refreshToken: tokens.refreshToken });
    await verifyAccessToken(auth, { token: refreshed.accessToken });
    await listUsers(auth, {});
    const explained = [...new Map(sent.filter((entry) => entry.plan).map((entry) => [entry.text, entry.plan as string[]]))];
    console.log(
      `\nFigure 10: the plan of each statement of login, refresh, the protected route and the user list (${explained.length} statements)`,
    );
    for (const [text, plan] of explained) {
      const statement = text.replace(/\s+/g, " ").trim();
      console.log(`  ${statement.length > 160 ? `${statement.slice(0, 157)}...` : statement}`);
      for (const line of plan.filter((line) => /Scan|Insert on|Update on|Delete on/.test(line)))
        console.log(`      ${line.trim()}`);
    }
    const scans = explained.flatMap(([text, plan]) =>
      sequentialScansIn(plan).map((line) => `${line.trim()} in: ${text.slice(0, 120)}`),
    );
    console.log(`  sequential scans of a table: ${scans.length === 0 ? "none" : scans.join("; ")}`);
    if (scans.length > 0 && !quick) throw new Error(`sequential scans at scale:\n${scans.join("\n")}`);
  } finally {
    await storage.close();
  }
}

/** One fresh `node` process timing `await import(specifier)` from the bench package, in milliseconds. */
function importCase(name: string, specifier: string): Case {
  const timing =
    "const started = performance.now(); await import(process.argv[1]); process.stdout.write(String(performance.now() - started));";
  return {
    name,
    unit: "ms",
    measure: async () =>
      Number(await runToEnd(pinning.server, [process.execPath, "--input-type=module", "-e", timing, specifier])),
  };
}

/** Figure 8: cold import of the built `@portcullis/core` against Better Auth's main entry, beside a trivial module. */
async function coldImportFigure(): Promise<Row[]> {
  const title = `Figure 8: cold import, a fresh node process per sample, ${plan.importSamples} samples each`;
  const samples = await roundRobin(
    title,
    {
      trivial: importCase("trivial module", "./fixtures/trivial.mjs"),
      portcullis: importCase("@portcullis/core", "@portcullis/core"),
      betterAuth: importCase("better-auth", "better-auth"),
    },
    { rounds: plan.importSamples, seconds: 0 },
  );
  const note = `trivial module ${formatNumber(spreadOf(samples.trivial).median, 2)} ms`;
  return [rowOf("8 cold import @portcullis/core", "cold import better-auth", samples.portcullis, samples.betterAuth, "ms", note)];
}

function installedVersion(name: string): string {
  const manifest = JSON.parse(readFileSync(join(benchDirectory, "node_modules", name, "package.json"), "utf8")) as {
    version: string;
  };
  return `${name} ${manifest.version}`;
}

/** The 1-minute load average against the cores: other work on the machine makes every figure noisier. */
function machineLoad(): string {
  return `load average ${formatNumber(loadavg()[0] ?? 0, 2)} on ${availableParallelism()} cores`;
}

function printMachine(): void {
  const warmup = plan.warmupSeconds > 0 ? `after a ${plan.warmupSeconds} s warm-up` : "no warm-up";
  const cpu = cpus()[0]?.model ?? "unknown CPU";
  console.log(
    `Portcullis bench, ${quick ? "quick (BENCH_QUICK=1)" : "full"} run: ${plan.rounds} round(s) of ${plan.seconds} s per case (figures 1–3 and 11: ${plan.protectedRoute.rounds} of ${plan.protectedRoute.seconds} s), ${warmup}`,
  );
  console.log(
    `machine: ${cpu}, ${availableParallelism()} cores, ${formatNumber(totalmem() / 2 ** 30, 1)} GiB; node ${process.version}`,
  );
  console.log(`${pinning.summary}; ${machineLoad()} at the start`);
  const peers = [
    "autocannon",
    "express",
    "hono",
    "@hono/node-server",
    "fastify",
    "express-jwt",
    "passport-jwt",
    "better-auth",
    "@node-rs/argon2",
  ];
  console.log(`versions: ${peers.map(installedVersion).join(", ")}`);
}

/** Runs one comparison and says how long it took, servers' start-up included. */
async function timed(figures: () => Promise<Row[]>): Promise<Row[]> {
  const started = performance.now();
  const rows = await figures();
  console.log(`  (${formatNumber((performance.now() - started) / 1000, 0)} s with start-up)`);
  return rows;
}

/** Each measuring function with the figures it prints. */
const figureGroups: [number[], () => Promise<Row[]>][] = [
  [[1, 2, 3], protectedRouteFigures],
  [[4], loginFigure],
  [[5], loginFloodFigure],
  [[6], refreshFigure],
  [[7], postgresFigure],
  [[8], coldImportFigure],
  [[9], postgresLoginFigure],
  [[10], scaleFigure],
  [[11], fastifyFigure],
  [[12], revocationChannelFigure],
  [[13], () => importedHashFigure(quick ? 1 : 7)],
  [[14], organizationFigure],
  [[15], apiKeyFigure],
];

/** `BENCH_FIGURES=3,6` measures only the groups that print those figures; by default, all of them. */
const selectedFigures = new Set(
  (process.env.BENCH_FIGURES ?? (quick ? "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15" : "1,2,3,4,5,6,7,8,9,11,12,13,14,15"))
    .split(",")
    .map((number) => Number(number.trim())),
);

async function main(): Promise<void> {
  const started = performance.now();
  printMachine();
  const rows: Row[] = [];
  for (const [numbers, figures] of figureGroups) {
    if (numbers.some((number) => selectedFigures.has(number))) rows.push(...(await timed(figures)));
  }
  console.log(`\n${formatTable(rows)}`);
  console.log(
    "\nRatios of rates (req/s, TPS): above 1 is faster than the baseline. Ratios of latency and time (ms): above 1 is slower.",
  );
  console.log(`${pinning.summary}; whole run ${formatNumber((performance.now() - started) / 1000, 0)} s; ${machineLoad()}`);
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => {
    stopLoadProcesses();
    process.exit();
  });
