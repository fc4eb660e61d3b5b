import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { addUser, authError, goodPassword, makeAuth, signIn } from "../flows/fixtures.test-support.js";
import { makeAuthenticator, makePasskeyAuth, origin, userWithPasskey } from "../flows/passkeys.test-support.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { webauthnBegin, webauthnFinish } from "../flows/webauthn-login.js";
import { webauthnRegisterBegin, webauthnRegisterFinish } from "../flows/webauthn-register.js";
import { authorizationServerOf } from "../oauth/authorization-server.js";
import { authWithProviders } from "../oauth/oauth.test-support.js";

/** Everything written to stderr while `run` runs. */
async function stderrOf(run: () => Promise<unknown>): Promise<string> {
  const chunks: string[] = [];
  const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  });
  try {
    await run();
  } finally {
    spy.mockRestore();
  }
  return chunks.join("");
}

afterEach(() => vi.restoreAllMocks());

describe("a passkey ceremony refused for its origin or relying party", () => {
  it("WA-2: an origin passkeys.origins does not list is a check.failed event and, with debug, a line; the answer stays 40100", async () => {
    const harness = makePasskeyAuth({ debug: true });
    const { authenticator } = await userWithPasskey(harness);
    const { ceremonyId, options } = await webauthnBegin(harness.auth, {});
    const response = authenticator.authenticate(options, { origin: "http://localhost:5173" });
    let code: number | undefined;
    const output = await stderrOf(async () => {
      code = (await authError(webauthnFinish(harness.auth, { ceremonyId, response, ip: "192.0.2.7" }))).code;
    });
    expect(code).toBe(40100);
    expect(harness.events.filter((event) => event.type === "check.failed")).toEqual([
      expect.objectContaining({
        check: "passkey_origin",
        expected: [origin],
        received: "http://localhost:5173",
        ip: "192.0.2.7",
      }),
    ]);
    expect(output).toBe(
      '[portcullis] refused: a passkey ceremony came from an origin that passkeys.origins does not list (expected "https://app.example.com"; got "http://localhost:5173")\n',
    );
  });

  it("WA-2: a relying party other than passkeys.rpId is named when it is the origin's host or a parent of it", async () => {
    const harness = makePasskeyAuth();
    const { authenticator } = await userWithPasskey(harness);
    const { ceremonyId, options } = await webauthnBegin(harness.auth, {});
    const response = authenticator.authenticate(options, { rpId: "app.example.com" });
    await authError(webauthnFinish(harness.auth, { ceremonyId, response }));
    expect(harness.events.filter((event) => event.type === "check.failed")).toEqual([
      expect.objectContaining({ check: "passkey_rp_id", expected: ["example.com"], received: "app.example.com" }),
    ]);
  });

  it("WA-2: a registration from another origin is explained too; a refusal for another reason is not", async () => {
    const harness = makePasskeyAuth();
    const { userId } = await userWithPasskey(harness);
    const authenticator = makeAuthenticator();
    const begin = () => webauthnRegisterBegin(harness.auth, { userId, label: "Key", password: "correct horse battery staple" });
    const first = await begin();
    const fromElsewhere = authenticator.register(first.options, { origin: "https://evil.example.net" });
    await authError(webauthnRegisterFinish(harness.auth, { userId, ceremonyId: first.ceremonyId, response: fromElsewhere }));
    const second = await begin();
    const wrongChallenge = authenticator.register(second.options, { challenge: "AAAA" });
    await authError(webauthnRegisterFinish(harness.auth, { userId, ceremonyId: second.ceremonyId, response: wrongChallenge }));
    expect(harness.events.filter((event) => event.type === "check.failed")).toEqual([
      expect.objectContaining({ check: "passkey_origin", received: "https://evil.example.net" }),
    ]);
  });
});

describe("what a passkey refusal's explanation says", () => {
  it("WA-2: every listed origin is named in the line, joined by 'or'", async () => {
    const harness = makePasskeyAuth({ debug: true }, { origins: [origin, "https://admin.example.com"] });
    const { authenticator } = await userWithPasskey(harness);
    const { ceremonyId, options } = await webauthnBegin(harness.auth, {});
    const response = authenticator.authenticate(options, { origin: "https://evil.example.net" });
    const output = await stderrOf(() => authError(webauthnFinish(harness.auth, { ceremonyId, response })));
    expect(output).toContain(
      '(expected "https://app.example.com" or "https://admin.example.com"; got "https://evil.example.net")',
    );
  });

  it("WA-2: a registration for a relying party that is neither the origin's host nor a parent of it is reported as none", async () => {
    const harness = makePasskeyAuth({ debug: true });
    const userId = await addUser(harness.auth, "alice");
    const { ceremonyId, options } = await webauthnRegisterBegin(harness.auth, { userId, label: "Key", password: goodPassword });
    const response = makeAuthenticator().register(options, { rpId: "other.example.org" });
    let code: number | undefined;
    const output = await stderrOf(async () => {
      code = (await authError(webauthnRegisterFinish(harness.auth, { userId, ceremonyId, response }))).code;
    });
    expect(code).toBe(40100);
    expect(harness.events.filter((event) => event.type === "check.failed")).toEqual([
      expect.objectContaining({ check: "passkey_rp_id", expected: ["example.com"], received: null }),
    ]);
    expect(output).toBe(
      '[portcullis] refused: a passkey answered for another relying party than passkeys.rpId (expected "example.com"; got none)\n',
    );
  });

  it("WA-2: a registration for a parent domain of the origin's host names that parent", async () => {
    const harness = makePasskeyAuth({}, { rpId: "app.example.com" });
    const userId = await addUser(harness.auth, "alice");
    const { ceremonyId, options } = await webauthnRegisterBegin(harness.auth, { userId, label: "Key", password: goodPassword });
    const response = makeAuthenticator().register(options, { rpId: "example.com" });
    await authError(webauthnRegisterFinish(harness.auth, { userId, ceremonyId, response }));
    expect(harness.events.filter((event) => event.type === "check.failed")).toEqual([
      expect.objectContaining({ check: "passkey_rp_id", expected: ["app.example.com"], received: "example.com" }),
    ]);
  });

  it("an answer whose clientDataJSON is unreadable or names no origin string is refused as before, and explains nothing", async () => {
    const harness = makePasskeyAuth({ debug: true });
    const { authenticator } = await userWithPasskey(harness);
    for (const clientData of [
      "not json",
      JSON.stringify({ type: "webauthn.get", challenge: "AAAA" }),
      JSON.stringify({ type: "webauthn.get", challenge: "AAAA", origin: ["https://evil.example.net"] }),
    ]) {
      const { ceremonyId, options } = await webauthnBegin(harness.auth, {});
      const signed = authenticator.authenticate(options);
      const response = {
        ...signed,
        response: { ...signed.response, clientDataJSON: Buffer.from(clientData).toString("base64url") },
      };
      let code: number | undefined;
      const output = await stderrOf(async () => {
        code = (await authError(webauthnFinish(harness.auth, { ceremonyId, response }))).code;
      });
      expect(code).toBe(40100);
      expect(output).toBe("");
    }
    expect(harness.events.some((event) => event.type === "check.failed")).toBe(false);
  });
});

describe("a token refused for its issuer or audience", () => {
  it("is a check.failed event naming both values, and with debug a line on stderr; the answer stays 40101", async () => {
    const signer = makeAuth({ issuer: "https://auth.example.com" });
    await addUser(signer.auth, "alice");
    const { accessToken } = await signIn(signer, "alice");
    const quiet = makeAuth({ storage: signer.storage, clock: signer.clock });
    const verbose = makeAuth({ storage: signer.storage, clock: signer.clock, debug: true });

    const quietOutput = await stderrOf(async () => {
      expect((await authError(verifyAccessToken(quiet.auth, { token: accessToken }))).code).toBe(40101);
    });
    expect(quietOutput).toBe("");
    expect(quiet.events.filter((event) => event.type === "check.failed")).toEqual([
      expect.objectContaining({
        check: "token_issuer",
        expected: ["https://api.example.com"],
        received: "https://auth.example.com",
      }),
    ]);

    const verboseOutput = await stderrOf(async () => {
      expect((await authError(verifyAccessToken(verbose.auth, { token: accessToken }))).code).toBe(40101);
    });
    expect(verboseOutput).toBe(
      '[portcullis] refused: an access token signed with a configured key names another issuer than the issuer setting (expected "https://api.example.com"; got "https://auth.example.com")\n',
    );
    expect(verboseOutput).not.toContain(accessToken);
  });

  it("names the audience when only the audience differs", async () => {
    const signer = makeAuth({ audience: "other-api" });
    await addUser(signer.auth, "alice");
    const { accessToken } = await signIn(signer, "alice");
    const verifier = makeAuth({ storage: signer.storage, clock: signer.clock });
    await authError(verifyAccessToken(verifier.auth, { token: accessToken }));
    expect(verifier.events.filter((event) => event.type === "check.failed")).toEqual([
      expect.objectContaining({ check: "token_audience", expected: ["example-api"], received: "other-api" }),
    ]);
  });

  it("holds a received value of up to 200 characters whole, and cuts a longer one to 200 and an ellipsis", async () => {
    for (const [length, received] of [
      [200, "a".repeat(200)],
      [201, `${"a".repeat(200)}…`],
    ] as const) {
      const signer = makeAuth({ audience: "a".repeat(length) });
      await addUser(signer.auth, "alice");
      const { accessToken } = await signIn(signer, "alice");
      const verifier = makeAuth({ storage: signer.storage, clock: signer.clock, debug: true });
      const output = await stderrOf(() => authError(verifyAccessToken(verifier.auth, { token: accessToken })));
      expect(verifier.events.filter((event) => event.type === "check.failed")).toEqual([
        expect.objectContaining({ check: "token_audience", received }),
      ]);
      expect(output).toContain(`; got "${received}")`);
    }
  });

  it("is not reported for a token that is merely invalid", async () => {
    const { auth, events } = makeAuth({ debug: true });
    const output = await stderrOf(() => authError(verifyAccessToken(auth, { token: "a.b.c" })));
    expect(output).toBe("");
    expect(events.some((event) => event.type === "check.failed")).toBe(false);
  });
});

describe("a provider whose discovery document names another issuer", () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  /** A discovery document on loopback naming `named` as its issuer. */
  async function discoveryNaming(named: (base: string) => string): Promise<string> {
    const listening = createServer((_request, response) => {
      const base = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
      response.setHeader("content-type", "application/json");
      response.end(
        JSON.stringify({
          issuer: named(base),
          authorization_endpoint: `${base}/authorize`,
          token_endpoint: `${base}/token`,
          jwks_uri: `${base}/jwks`,
          response_types_supported: ["code"],
          subject_types_supported: ["public"],
          id_token_signing_alg_values_supported: ["RS256"],
        }),
      );
    });
    server = listening;
    await new Promise<void>((resolve) => listening.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
  }

  it("OA-4: answers 50300 that says so (not 'could not be reached'), with a check.failed event and a debug line", async () => {
    const base = await discoveryNaming((url) => `${url}/realms/other`);
    const { auth, events } = authWithProviders(
      { corp: { issuer: base, clientId: "c", clientSecret: "s", redirectUri: "https://app.example.com/cb" } },
      { debug: true },
    );
    const provider = auth.config.oauthProviders.get("corp");
    if (!provider) throw new Error("no provider");
    let code: number | undefined;
    let message: string | undefined;
    const output = await stderrOf(async () => {
      const error = await authError(authorizationServerOf(auth, provider));
      code = error.code;
      message = error.message;
    });
    expect(code).toBe(50300);
    expect(message).toBe("The provider's discovery document names another issuer than the configured one");
    expect(events.filter((event) => event.type === "check.failed")).toEqual([
      expect.objectContaining({ check: "oauth_issuer", expected: [base], received: `${base}/realms/other` }),
    ]);
    expect(output).toContain(`(expected "${base}"; got "${base}/realms/other")`);
  });

  it("a provider that cannot be reached is still reported as such, with no check.failed", async () => {
    const base = await discoveryNaming((url) => url);
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    server = undefined;
    const { auth, events } = authWithProviders({
      corp: { issuer: base, clientId: "c", clientSecret: "s", redirectUri: "https://app.example.com/cb" },
    });
    const provider = auth.config.oauthProviders.get("corp");
    if (!provider) throw new Error("no provider");
    const error = await authError(authorizationServerOf(auth, provider));
    expect([error.code, error.message]).toEqual([50300, "The sign-in provider could not be reached"]);
    expect(events.some((event) => event.type === "check.failed")).toBe(false);
  });
});
