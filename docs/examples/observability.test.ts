import { randomBytes } from "node:crypto";
import { AggregationTemporality, InMemoryMetricExporter } from "@opentelemetry/sdk-metrics";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { createUser, handleRequest, memoryStorage } from "@portcullis/core";
import { expect, it } from "vitest";
import { createObservedAuth } from "./observability.js";

it("createObservedAuth: a sign-in through the routes is a span and a count in the given exporters", async () => {
  const spans = new InMemorySpanExporter();
  const metrics = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const { auth, flush, shutdown } = createObservedAuth(
    {
      storage: memoryStorage(),
      issuer: "https://api.example.com",
      audience: "example-api",
      secrets: { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("base64url") },
    },
    { spans, metrics },
  );
  const password = "correct horse battery staple";
  await createUser(auth, { username: "ada", password });
  const body = new TextEncoder().encode(JSON.stringify({ username: "ada", password }));
  const response = await handleRequest(auth, {
    method: "POST",
    url: "/api/v1/auth/login",
    header: (name) => (name === "content-type" ? "application/json" : undefined),
    body: (async function* () {
      yield body;
    })(),
    peerAddress: "127.0.0.1",
    secure: true,
  });
  expect(response?.status).toBe(200);
  await flush();

  expect(spans.getFinishedSpans().map((span) => span.name)).toEqual(["portcullis login"]);
  const names = metrics
    .getMetrics()
    .flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics.map((metric) => metric.descriptor.name)));
  expect(names).toContain("portcullis.sign_in.attempts");
  expect(names).toContain("portcullis.storage.operation.duration");
  await shutdown();
});
