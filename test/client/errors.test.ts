import { AuthClientError } from "@portcullis/client";
import { memoryStorage } from "@portcullis/core";
import { describe, expect, it } from "vitest";
import { createTestUser } from "../fixtures/auth.js";
import { startTcpForwarder } from "../fixtures/tcp-forwarder.js";
import { clientTargets, envelopeOf, rejection, servedPerTest, statusIn } from "./client-servers.js";

/** The server's raw answer to a login, beside the client's error for the same request. */
async function rawLogin(
  baseUrl: string,
  body: object,
): Promise<{ requestIdHeader: string | null; envelope: Record<string, unknown> }> {
  const response = await fetch(`${baseUrl}/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { requestIdHeader: response.headers.get("x-request-id"), envelope: await envelopeOf(response) };
}

describe.each(clientTargets)("AuthClientError against %s", (_name, start, statusMode) => {
  const serve = servedPerTest(start, statusMode);

  it("HTTP-6: a 40100 and a 42900 are AuthClientErrors with the code, the status of the mode and no requestId, since the server gives none to a refusal", async () => {
    const harness = await serve({ throttle: { account: [{ limit: 2, window: "15m" }], ip: [{ limit: 1000, window: "15m" }] } });
    await createTestUser(harness.auth, "alice");
    const client = harness.client();
    const wrong = { username: "alice", password: "not alice's password" };

    const refused = await rejection(client.login(wrong));
    expect(refused).toBeInstanceOf(Error);
    expect(refused).toMatchObject({ name: "AuthClientError", kind: "server", code: 40100, status: statusIn(statusMode, 401) });
    const raw = await rawLogin(harness.baseUrl, wrong);
    expect(raw).toEqual({ requestIdHeader: null, envelope: { code: 40100, message: refused.message } });
    expect(refused.requestId).toBeUndefined();

    const throttled = await rejection(client.login(wrong));
    expect(throttled).toMatchObject({ kind: "server", code: 42900, status: statusIn(statusMode, 429), requestId: undefined });
    expect(throttled.retryAfter).toBeGreaterThan(0);
  });

  it("HTTP-5: a 50300 (the OAuth provider is unreachable) and a 50000 (storage broke) carry the requestId the server reported to onInternalError", async () => {
    const stopped = await startTcpForwarder(null);
    await stopped.close();
    const storage = memoryStorage();
    storage.users.findByUsernameKey = async () => {
      throw new Error("the disk is on fire");
    };
    const reported: string[] = [];
    const harness = await serve({
      storage,
      oauth: {
        providers: {
          corp: { issuer: `http://127.0.0.1:${stopped.port}`, clientId: "portcullis", redirectUri: "https://app.example.com/cb" },
        },
        unsafeAllowHttpLoopbackProviders: true,
      },
      onInternalError: (_error, requestId) => reported.push(requestId),
    });
    const client = harness.client();

    const unavailable = await rejection(client.oauth.start("corp"));
    expect(unavailable).toMatchObject({ kind: "server", code: 50300, status: statusIn(statusMode, 503) });
    const internal = await rejection(client.login({ username: "anyone", password: "any password at all" }));
    expect(internal).toMatchObject({ kind: "server", code: 50000, status: statusIn(statusMode, 500) });
    expect(internal.message).toBe("Internal error");
    expect(reported).toHaveLength(2);
    expect([unavailable.requestId, internal.requestId]).toEqual(reported);
    expect(`${internal.message} ${JSON.stringify(internal)}`).not.toContain("disk");
  });

  it("every failure is the one class: no answer is kind network with its cause, and not_signed_in sends nothing", async () => {
    const harness = await serve();
    const client = harness.client();
    const notSignedIn = await rejection(client.me());
    expect(notSignedIn).toMatchObject({ kind: "not_signed_in", code: 40101, status: 0 });
    expect(harness.sent).toEqual([]);

    await harness.close();
    const offline = await rejection(client.fetch("/api/v1/things"));
    expect(offline).toBeInstanceOf(AuthClientError);
    expect(offline).toMatchObject({ kind: "network", code: null, status: 0 });
    expect(offline.cause).toBeInstanceOf(Error);
  });
});
