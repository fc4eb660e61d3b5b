import { AsyncLocalStorage } from "node:async_hooks";
import type * as OpenTelemetryApi from "@opentelemetry/api";
import type { Auth } from "../auth.js";
import { openTelemetry } from "../dependencies.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { AuthEvent } from "../events/types.js";
import type { AuthMethod, Storage } from "../storage/types.js";
import { coreVersion } from "../version.js";
import { timedStorage } from "./storage-timing.js";
import type { ActiveTelemetry, RequestObserver, TelemetryOption, TelemetryProviders, TelemetrySwitch } from "./types.js";

type Api = typeof OpenTelemetryApi;

/** The instrumentation scope of every span and metric. */
const scope = "@portcullis/core";

/** Bucket bounds of the storage duration histogram, in seconds: 0.5 ms to 10 s. */
const storageBuckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The sign-in step each sign-in route is, for its failures and its requests for a second factor. */
const signInMethodOfRoute: Readonly<Record<string, string>> = {
  login: "password",
  register: "password",
  webauthnFinish: "passkey",
  oauthCallback: "oauth",
  verifyTotp: "totp",
  useRecoveryCode: "recovery_code",
  finishTotpEnrolment: "totp",
  finishPasskeyEnrolment: "passkey",
  finishEmailSignIn: "email",
};

/** The events whose `userId` is the user a request acts for (not, say, an account an administrator made). */
const eventsOfTheUser: ReadonlySet<AuthEvent["type"]> = new Set([
  "login.succeeded",
  "login.failed",
  "second_factor.required",
  "second_factor.enrolment_required",
  "second_factor.succeeded",
  "second_factor.failed",
  "token.refreshed",
  "refresh_token.reused",
]);

/**
 * The step a completed sign-in proved last, from its `amr`: a second factor, else the first. A
 * stored `mfa` is a provider's asserted second factor (STUP-5): its `otp` is the provider's.
 */
function signInMethodOf(amr: readonly AuthMethod[]): string {
  if (amr.includes("mfa")) return "oauth";
  if (amr.includes("otp")) return "totp";
  if (amr.includes("rc")) return "recovery_code";
  if (amr.includes("fed")) return "oauth";
  if (amr.includes("hwk")) return "passkey";
  if (amr.includes("email")) return "email";
  return "password";
}

/** The outcome attribute of a business code. */
function outcomeOf(code: number): string {
  if (code === 0) return "success";
  if (code === ErrorCode.SecondFactorRequired) return "second_factor_required";
  if (code === ErrorCode.SecondFactorEnrolmentRequired) return "enrolment_required";
  if (code === ErrorCode.TooManyAttempts) return "throttled";
  return code >= 50000 ? "error" : "refused";
}

/** The business code a thrown error is answered with (see `errorResponse`). */
function codeOf(error: unknown): number {
  return error instanceof AuthError ? error.code : ErrorCode.Internal;
}

/** `error.type` of an internal error: its class name, never its message, which may quote a row or an input. */
function errorTypeOf(error: unknown): string {
  return error instanceof Error ? error.name : "_OTHER";
}

/** The span attributes of an event that are safe enumerations: never a key, id or address. */
function eventAttributes(event: AuthEvent): OpenTelemetryApi.Attributes {
  if (event.type === "login.failed") return { "portcullis.reason": event.reason };
  if (event.type === "second_factor.failed" || event.type === "second_factor.succeeded") {
    return { "portcullis.second_factor": event.kind };
  }
  if (event.type === "throttled") return { "portcullis.throttle.scope": event.scope };
  return {};
}

/** The metric instruments of one auth instance. */
interface Instruments {
  signIns: OpenTelemetryApi.Counter;
  failures: OpenTelemetryApi.Counter;
  throttles: OpenTelemetryApi.Counter;
  refreshes: OpenTelemetryApi.Counter;
  reuses: OpenTelemetryApi.Counter;
  storageDuration: OpenTelemetryApi.Histogram;
}

function createInstruments(meter: OpenTelemetryApi.Meter): Instruments {
  const counter = (name: string, unit: string, description: string) => meter.createCounter(name, { unit, description });
  return {
    signIns: counter(
      "portcullis.sign_in.attempts",
      "{attempt}",
      "Sign-in steps, by method and outcome (a password, a passkey, a provider, a second factor).",
    ),
    failures: counter(
      "portcullis.failures",
      "{failure}",
      "Requests answered with a failure code, by operation and code; requireAuth's refusals as authorizeRequest.",
    ),
    throttles: counter("portcullis.throttles", "{throttle}", "Requests refused by a throttling budget, by scope."),
    refreshes: counter("portcullis.token.refreshes", "{refresh}", "Refresh tokens exchanged for a new token set."),
    reuses: counter(
      "portcullis.refresh_token.reuses",
      "{reuse}",
      "Spent refresh tokens presented again: each ended its session (RT-2).",
    ),
    storageDuration: meter.createHistogram("portcullis.storage.operation.duration", {
      description: "Duration of storage operations, by store and operation.",
      unit: "s",
      advice: { explicitBucketBoundaries: storageBuckets },
    }),
  };
}

/** One request of a route, as its span and the metrics see it. */
class RouteRequest implements RequestObserver {
  readonly signInMethod: string | undefined;

  constructor(
    private readonly api: Api,
    readonly operation: string,
    readonly span: OpenTelemetryApi.Span | undefined,
    private readonly instruments: Instruments | null,
  ) {
    this.signInMethod = signInMethodOfRoute[operation];
  }

  user(userId: string): void {
    this.span?.setAttribute("enduser.id", userId);
  }

  answered(code: number): void {
    this.finish(code, undefined);
  }

  failed(error: unknown): void {
    this.finish(codeOf(error), error);
  }

  private finish(code: number, error: unknown): void {
    this.span?.setAttributes({ "portcullis.code": code, "portcullis.outcome": outcomeOf(code) });
    if (code >= 50000) {
      this.span?.setAttribute("error.type", errorTypeOf(error));
      this.span?.setStatus({ code: this.api.SpanStatusCode.ERROR });
    }
    if (code !== 0 && code !== ErrorCode.SecondFactorRequired) {
      this.instruments?.failures.add(1, { "portcullis.operation": this.operation, "portcullis.code": code });
    }
  }
}

/** Spans and metrics of one auth instance, with the tracer and meter telemetry turned on with. */
function activeTelemetry(
  api: Api,
  tracer: OpenTelemetryApi.Tracer | null,
  instruments: Instruments | null,
): { telemetry: ActiveTelemetry; onEvent: (event: AuthEvent) => void } {
  const requests = new AsyncLocalStorage<RouteRequest>();
  const telemetry: ActiveTelemetry = {
    async traceRoute(operation, method, route, serve) {
      const name = operation ?? "unknownRoute";
      const attributes: OpenTelemetryApi.Attributes = { "portcullis.operation": name, "http.request.method": method };
      if (route !== null) attributes["http.route"] = route;
      const span = tracer?.startSpan(`portcullis ${name}`, { kind: api.SpanKind.INTERNAL, attributes });
      const request = new RouteRequest(api, name, span, instruments);
      const run = () => requests.run(request, () => serve(request));
      try {
        return await (span ? api.context.with(api.trace.setSpan(api.context.active(), span), run) : run());
      } finally {
        span?.end();
      }
    },
    async traceAuthorize(authorize) {
      const span = tracer?.startSpan("portcullis authorizeRequest", {
        kind: api.SpanKind.INTERNAL,
        attributes: { "portcullis.operation": "authorizeRequest" },
      });
      const request = new RouteRequest(api, "authorizeRequest", span, instruments);
      try {
        const access = await authorize();
        request.user("userId" in access ? access.userId : access.serviceAccountId);
        request.answered(0);
        return access;
      } catch (error) {
        request.failed(error);
        throw error;
      } finally {
        span?.end();
      }
    },
  };
  const onEvent = (event: AuthEvent) => {
    const request = requests.getStore();
    if (instruments !== null) countEvent(instruments, event, request);
    if (request === undefined) return;
    const { userId } = event as { userId?: string | null };
    if (typeof userId === "string" && eventsOfTheUser.has(event.type)) request.user(userId);
    request.span?.addEvent(event.type, eventAttributes(event));
  };
  return { telemetry, onEvent };
}

/** Adds an event to the counters it belongs to. */
function countEvent(instruments: Instruments, event: AuthEvent, request: RouteRequest | undefined): void {
  const routeMethod = request?.signInMethod ?? "unknown";
  switch (event.type) {
    case "login.succeeded":
      instruments.signIns.add(1, {
        "portcullis.sign_in.method": signInMethodOf(event.amr),
        "portcullis.sign_in.outcome": "success",
      });
      return;
    case "second_factor.required":
      instruments.signIns.add(1, {
        "portcullis.sign_in.method": routeMethod,
        "portcullis.sign_in.outcome": "second_factor_required",
      });
      return;
    case "second_factor.enrolment_required":
      instruments.signIns.add(1, {
        "portcullis.sign_in.method": routeMethod,
        "portcullis.sign_in.outcome": "enrolment_required",
      });
      return;
    case "login.failed":
      instruments.signIns.add(1, {
        "portcullis.sign_in.method": routeMethod,
        "portcullis.sign_in.outcome": "failure",
        "portcullis.reason": event.reason,
      });
      return;
    case "second_factor.failed":
      instruments.signIns.add(1, {
        "portcullis.sign_in.method": event.kind,
        "portcullis.sign_in.outcome": "failure",
        "portcullis.reason": "wrong_code",
      });
      return;
    case "throttled":
      instruments.throttles.add(1, { "portcullis.throttle.scope": event.scope });
      return;
    case "token.refreshed":
      instruments.refreshes.add(1);
      return;
    case "refresh_token.reused":
      instruments.reuses.add(1);
      return;
  }
}

/** The tracer to use: the given provider's, else the globally registered SDK's, else none. */
function tracerOf(api: Api, given: TelemetryProviders["tracerProvider"]): OpenTelemetryApi.Tracer | null {
  if (given !== undefined) return given.getTracer(scope, coreVersion) as OpenTelemetryApi.Tracer;
  const global = api.trace.getTracerProvider() as Partial<OpenTelemetryApi.ProxyTracerProvider> & OpenTelemetryApi.TracerProvider;
  // The global provider is a proxy; its delegate is what an SDK registered. Without one, every span would be a no-op.
  if (typeof global.getDelegateTracer === "function") return global.getDelegateTracer(scope, coreVersion) ?? null;
  return global.getTracer(scope, coreVersion);
}

/** The meter to use: the given provider's, else the globally registered SDK's, else none. */
function meterOf(api: Api, given: TelemetryProviders["meterProvider"]): OpenTelemetryApi.Meter | null {
  if (given !== undefined) return given.getMeter(scope, coreVersion) as OpenTelemetryApi.Meter;
  const meter = api.metrics.getMeter(scope, coreVersion);
  return meter === api.createNoopMeter() ? null : meter;
}

/** Turns telemetry on for `auth` if there is a tracer or a meter to report to. */
function turnOn(auth: Auth, api: Api, providers: TelemetryProviders): ActiveTelemetry | null {
  const tracer = tracerOf(api, providers.tracerProvider);
  const meter = meterOf(api, providers.meterProvider);
  if (tracer === null && meter === null) return null;
  const instruments = meter === null ? null : createInstruments(meter);
  const { telemetry, onEvent } = activeTelemetry(api, tracer, instruments);
  auth.events.on("*", onEvent);
  if (instruments !== null) {
    const { storageDuration } = instruments;
    (auth as { storage: Storage }).storage = timedStorage(auth.storage, (attributes, seconds, errorType) => {
      storageDuration.record(seconds, errorType === undefined ? attributes : { ...attributes, "error.type": errorType });
    });
  }
  return telemetry;
}

/**
 * Checks the `telemetry` option of `createAuth`.
 *
 * @throws {TypeError} anything but `false` or an object of providers with `getTracer` / `getMeter`.
 */
export function telemetryOptionOf(value: unknown): TelemetryOption | undefined {
  if (value === undefined || value === false) return value;
  const providers = value as Record<string, unknown> | null;
  if (typeof providers !== "object" || providers === null || Array.isArray(providers)) {
    throw new TypeError(
      "telemetry must be false or { tracerProvider?, meterProvider? }; leave it out to use the providers an OpenTelemetry SDK registered",
    );
  }
  const known = ["tracerProvider", "meterProvider"];
  for (const key of Object.keys(providers)) {
    if (!known.includes(key))
      throw new TypeError(`telemetry.${key} is not an option; did you mean tracerProvider or meterProvider?`);
  }
  const tracerProvider = providers.tracerProvider as { getTracer?: unknown } | undefined;
  if (tracerProvider !== undefined && typeof tracerProvider?.getTracer !== "function") {
    throw new TypeError("telemetry.tracerProvider must be an OpenTelemetry TracerProvider (an object with getTracer)");
  }
  const meterProvider = providers.meterProvider as { getMeter?: unknown } | undefined;
  if (meterProvider !== undefined && typeof meterProvider?.getMeter !== "function") {
    throw new TypeError("telemetry.meterProvider must be an OpenTelemetry MeterProvider (an object with getMeter)");
  }
  return value as TelemetryProviders;
}

/** The switch of an instance whose telemetry is off for good. */
export function telemetryOff(): TelemetrySwitch {
  return { active: null, undecided: false, decide() {} };
}

/**
 * Starts loading `@opentelemetry/api` for `auth` unless `option` is `false`. Once it has loaded
 * the instance looks for providers to report to (the given ones, or those an SDK registered
 * globally), and if it finds none, looks once more at the first request after: an SDK started
 * after `createAuth`, in the same startup, is still found. Then the decision stands, so a
 * request of an instance without telemetry reads one field and goes on.
 */
export function startTelemetry(auth: Auth, option: TelemetryOption | undefined): void {
  if (option === false) return;
  const providers = option ?? {};
  const state = auth.telemetry;
  let api: Api | undefined;
  let looks = 0;
  state.undecided = true;
  state.decide = () => {
    if (api === undefined || !state.undecided) return;
    looks += 1;
    state.active = turnOn(auth, api, providers);
    if (state.active !== null || looks >= 2) state.undecided = false;
  };
  openTelemetry().then(
    (loaded) => {
      api = loaded;
      state.decide();
    },
    () => {
      state.undecided = false;
      if (option !== undefined) {
        process.emitWarning(
          "Portcullis was given telemetry providers but could not load @opentelemetry/api; install it beside @portcullis/core",
          { code: "PORTCULLIS_TELEMETRY" },
        );
      }
    },
  );
}

/**
 * The telemetry of `auth` for this request, or null when it is off: deciding first if it is
 * still undecided.
 */
export function telemetryOf(auth: Auth): ActiveTelemetry | null {
  const state = auth.telemetry;
  if (state.undecided) state.decide();
  return state.active;
}
