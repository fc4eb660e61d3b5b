// MariaDB faults: a service (createAuth, the Express adapter) on storage from connectStorage,
// reaching MariaDB through a TCP forwarder that the tests cut: the database down, the network
// silent, and connections that died without a word while the server is reachable again (issue 20
// item 2: a connection whose statement timed out went back to the pool with the statement still
// pending, and every request it served next waited for ever). The service must answer 50300 in
// bounded time, never crash on the driver's errors, and carry on by itself.
import { randomBytes } from "node:crypto";
import { type Auth, type TokenSet, createAuth } from "@portcullis/core";
import { type KyselyStorage, connectStorage, isConnectionFailure, migrate } from "@portcullis/kysely";
import { afterAll, afterEach, beforeAll, expect, it, vi } from "vitest";
import { mariadbUrl, serverMissing } from "../../packages/kysely/src/databases.test-support.js";
import { createTestUser, generousThrottle, testAudience, testIssuer } from "../fixtures/auth.js";
import { openConnectionsTo } from "../fixtures/open-connections.js";
import { describeNeedingService } from "../fixtures/required-service.js";
import { type TcpForwarder, startTcpForwarder } from "../fixtures/tcp-forwarder.js";
import { expectEnvelope } from "../http/contract-suite.js";
import { type RunningServer, startExpress5 } from "../http/servers.js";
import { type TimedAnswer, faultChecks, serviceRequests } from "./fault-checks.js";
import { type ScratchDatabase, createScratchDatabase } from "./scratch-schema.js";

const connectTimeoutMs = 1000;
const queryTimeoutMs = 2000;
/** How long a request may take to answer 50300: one wait for a connection, one statement, and a margin for a loaded machine. */
const unavailableWithinMs = connectTimeoutMs + queryTimeoutMs + 2000;
/** The pool's size: as many connections as the concurrent requests below can keep busy. */
const maxConnections = 10;

const describeWithMariadb = describeNeedingService("test/storage/mariadb-faults.test.ts", await serverMissing(mariadbUrl));

describeWithMariadb("MariaDB faults: a service behind a forwarder the tests cut", () => {
  let database: ScratchDatabase | undefined;
  let forwarder: TcpForwarder | undefined;
  /** The service's storage, through the forwarder. */
  let storage: KyselyStorage | undefined;
  let server: RunningServer | undefined;
  let auth: Auth;
  const poolErrors: unknown[] = [];
  const internalErrors = new Map<string, unknown>();
  const { timed, summary, expectAllUnavailable } = faultChecks({
    unavailableWithinMs,
    internalErrors,
    leaks: /select|insert|update|refresh_tokens|mysql|maria|protocol|econn|timeout|inactivity|stack/i,
  });

  beforeAll(async () => {
    database = await createScratchDatabase();
    const direct = await connectStorage({ url: database.url });
    await migrate(direct);
    await direct.close();
    forwarder = await startTcpForwarder(Number(new URL(mariadbUrl).port || 3306));
    storage = await connectStorage({
      url: database.urlVia(forwarder.port),
      maxConnections,
      connectTimeoutMs,
      queryTimeoutMs,
      onPoolError: (error) => poolErrors.push(error),
    });
    auth = createAuth({
      issuer: testIssuer,
      audience: testAudience,
      secrets: { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("hex") },
      throttle: generousThrottle,
      onInternalError: (error: unknown, requestId: string) => internalErrors.set(requestId, error),
      storage,
    });
    await createTestUser(auth, "alice");
    server = await startExpress5(auth);
  });

  afterEach(() => {
    forwarder?.restore();
  });

  afterAll(async () => {
    await server?.close();
    await storage?.close();
    await forwarder?.close();
    await database?.drop();
  });

  const { login, refresh, me, signIn } = serviceRequests(() => server);
  /** An answer's code, or how long it went unanswered. */
  const codeOf = (answer: TimedAnswer) =>
    answer.answered ? answer.result.body?.code : `no answer within ${Math.round(answer.elapsedMs)} ms`;

  /** Login, refresh and a bearer request, each timed: what the service answers while cut off. */
  async function requestsWhileCut(tokens: TokenSet) {
    return {
      login: await timed(login),
      refresh: await timed(() => refresh(tokens.refreshToken)),
      "GET /auth/me": await timed(() => me(tokens.accessToken)),
    };
  }

  /** Opens every connection of the pool: requests at once, more than it holds. Returns how many are open. */
  async function fillThePool(tokens: TokenSet): Promise<number> {
    await Promise.all(Array.from({ length: 3 * maxConnections }, () => me(tokens.accessToken)));
    return openConnectionsTo((forwarder as TcpForwarder).port);
  }

  it("HTTP-5: with the database down (every connection reset, new ones refused), login, refresh and a bearer request answer 50300 within the timeouts; the cut connections' errors reach onPoolError and the process carries on", async () => {
    const tokens = await signIn();
    const poolErrorsBefore = poolErrors.length;
    forwarder?.cut("reset");
    // The idle pooled connections die with the cut: mysql2 reports it as an `error` event on
    // each, which without connectStorage's handlers would crash this process (the test worker).
    await vi.waitFor(() => expect(poolErrors.length).toBeGreaterThan(poolErrorsBefore));
    expect(poolErrors.slice(poolErrorsBefore).every(isConnectionFailure)).toBe(true);

    expectAllUnavailable(await requestsWhileCut(tokens));

    forwarder?.restore();
    expectEnvelope(await login(), 0);
    expectEnvelope(await me(tokens.accessToken), 0);
  });

  it("HTTP-5: with the network silent (open connections pass nothing, new ones are never answered), login, refresh and a bearer request answer 50300 within the timeouts", async () => {
    const tokens = await signIn();
    forwarder?.cut("stall");
    const answers = await requestsWhileCut(tokens);
    forwarder?.restore();
    expectAllUnavailable(answers);
    expectEnvelope(await login(), 0);
  });

  it("HTTP-5: with the network silent and five times as many requests at once as the pool holds, each answers 50300 within the bound: waiting for a connection is bounded too", async () => {
    const tokens = await signIn();
    await fillThePool(tokens);
    forwarder?.cut("stall");
    const answers = await Promise.all(Array.from({ length: 5 * maxConnections }, () => timed(() => me(tokens.accessToken))));
    forwarder?.restore();
    const late = answers.filter((answer) => !answer.answered || answer.elapsedMs >= unavailableWithinMs);
    expect(late.map((answer) => `${codeOf(answer)} after ${Math.round(answer.elapsedMs)} ms`)).toEqual([]);
    expect(new Set(answers.map(codeOf))).toEqual(new Set([50300]));
    expectEnvelope(await login(), 0);
  });

  it("issue 20 item 2 (HTTP-5): with every pooled connection gone silent and the database reachable again, 15 bearer requests at once each answer, 50300 or success, within the bound; then every request succeeds, nothing restored or restarted", async () => {
    const tokens = await signIn();
    const open = await fillThePool(tokens);
    forwarder?.cut("silence-open");
    const answers = await Promise.all(Array.from({ length: 15 }, () => timed(() => me(tokens.accessToken))));
    const late = answers.filter((answer) => !answer.answered || answer.elapsedMs >= unavailableWithinMs);
    expect(
      answers.map(codeOf).filter((code) => code !== 0 && code !== 50300),
      `${open} connections open at the cut; ${late.length} of 15 answers late or missing`,
    ).toEqual([]);
    expect(late.map(codeOf)).toEqual([]);
    expect(answers.map(codeOf)).toContain(50300);
    const after = [
      await timed(login),
      ...(await Promise.all(Array.from({ length: 5 }, () => timed(() => me(tokens.accessToken))))),
    ];
    expect(after.map(codeOf)).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it("issue 20 item 2 (HTTP-5): when the open connections died without a word, one request after another, each answers within the bound and a login succeeds within one attempt per connection that was open, and one more", async () => {
    const tokens = await signIn();
    const open = await fillThePool(tokens);
    forwarder?.cut("silence-open");
    const answers: TimedAnswer[] = [];
    while (answers.length <= open && (answers.length === 0 || codeOf(answers.at(-1) as TimedAnswer) === 50300)) {
      answers.push(await timed(login));
    }
    const labelled = Object.fromEntries(answers.map((answer, at) => [`login ${at + 1}`, answer]));
    const unavailable = { code: 50300, message: "Storage is unavailable", inTime: true, reported: "Storage is unavailable" };
    const succeeded = { code: 0, message: "OK", inTime: true, reported: undefined };
    expect(summary(labelled), `${open} connections open at the cut`).toEqual(
      Object.fromEntries(Object.keys(labelled).map((what, at) => [what, at === answers.length - 1 ? succeeded : unavailable])),
    );
  }); // it takes one statement timeout per connection that was open: 20 s for a pool of 10

  it("when the database returns the service resumes by itself: the first login after each kind of cut succeeds, nothing restarted", async () => {
    for (const mode of ["reset", "stall", "silence-open"] as const) {
      await signIn();
      forwarder?.cut(mode);
      // What it answers meanwhile is the business of the tests above; here only that it failed.
      expect(codeOf(await timed(login)), `login while cut (${mode})`).toBe(50300);
      forwarder?.restore();
      const first = await login();
      expect(first.body?.code, `first login after the ${mode} cut: ${first.text}`).toBe(0);
    }
  });
});
