import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { testPassword } from "../fixtures/auth.js";
import {
  clientTargets,
  envelopeOf,
  expireAccessTokens,
  rejection,
  servedPerTest,
  signedInClient,
  statusIn,
} from "./client-servers.js";

const thingsPath = "/api/v1/things";

/** A server of another origin that answers `{}` and notes the Authorization header of each request. */
async function startOtherOrigin(): Promise<{ origin: string; authorizations: (string | undefined)[]; close(): Promise<void> }> {
  const authorizations: (string | undefined)[] = [];
  const server = createServer((request, response) => {
    authorizations.push(request.headers.authorization);
    response.setHeader("content-type", "application/json");
    response.end("{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    authorizations,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe.each(clientTargets)("client.fetch against %s", (_name, start, statusMode) => {
  const serve = servedPerTest(start, statusMode);

  it("finds a refusal for the token by the envelope's 40101 (status 401, or 200 under always-200), refreshes once and answers the retry; another refusal is answered as it is", async () => {
    const harness = await serve();
    const { client } = await signedInClient(harness, "alice");
    const expired = await client.accessToken();
    expireAccessTokens(harness);

    const refusedAsSent = await fetch(`${harness.baseUrl}/things`, { headers: { authorization: `Bearer ${expired}` } });
    expect(refusedAsSent.status).toBe(statusIn(statusMode, 401));
    expect((await envelopeOf(refusedAsSent)).code).toBe(40101);

    const answered = await client.fetch(thingsPath);
    expect(answered.status).toBe(200);
    expect((await envelopeOf(answered)).code).toBe(0);
    expect([harness.countSent("GET", thingsPath), harness.refreshesSent()]).toEqual([2, 1]);

    const forbidden = await client.fetch(`${thingsPath}/7`, { method: "DELETE" });
    expect(forbidden.status).toBe(statusIn(statusMode, 403));
    expect((await envelopeOf(forbidden)).code).toBe(40300);
    expect([harness.countSent("DELETE", `${thingsPath}/7`), harness.refreshesSent()]).toEqual([1, 1]);
  });
});

describe("client.fetch and other origins", () => {
  const [, start, statusMode] = clientTargets[0];
  const serve = servedPerTest(start, statusMode);

  it("sends the access token to the API's origin and the bearerOrigins only; a request elsewhere goes out untouched", async () => {
    const harness = await serve();
    const other = await startOtherOrigin();
    try {
      const { client } = await signedInClient(harness, "bob");
      const trusting = harness.client({ bearerOrigins: [other.origin] });
      await trusting.login({ username: "bob", password: testPassword });

      await client.fetch(`${other.origin}/files/1`, { headers: { authorization: "Basic mine" } });
      await client.fetch(`${other.origin}/files/2`);
      await trusting.fetch(`${other.origin}/files/3`);
      expect(other.authorizations).toEqual(["Basic mine", undefined, `Bearer ${await trusting.accessToken()}`]);
    } finally {
      await other.close();
    }
  });

  it("an aborted request rejects with the AbortError itself, not an AuthClientError", async () => {
    const harness = await serve();
    const { client } = await signedInClient(harness, "carol");
    const aborted = await client.fetch(thingsPath, { signal: AbortSignal.abort() }).catch((error: unknown) => error);
    expect(aborted).toBeInstanceOf(Error);
    expect((aborted as Error).name).toBe("AbortError");
    expect(await rejection(client.fetch("http://127.0.0.1:1/nothing"))).toMatchObject({ kind: "network" });
  });
});
