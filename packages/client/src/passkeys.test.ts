import type { AuthenticationResponseJSON } from "@simplewebauthn/browser";
import { describe, expect, it } from "vitest";
import { createAuthClient } from "./client.js";
import type { PasskeyCeremonies } from "./passkeys.js";
import { scriptedBaseUrl, scriptedServer, tokenSet } from "./scripted-server.test-support.js";

const beginPath = "/auth/public-key/login/begin";
const finishPath = "/auth/public-key/login/finish";

const assertion: AuthenticationResponseJSON = {
  id: "credential-1",
  rawId: "credential-1",
  type: "public-key",
  response: { clientDataJSON: "e30", authenticatorData: "AA", signature: "AA" },
  clientExtensionResults: {},
};

/**
 * A client of a scripted server that begins and finishes passkey sign-ins, whose authenticator
 * answers `authenticate` (the assertion, or a throw). Records the options each ceremony was given.
 */
function passkeyClientOf(authenticate: () => AuthenticationResponseJSON = () => assertion) {
  const server = scriptedServer((request) =>
    request.path === beginPath
      ? { code: 0, data: { ceremonyId: "ceremony-1", options: { challenge: "Y2hhbGxlbmdl" } } }
      : { code: 0, data: tokenSet(1) },
  );
  const ceremonyOptions: Parameters<PasskeyCeremonies["startAuthentication"]>[0][] = [];
  const passkeyCeremonies: PasskeyCeremonies = {
    startAuthentication: async (options) => {
      ceremonyOptions.push(options);
      return authenticate();
    },
    startRegistration: () => Promise.reject(new Error("no registration in these tests")),
  };
  const client = createAuthClient({ baseUrl: scriptedBaseUrl, fetch: server.fetch, passkeyCeremonies });
  return { client, server, ceremonyOptions };
}

describe("client.passkeys.signIn against a scripted server", () => {
  it("asks the server for one user's passkeys when given a username, and for any (discoverable) without one", async () => {
    const { client, server } = passkeyClientOf();
    await client.passkeys.signIn({ username: "alice" });
    await client.passkeys.signIn();
    expect(server.sentTo(beginPath).map(({ body }) => body)).toEqual([{ username: "alice" }, {}]);
  });

  it("useBrowserAutofill (conditional mediation) reaches the ceremony only when asked for", async () => {
    const { client, ceremonyOptions } = passkeyClientOf();
    await client.passkeys.signIn({ useBrowserAutofill: true });
    await client.passkeys.signIn();
    expect(ceremonyOptions.map(({ useBrowserAutofill }) => useBrowserAutofill)).toEqual([true, undefined]);
    expect(Object.keys(ceremonyOptions[1] ?? {})).toEqual(["optionsJSON"]);
  });

  it("a failed ceremony is passkey_ceremony, naming its code or DOMException only when that is one word, with the cause kept and nothing sent to finish", async () => {
    const failures: [unknown, string][] = [
      [new DOMException("The operation either timed out or was not allowed.", "NotAllowedError"), " (NotAllowedError)"],
      [Object.assign(new Error("Cancelled"), { code: "ERROR_CEREMONY_ABORTED" }), " (ERROR_CEREMONY_ABORTED)"],
      [Object.assign(new Error("Cancelled"), { code: "not one word", name: "Error: see https://evil.example" }), ""],
      [undefined, ""],
    ];
    for (const [cause, named] of failures) {
      const { client, server } = passkeyClientOf(() => {
        throw cause;
      });
      const error = await client.passkeys.signIn().catch((thrown: unknown) => thrown);
      expect(error, String(cause)).toMatchObject({
        name: "AuthClientError",
        kind: "passkey_ceremony",
        message: `The passkey ceremony did not complete${named}`,
      });
      expect((error as Error).cause).toBe(cause);
      expect(server.sentTo(finishPath)).toEqual([]);
    }
  });
});
