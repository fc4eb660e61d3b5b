// Issue 42 item 2 over HTTP on every adapter: login/begin with {"mediation": "conditional"} begins a
// stateless ceremony for the browser's autofill that stores nothing and takes no attempt (PL-11),
// whose id login/finish spends once (PL-12) and register/finish and a re-authentication refuse.
import type { CeremonyStart, MemoryStorage, TokenSet } from "@portcullis/core";
import type { SoftwareAuthenticator } from "@portcullis/testing";
import type { PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestAuth, createTestUser, makeTestAuth, makeTestAuthenticator } from "../fixtures/auth.js";
import { type CallResult, post } from "./client.js";
import { expectEnvelope } from "./contract-suite.js";
import { type RunningServer, adapters } from "./servers.js";

const publicKey = "/api/v1/auth/public-key";
/** Generous budgets but the client address's, which is 5: an autofill begin must not spend it. */
const throttle = {
  account: [{ limit: 1000, window: "15m" as const }],
  ip: [{ limit: 5, window: "15m" as const }],
  unauthenticatedWrites: [{ limit: 1000, window: "15m" as const }],
};

describe.each(adapters)("passkey autofill over HTTP on %s", (_name, start) => {
  let testAuth: TestAuth;
  let server: RunningServer;
  /** Each test's requests come from an address of their own (through a trusted proxy), so the budget of 5 is the test's. */
  let address = 0;
  let from: Record<string, string> = {};
  /** The proxy's headers of a client address no earlier test used. */
  const nextAddress = () => {
    address += 1;
    return { "x-forwarded-for": `198.51.100.${address}`, "x-forwarded-proto": "https" };
  };
  beforeAll(async () => {
    testAuth = makeTestAuth({ throttle, http: { trustedProxies: ["127.0.0.1"] } });
    server = await start(testAuth.auth);
  });
  afterAll(async () => {
    await server.close();
  });

  const send = (path: string, body: unknown, headers: Record<string, string> = {}, token?: string) =>
    post(server, `${publicKey}${path}`, body, { headers: { ...from, ...headers }, ...(token ? { token } : {}) });

  async function beginAutofill(): Promise<CeremonyStart<PublicKeyCredentialRequestOptionsJSON>> {
    const result = await send("/login/begin", { mediation: "conditional" });
    expectEnvelope(result, 0);
    return result.body.data;
  }

  /** A user signed in with the password, who registered a passkey of `authenticator`: their tokens. */
  async function userWithPasskey(username: string, authenticator: SoftwareAuthenticator): Promise<TokenSet> {
    await createTestUser(testAuth.auth, username);
    const signedIn = await post(server, "/api/v1/auth/login", { username, password: "correct horse battery staple" });
    expectEnvelope(signedIn, 0);
    const token = signedIn.body.data.accessToken as string;
    const begun = await post(server, `${publicKey}/register/begin`, { label: "Laptop" }, { token });
    expectEnvelope(begun, 0);
    const registered = await post(server, `${publicKey}/register/finish`, authenticator.register(begun.body.data.options), {
      token,
      headers: { "x-webauthn-ceremony": begun.body.data.ceremonyId },
    });
    expectEnvelope(registered, 0);
    return signedIn.body.data;
  }

  const finish = (ceremonyId: string, assertion: unknown): Promise<CallResult> =>
    send("/login/finish", assertion, { "x-webauthn-ceremony": ceremonyId });

  it("PL-11: 20 autofill begins from one address store nothing and take no attempt: the challenge store and counters are unchanged, and the address's budget of 5 is whole", async () => {
    from = nextAddress();
    const storage = testAuth.auth.storage as MemoryStorage;
    const before = storage.sizes();
    const ids = new Set<string>();
    for (let i = 0; i < 20; i += 1) {
      const { ceremonyId, options } = await beginAutofill();
      expect(ceremonyId).toMatch(/^cm\.[A-Za-z0-9_-]{32}$/);
      expect(options).toMatchObject({ allowCredentials: [], userVerification: "required", timeout: 300_000 });
      ids.add(ceremonyId);
    }
    expect(ids.size).toBe(20);
    expect(storage.sizes()).toEqual(before);
    for (let i = 0; i < 5; i += 1) expectEnvelope(await send("/login/begin", {}), 0);
    expectEnvelope(await send("/login/begin", {}), 42900);
  });

  it("PL-11: a mediation other than conditional, or with a username, is 40002", async () => {
    from = nextAddress();
    for (const body of [{ mediation: "optional" }, { mediation: true }, { mediation: "conditional", username: "alice" }]) {
      expectEnvelope(await send("/login/begin", body), 40002);
    }
  });

  it("PL-12: an autofill ceremony signs in once: of 20 concurrent finishes with its id exactly one is 0, the others 40100; the token's amr is the passkey's", async () => {
    from = nextAddress();
    const authenticator = makeTestAuthenticator();
    await userWithPasskey("racer", authenticator);
    // The finishes come from many addresses: each takes its address's attempt (RL-4).
    const { ceremonyId, options } = await beginAutofill();
    const assertion = authenticator.authenticate(options);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        post(server, `${publicKey}/login/finish`, assertion, {
          headers: { "x-webauthn-ceremony": ceremonyId, "x-forwarded-for": `192.0.2.${index + 1}`, "x-forwarded-proto": "https" },
        }),
      ),
    );
    const codes = results.map((result) => result.body.code);
    expect(codes.filter((code) => code === 0)).toHaveLength(1);
    expect(codes.filter((code) => code === 40100)).toHaveLength(19);
    const winner = results.find((result) => result.body.code === 0) as CallResult;
    expectEnvelope(winner, 0);
    expect(winner.body.data.user.username).toBe("racer");
    const claims = JSON.parse(Buffer.from(winner.body.data.accessToken.split(".")[1], "base64url").toString());
    expect(claims.amr).toEqual(["hwk", "user", "mfa"]);
    for (const loser of results.filter((result) => result.body.code !== 0)) expectEnvelope(loser, 40100);
  });

  it("PL-11: tampered, expired, too-far-future and malformed ids are refused alike (40100)", async () => {
    from = nextAddress();
    const authenticator = makeTestAuthenticator();
    await userWithPasskey("tamperer", authenticator);
    const payloadOf = (id: string) => Buffer.from(id.slice(3), "base64url");
    const variants: [string, (id: string) => string][] = [
      [
        "tampered",
        (id) => {
          const payload = payloadOf(id);
          payload[23] = (payload[23] as number) ^ 1;
          return `cm.${payload.toString("base64url")}`;
        },
      ],
      [
        "too far in the future",
        () => {
          const payload = Buffer.alloc(24);
          payload.writeBigUInt64BE(BigInt(testAuth.clock.now + 300_001));
          return `cm.${payload.toString("base64url")}`;
        },
      ],
      ["malformed", (id) => `${id}!`],
      ["the prefix alone", () => "cm."],
    ];
    for (const [what, make] of variants) {
      const { ceremonyId, options } = await beginAutofill();
      const result = await finish(make(ceremonyId), authenticator.authenticate(options));
      expectEnvelope(result, 40100);
      expect(result.body.code, what).toBe(40100);
    }
    const { ceremonyId, options } = await beginAutofill();
    testAuth.clock.advance(300_000);
    expectEnvelope(await finish(ceremonyId, authenticator.authenticate(options)), 40100);
  });

  it("PL-12: register/finish and reauthenticate/public-key/finish refuse an autofill id (40100) without spending it", async () => {
    from = nextAddress();
    const authenticator = makeTestAuthenticator();
    const { accessToken: token } = await userWithPasskey("holder", authenticator);
    const { ceremonyId, options } = await beginAutofill();
    const registration = await send("/register/begin", { label: "Spare" }, {}, token);
    expectEnvelope(registration, 0);
    const attestation = makeTestAuthenticator().register(registration.body.data.options);
    expectEnvelope(await send("/register/finish", attestation, { "x-webauthn-ceremony": ceremonyId }, token), 40100);
    const reauthentication = await post(server, "/api/v1/auth/reauthenticate/public-key/begin", {}, { token, headers: from });
    expectEnvelope(reauthentication, 0);
    const reauthenticated = await post(
      server,
      "/api/v1/auth/reauthenticate/public-key/finish",
      authenticator.authenticate(reauthentication.body.data.options),
      { token, headers: { ...from, "x-webauthn-ceremony": ceremonyId } },
    );
    expectEnvelope(reauthenticated, 40100);
    expectEnvelope(await finish(ceremonyId, authenticator.authenticate(options)), 0);
  });
});
