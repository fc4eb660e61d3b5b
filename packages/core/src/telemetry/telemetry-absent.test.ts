import { afterEach, describe, expect, it, vi } from "vitest";
import { addUser, goodPassword, makeAuth } from "../flows/fixtures.test-support.js";
import { handleRequest } from "../http/handle-request.js";
import { memoryStorage } from "../storage/memory.js";

// As if `@opentelemetry/api` were not installed: its import fails.
vi.mock("@opentelemetry/api", () => {
  throw new Error("Cannot find package '@opentelemetry/api'");
});

afterEach(() => {
  vi.restoreAllMocks();
});

const settle = () => new Promise((resolve) => setImmediate(resolve));

function login(username: string) {
  const body = JSON.stringify({ username, password: goodPassword });
  return {
    method: "POST",
    url: "/api/v1/auth/login",
    header: (name: string) => (name === "content-type" ? "application/json" : undefined),
    body: {
      async *[Symbol.asyncIterator]() {
        yield new TextEncoder().encode(body);
      },
    },
    peerAddress: "192.0.2.1",
    secure: true,
  };
}

describe("without @opentelemetry/api", () => {
  it("core works, decides telemetry is off, leaves the storage as given and warns no one who did not ask for telemetry", async () => {
    const warn = vi.spyOn(process, "emitWarning");
    const storage = memoryStorage();
    const harness = makeAuth({ storage });
    await settle();
    await addUser(harness.auth, "alice");
    const response = await handleRequest(harness.auth, login("alice"));
    expect(JSON.parse(response?.body ?? "{}").code).toBe(0);
    expect(harness.auth.telemetry).toMatchObject({ active: null, undecided: false });
    expect(harness.auth.storage).toBe(storage);
    expect(warn).not.toHaveBeenCalled();
  });

  it("given providers, says once that the API must be installed", async () => {
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
    const harness = makeAuth({ telemetry: { tracerProvider: { getTracer: () => ({}) } } });
    await settle();
    expect(harness.auth.telemetry.active).toBeNull();
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]?.[0]).toMatch(/install it beside @portcullis\/core/);
    expect(warn.mock.calls[0]?.[1]).toEqual({ code: "PORTCULLIS_TELEMETRY" });
  });
});
