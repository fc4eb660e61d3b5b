import { context, metrics, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openTelemetry } from "../dependencies.js";
import { emailDeliveriesSettled } from "../email/deliver.js";
import type { EmailMessage } from "../email/email-config.js";
import { createUser } from "../flows/create-user.js";
import {
  type AuthOverrides,
  type Harness,
  addUser,
  codeAt,
  decodeBase32,
  enrolTotp,
  goodPassword,
  makeAuth,
  nextCode,
  wrongCodeAt,
} from "../flows/fixtures.test-support.js";
import { authorizeRequest, handleRequest } from "../http/handle-request.js";
import type { HttpRequest } from "../http/types.js";
import { signInWithIdentity } from "../oauth/identity-sign-in.js";
import { notStated } from "../oauth/provider-authentication.js";
import { type ResolvedOAuthProvider, resolveOAuthConfig } from "../oauth/provider-config.js";
import { memoryStorage } from "../storage/memory.js";

const spans = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
const metricExporter = new InMemoryMetricExporter(AggregationTemporality.DELTA);
const metricReader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
const meterProvider = new MeterProvider({ readers: [metricReader] });
const contextManager = new AsyncLocalStorageContextManager();

/** A username no attribute may hold: only the user id is recorded, never what the client typed. */
const username = "telemetry-watcher";

beforeAll(async () => {
  await openTelemetry();
  context.setGlobalContextManager(contextManager.enable());
});

afterEach(async () => {
  spans.reset();
  await metricReader.forceFlush();
  metricExporter.reset();
});

afterAll(async () => {
  context.disable();
  await metricReader.shutdown();
});

/** An auth instance reporting to the test's providers, with telemetry already decided. */
async function telemetryHarness(overrides: AuthOverrides = {}): Promise<Harness> {
  const harness = makeAuth({ telemetry: { tracerProvider, meterProvider }, ...overrides });
  // The API loaded in beforeAll; the instance takes it up when its load settles, a tick after createAuth.
  await new Promise((resolve) => setImmediate(resolve));
  return harness;
}

function request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): HttpRequest {
  const all: Record<string, string> = { "content-type": "application/json", ...headers };
  return {
    method,
    url: `/api/v1${path}`,
    header: (name) => all[name],
    body: {
      async *[Symbol.asyncIterator]() {
        yield new TextEncoder().encode(body === undefined ? "" : JSON.stringify(body));
      },
    },
    peerAddress: "192.0.2.1",
    secure: true,
  };
}

/** Serves a request and returns its envelope. */
async function send(harness: Harness, method: string, path: string, body?: unknown, headers?: Record<string, string>) {
  const response = await handleRequest(harness.auth, request(method, path, body, headers));
  if (response === null) throw new Error(`${path} is not a Portcullis path`);
  return JSON.parse(response.body) as { code: number; data: Record<string, unknown> };
}

/** The finished spans named `portcullis <operation>`. */
function spansOf(operation: string): ReadableSpan[] {
  return spans.getFinishedSpans().filter((span) => span.name === `portcullis ${operation}`);
}

/** The data points of each metric exported since the last reset, by metric name. */
async function collectMetrics(): Promise<Map<string, DataPoint<number | Histogram>[]>> {
  await metricReader.forceFlush();
  const points = new Map<string, DataPoint<number | Histogram>[]>();
  for (const resource of metricExporter.getMetrics()) {
    for (const scope of resource.scopeMetrics) {
      for (const metric of scope.metrics) {
        points.set(metric.descriptor.name, [
          ...(points.get(metric.descriptor.name) ?? []),
          ...(metric.dataPoints as DataPoint<number | Histogram>[]),
        ]);
      }
    }
  }
  return points;
}

/** The sum of a counter's points whose attributes include `attributes`. */
function countOf(points: Map<string, DataPoint<number | Histogram>[]>, name: string, attributes: Record<string, unknown> = {}) {
  let total = 0;
  for (const point of points.get(name) ?? []) {
    if (Object.entries(attributes).every(([key, value]) => point.attributes[key] === value)) total += point.value as number;
  }
  return total;
}

/** How many sign-in steps of `method` with `outcome` the metrics counted. */
function signInsCounted(points: Map<string, DataPoint<number | Histogram>[]>, method: string, outcome: string): number {
  return countOf(points, "portcullis.sign_in.attempts", {
    "portcullis.sign_in.method": method,
    "portcullis.sign_in.outcome": outcome,
  });
}

describe("spans", () => {
  it("each route request is one span named after its operation, with its outcome, business code and user id", async () => {
    const harness = await telemetryHarness();
    const userId = await addUser(harness.auth, username);

    const signedIn = await send(harness, "POST", "/auth/login", { username, password: goodPassword });
    const accessToken = (signedIn.data as unknown as { accessToken: string }).accessToken;
    await send(harness, "POST", "/auth/login", { username, password: "not the password at all" });
    await send(harness, "GET", "/auth/me", undefined, { authorization: `Bearer ${accessToken}` });
    await send(harness, "GET", "/auth/no-such-route");

    const [success, failure] = spansOf("login");
    expect(success?.attributes).toMatchObject({
      "portcullis.operation": "login",
      "http.request.method": "POST",
      "http.route": "/api/v1/auth/login",
      "portcullis.outcome": "success",
      "portcullis.code": 0,
      "enduser.id": userId,
    });
    expect(success?.events.map((event) => event.name)).toEqual(["login.succeeded"]);
    expect(failure?.attributes).toMatchObject({
      "portcullis.outcome": "refused",
      "portcullis.code": 40100,
      "enduser.id": userId,
    });
    expect(failure?.events).toMatchObject([{ name: "login.failed", attributes: { "portcullis.reason": "invalid_credentials" } }]);
    expect(spansOf("getPublicUser")[0]?.attributes).toMatchObject({ "portcullis.outcome": "success", "enduser.id": userId });
    expect(spansOf("unknownRoute")[0]?.attributes).toMatchObject({ "portcullis.code": 40400 });
    expect(spansOf("unknownRoute")[0]?.attributes).not.toHaveProperty("http.route");
  });

  it("an administrator's request is the administrator's: the account it makes is not its user", async () => {
    const harness = await telemetryHarness();
    const adminId = await addUser(harness.auth, username, goodPassword, ["admin"]);
    const signedIn = await send(harness, "POST", "/auth/login", { username, password: goodPassword });
    const { accessToken } = signedIn.data as unknown as { accessToken: string };
    const made = await send(
      harness,
      "POST",
      "/auth/admin/users",
      { username: "made-by-admin" },
      { authorization: `Bearer ${accessToken}` },
    );
    expect(made.code).toBe(0);
    expect(spansOf("adminCreateUser")[0]?.attributes).toMatchObject({ "enduser.id": adminId, "portcullis.code": 0 });
  });

  it("HTTP-6: no span, attribute or span event holds the username, the password, a token or a code", async () => {
    const harness = await telemetryHarness();
    const userId = await addUser(harness.auth, username);
    const { secret, recoveryCodes } = await enrolTotp(harness.auth, userId);
    const pending = await send(harness, "POST", "/auth/login", { username, password: goodPassword });
    const tempToken = (pending.data as { tempToken: string }).tempToken;
    const code = nextCode(harness, secret);
    const signedIn = await send(harness, "POST", "/auth/2fa/verify", { tempToken, code });
    const { accessToken, refreshToken } = signedIn.data as unknown as { accessToken: string; refreshToken: string };
    await send(harness, "POST", "/auth/refresh", { refreshToken });
    await send(harness, "POST", "/auth/login", { username, password: "hunter2-typed-into-the-wrong-field" });
    await send(harness, "POST", "/auth/login", { username: "hunter2-typed-as-a-username", password: goodPassword });

    const recorded = JSON.stringify(
      spans.getFinishedSpans().map((span) => ({ name: span.name, attributes: span.attributes, events: span.events })),
    );
    expect(spansOf("verifyTotp")).toHaveLength(1);
    for (const secretValue of [username, goodPassword, "hunter2", tempToken, code, accessToken, refreshToken, ...recoveryCodes]) {
      expect(recorded).not.toContain(secretValue);
    }
  });

  it("a route's span is a child of the span around the request (the HTTP server's) and the parent of the storage's, and an internal error is an ERROR with its class, never its message", async () => {
    const storage = memoryStorage();
    let activeInStorage: string | undefined;
    storage.users.findByUsernameKey = async () => {
      activeInStorage = trace.getActiveSpan()?.spanContext().spanId;
      throw new TypeError(`connection to db failed for ${username} with password ${goodPassword}`);
    };
    const harness = await telemetryHarness({ storage, onInternalError: () => {} });
    const server = tracerProvider.getTracer("the service's HTTP server").startSpan("POST /api/v1/auth/login");
    const answer = await context.with(trace.setSpan(context.active(), server), () =>
      send(harness, "POST", "/auth/login", { username, password: goodPassword }),
    );
    server.end();

    expect(answer.code).toBe(50000);
    const [span] = spansOf("login");
    expect(span?.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
    // The route's span is the active one inside it: a storage's own spans are its children.
    expect(activeInStorage).toBe(span?.spanContext().spanId);
    expect(span?.status).toEqual({ code: 2 });
    expect(span?.attributes).toMatchObject({
      "portcullis.outcome": "error",
      "portcullis.code": 50000,
      "error.type": "TypeError",
    });
    expect(JSON.stringify(span?.attributes)).not.toContain("connection");
  });

  it("requireAuth's check of a bearer token is a span with the user id, and a refusal a failure with its code", async () => {
    const harness = await telemetryHarness();
    const userId = await addUser(harness.auth, username);
    const signedIn = await send(harness, "POST", "/auth/login", { username, password: goodPassword });
    const accessToken = (signedIn.data as unknown as { accessToken: string }).accessToken;
    const connection = (authorization: string) => ({
      header: (name: string) => (name === "authorization" ? authorization : undefined),
      peerAddress: "192.0.2.1",
      secure: true,
    });

    await authorizeRequest(harness.auth, connection(`Bearer ${accessToken}`));
    await expect(authorizeRequest(harness.auth, connection("Bearer not-a-token"))).rejects.toMatchObject({ code: 40101 });

    const [allowed, refused] = spansOf("authorizeRequest");
    expect(allowed?.attributes).toMatchObject({ "portcullis.outcome": "success", "portcullis.code": 0, "enduser.id": userId });
    expect(refused?.attributes).toMatchObject({ "portcullis.outcome": "refused", "portcullis.code": 40101 });
    expect(JSON.stringify(refused?.attributes)).not.toContain("not-a-token");
    const metrics = await collectMetrics();
    expect(
      countOf(metrics, "portcullis.failures", { "portcullis.operation": "authorizeRequest", "portcullis.code": 40101 }),
    ).toBe(1);
  });
});

describe("metrics", () => {
  it("counts sign-in steps by method and outcome, failures, throttles, refreshes and refresh token reuse", async () => {
    const harness = await telemetryHarness();
    await addUser(harness.auth, username);
    const totpUser = await addUser(harness.auth, "second-factor-user");
    const { secret } = await enrolTotp(harness.auth, totpUser);

    const signedIn = await send(harness, "POST", "/auth/login", { username, password: goodPassword });
    const { refreshToken } = signedIn.data as unknown as { refreshToken: string };
    await send(harness, "POST", "/auth/refresh", { refreshToken });
    expect((await send(harness, "POST", "/auth/refresh", { refreshToken })).code).toBe(40101);

    const pending = await send(harness, "POST", "/auth/login", { username: "second-factor-user", password: goodPassword });
    const tempToken = (pending.data as { tempToken: string }).tempToken;
    await send(harness, "POST", "/auth/2fa/verify", { tempToken, code: wrongCodeAt(secret, harness.clock.now) });
    await send(harness, "POST", "/auth/2fa/verify", { tempToken, code: nextCode(harness, secret) });

    const answers: number[] = [];
    for (let attempt = 0; attempt < 6; attempt += 1) {
      answers.push((await send(harness, "POST", "/auth/login", { username, password: "wrong password" })).code);
    }
    expect(answers).toContain(42900);

    const metrics = await collectMetrics();
    const signIns = (method: string, outcome: string) => signInsCounted(metrics, method, outcome);
    expect(signIns("password", "success")).toBe(1);
    expect(signIns("password", "second_factor_required")).toBe(1);
    expect(signIns("totp", "failure")).toBe(1);
    expect(signIns("totp", "success")).toBe(1);
    expect(signIns("password", "failure")).toBe(answers.filter((code) => code === 40100).length);
    expect(countOf(metrics, "portcullis.throttles", { "portcullis.throttle.scope": "account" })).toBeGreaterThanOrEqual(1);
    expect(countOf(metrics, "portcullis.token.refreshes")).toBe(1);
    expect(countOf(metrics, "portcullis.refresh_token.reuses")).toBe(1);
    expect(countOf(metrics, "portcullis.failures", { "portcullis.operation": "refresh", "portcullis.code": 40101 })).toBe(1);
    expect(
      countOf(metrics, "portcullis.failures", { "portcullis.operation": "login", "portcullis.code": 42900 }),
    ).toBeGreaterThanOrEqual(1);
  });

  it("PL-1: an email sign-in is counted with the method email: a wrong code a failure, the right one a success", async () => {
    const outbox: EmailMessage[] = [];
    const harness = await telemetryHarness({
      email: { send: (message) => void outbox.push(message), resetUrl: "https://a.example/r", verifyUrl: "https://a.example/v" },
      emailSignIn: { enabled: true },
    });
    await createUser(harness.auth, { username, password: goodPassword, email: "metered@example.com", emailVerified: true });
    const begun = await send(harness, "POST", "/auth/email-sign-in/begin", { email: "metered@example.com" });
    const binding = (begun.data as { binding: string }).binding;
    await emailDeliveriesSettled(harness.auth);
    const code = outbox.at(-1)?.code as string;
    const wrong = code === "000000" ? "000001" : "000000";
    expect((await send(harness, "POST", "/auth/email-sign-in/finish", { binding, code: wrong })).code).toBe(40100);
    expect((await send(harness, "POST", "/auth/email-sign-in/finish", { binding, code })).code).toBe(0);
    const metrics = await collectMetrics();
    expect(signInsCounted(metrics, "email", "failure")).toBe(1);
    expect(signInsCounted(metrics, "email", "success")).toBe(1);
  });

  it("STUP-4, ASVS 6.3.3: a sign-in that must enrol a second factor is counted and traced as enrolment_required, its completion as a TOTP success", async () => {
    const harness = await telemetryHarness({ secondFactor: { required: "always" } });
    const userId = await addUser(harness.auth, username);
    const pending = await send(harness, "POST", "/auth/login", { username, password: goodPassword });
    expect(pending.code).toBe(40105);
    const tempToken = (pending.data as { tempToken: string }).tempToken;
    const setup = await send(harness, "POST", "/auth/2fa/enrolment/setup", { tempToken });
    const secret = decodeBase32((setup.data as { secret: string }).secret);
    const enabled = await send(harness, "POST", "/auth/2fa/enrolment/enable", {
      tempToken,
      code: codeAt(secret, harness.clock.now),
    });
    expect(enabled.code).toBe(0);

    const [login] = spansOf("login");
    expect(login?.attributes).toMatchObject({
      "portcullis.outcome": "enrolment_required",
      "portcullis.code": 40105,
      "enduser.id": userId,
    });
    expect(login?.events.map((event) => event.name)).toEqual(["second_factor.enrolment_required"]);
    const metrics = await collectMetrics();
    const signIns = (method: string, outcome: string) => signInsCounted(metrics, method, outcome);
    expect(signIns("password", "enrolment_required")).toBe(1);
    expect(signIns("totp", "success")).toBe(1);
  });

  it("STUP-5: a provider's sign-in counts as oauth, though its session's amr holds the otp the provider asserted", async () => {
    const harness = await telemetryHarness();
    const provider = resolveOAuthConfig({
      providers: {
        corp: {
          issuer: "https://id.example.com",
          clientId: "app",
          redirectUri: "https://app.example.com/cb",
          trustedForSecondFactor: true,
        },
      },
    }).get("corp") as ResolvedOAuthProvider;
    const profile = { subject: "sub-1", username: "olga" };
    expect((await signInWithIdentity(harness.auth, provider, profile, {}, { ...notStated, amr: ["pwd", "otp"] })).status).toBe(
      "authenticated",
    );
    const metrics = await collectMetrics();
    expect([signInsCounted(metrics, "oauth", "success"), signInsCounted(metrics, "totp", "success")]).toEqual([1, 0]);
  });

  it("times each storage operation by store and operation, in seconds, with error.type when it fails", async () => {
    const storage = memoryStorage();
    const harness = await telemetryHarness({ storage });
    await addUser(harness.auth, username);
    await send(harness, "POST", "/auth/login", { username, password: goodPassword });
    storage.sessions.findSession = async () => {
      throw new RangeError("the database said no");
    };
    await expect(harness.auth.storage.sessions.findSession("some-id")).rejects.toThrow(RangeError);

    const metrics = await collectMetrics();
    const durations = metrics.get("portcullis.storage.operation.duration") ?? [];
    const lookup = durations.find(
      (point) =>
        point.attributes["portcullis.storage.store"] === "users" &&
        point.attributes["portcullis.storage.operation"] === "findByUsernameKey",
    );
    expect((lookup?.value as Histogram | undefined)?.count).toBeGreaterThanOrEqual(1);
    expect((lookup?.value as Histogram | undefined)?.sum).toBeLessThan(1);
    const failed = durations.find((point) => point.attributes["portcullis.storage.operation"] === "findSession");
    expect(failed?.attributes).toEqual({
      "portcullis.storage.store": "sessions",
      "portcullis.storage.operation": "findSession",
      "error.type": "RangeError",
    });
    // The view keeps the storage's own members: a memory storage's extras are still there.
    expect(harness.auth.storage).not.toBe(storage);
    expect(Object.keys(storage).filter((key) => !(key in harness.auth.storage))).toEqual([]);
  });
});

describe("off", () => {
  it("telemetry: false records nothing, even with an SDK registered, and leaves the storage as given", async () => {
    const storage = memoryStorage();
    trace.setGlobalTracerProvider(tracerProvider);
    const harness = makeAuth({ storage, telemetry: false });
    await new Promise((resolve) => setImmediate(resolve));
    await addUser(harness.auth, username);
    try {
      expect((await send(harness, "POST", "/auth/login", { username, password: goodPassword })).code).toBe(0);
    } finally {
      trace.disable();
    }
    expect(harness.auth.telemetry).toMatchObject({ active: null, undecided: false });
    expect(harness.auth.storage).toBe(storage);
    expect(spans.getFinishedSpans()).toEqual([]);
    expect([...(await collectMetrics()).values()].flat()).toEqual([]);
  });

  it("without an SDK registered, an instance decides once that telemetry is off; a globally registered SDK is found", async () => {
    const storage = memoryStorage();
    const harness = makeAuth({ storage });
    await new Promise((resolve) => setImmediate(resolve));
    await addUser(harness.auth, username);
    expect(harness.auth.telemetry.undecided).toBe(true);
    await send(harness, "POST", "/auth/login", { username, password: goodPassword });
    expect(harness.auth.telemetry).toMatchObject({ active: null, undecided: false });
    expect(harness.auth.storage).toBe(storage);
    expect(spans.getFinishedSpans()).toEqual([]);

    trace.setGlobalTracerProvider(tracerProvider);
    metrics.setGlobalMeterProvider(meterProvider);
    try {
      const registered = makeAuth();
      await new Promise((resolve) => setImmediate(resolve));
      await addUser(registered.auth, username);
      await send(registered, "POST", "/auth/login", { username, password: goodPassword });
      expect(spansOf("login")).toHaveLength(1);
      const points = await collectMetrics();
      expect(countOf(points, "portcullis.sign_in.attempts", { "portcullis.sign_in.outcome": "success" })).toBe(1);
    } finally {
      trace.disable();
      metrics.disable();
    }
  });

  it("refuses a telemetry option that is not false or providers", () => {
    expect(() => makeAuth({ telemetry: true as never })).toThrow(
      /telemetry must be false or \{ tracerProvider\?, meterProvider\? \}/,
    );
    expect(() => makeAuth({ telemetry: { tracerProvider: {} } as never })).toThrow(/telemetry.tracerProvider must be/);
    expect(() => makeAuth({ telemetry: { tracer: tracerProvider } as never })).toThrow(/telemetry.tracer is not an option/);
  });
});
