import type { PushMetricExporter } from "@opentelemetry/sdk-metrics";
import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { type Auth, type AuthConfig, createAuth } from "@portcullis/core";

/**
 * An auth instance that reports its spans and metrics to providers of its own rather than to
 * the global ones an OpenTelemetry SDK registers: for a service that keeps Portcullis's telemetry
 * apart, or a test. `flush` exports what is still buffered; `shutdown`, at exit, flushes and stops.
 */
export function createObservedAuth(
  config: AuthConfig,
  exporters: { spans: SpanExporter; metrics: PushMetricExporter },
): { auth: Auth; flush: () => Promise<void>; shutdown: () => Promise<void> } {
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporters.spans)] });
  const meterProvider = new MeterProvider({
    readers: [new PeriodicExportingMetricReader({ exporter: exporters.metrics, exportIntervalMillis: 60_000 })],
  });
  const auth = createAuth({ ...config, telemetry: { tracerProvider, meterProvider } });
  return {
    auth,
    flush: async () => {
      await Promise.all([tracerProvider.forceFlush(), meterProvider.forceFlush()]);
    },
    shutdown: async () => {
      await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}
