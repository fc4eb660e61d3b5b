/**
 * The `telemetry` option of `createAuth`, and what the rest of core sees of telemetry. No type
 * here names `@opentelemetry/api`: it is an optional peer, and a service without it must still
 * compile against these declarations.
 */

/** The part of an OpenTelemetry `TracerProvider` Portcullis calls: `getTracer`. */
export interface TelemetryTracerProvider {
  /** The tracer of the instrumentation scope `name` at `version`: core asks for `"@portcullis/core"` and its own version. */
  getTracer(name: string, version?: string): unknown;
}

/** The part of an OpenTelemetry `MeterProvider` Portcullis calls: `getMeter`. */
export interface TelemetryMeterProvider {
  /** The meter of the instrumentation scope `name` at `version`: core asks for `"@portcullis/core"` and its own version. */
  getMeter(name: string, version?: string): unknown;
}

/**
 * Providers to report to instead of the global ones `@opentelemetry/api` holds. Either may be
 * left out: that signal then goes to its global provider, if one is registered.
 */
export interface TelemetryProviders {
  /** An OpenTelemetry `TracerProvider`, e.g. the SDK's `BasicTracerProvider` or `NodeTracerProvider`. */
  tracerProvider?: TelemetryTracerProvider;
  /** An OpenTelemetry `MeterProvider`, e.g. the SDK's `MeterProvider`. */
  meterProvider?: TelemetryMeterProvider;
}

/**
 * The `telemetry` option of `createAuth`. Left out, spans and metrics go to the providers an
 * OpenTelemetry SDK registered globally, when `@opentelemetry/api` is installed and an SDK is
 * registered; `false` turns telemetry off without loading the API; providers send them there.
 * See `docs/observability.md`.
 */
export type TelemetryOption = false | TelemetryProviders;

/** @internal How the current request ends, as told to its span. */
export interface RequestObserver {
  /** The user the request acts for, once known: the bearer token's, or the one a sign-in proved. */
  user(userId: string): void;
  /** The route answered with this business code (0, or 40102). */
  answered(code: number): void;
  /** The route threw: an `AuthError`'s code, or 50000 for anything else. */
  failed(error: unknown): void;
}

/** @internal Spans and metrics of one auth instance, once telemetry is on. */
export interface ActiveTelemetry {
  /**
   * Serves one request of the route `operation` (its OpenAPI operation id; `null` for a path
   * under the base path that is no route) in a span, with an observer the request reports to.
   */
  traceRoute<T>(
    operation: string | null,
    method: string,
    route: string | null,
    serve: (observer: RequestObserver) => Promise<T>,
  ): Promise<T>;
  /** Checks the bearer token of a request to one of the service's own routes (`requireAuth`) in a span. */
  traceAuthorize<T extends { userId: string } | { serviceAccountId: string }>(authorize: () => Promise<T>): Promise<T>;
}

/**
 * @internal Whether telemetry is on for an auth instance. `active` is read on every request;
 * `undecided` is true until `@opentelemetry/api` has loaded and one request has looked for a
 * registered SDK after it, or the API could not be loaded, or telemetry is off.
 */
export interface TelemetrySwitch {
  /** The spans and metrics of the instance, or null while telemetry is off or undecided. */
  active: ActiveTelemetry | null;
  /** True while {@link TelemetrySwitch.decide} may still turn telemetry on. */
  undecided: boolean;
  /** Looks once more, now that the API may have loaded or an SDK been registered since `createAuth`. */
  decide(): void;
}
