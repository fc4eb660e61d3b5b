// Service accounts end to end on every adapter (issue 41 item 3): the administrators' routes
// (SA-1, SA-2), the OAuth 2.0 token endpoint driven by an independent client, oauth4webapi, with
// client_secret_basic and private_key_jwt (SA-3), and the tokens it issues on an app's routes
// behind requireAuth (SA-4). The clock is frozen (test/fixtures/auth.ts); oauth4webapi's own
// clock is moved to it by its clockSkew.
import { createHash } from "node:crypto";
import { type AuthEvent, createUser, jwtBearerAssertionType } from "@portcullis/core";
import { exportJWK, generateKeyPair } from "jose";
import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestAuth, generousThrottle, makeTestAuth, testIssuer, testPassword } from "../fixtures/auth.js";
import { type CallResult, call, post } from "./client.js";
import { expectEnvelope } from "./contract-suite.js";
import { eitherRoute, invoicesRoute, machineAdapters, whoRoute } from "./machine-servers.js";
import { describeOpenApiDrift } from "./openapi-drift.js";
import type { RunningServer } from "./servers.js";

const base = "/api/v1/auth";
const form = "application/x-www-form-urlencoded";

describe.each(machineAdapters)("service accounts over HTTP on %s", (name, start) => {
  let testAuth: TestAuth;
  let server: RunningServer;
  let admin: { id: string; accessToken: string };
  let person: { id: string; accessToken: string };
  const events: AuthEvent[] = [];
  const tag = name.replace(/\W/g, "").toLowerCase();

  beforeAll(async () => {
    testAuth = makeTestAuth({ throttle: generousThrottle, serviceAccounts: { enabled: true } });
    testAuth.auth.events.on("*", (event) => {
      events.push(event);
    });
    server = await start(testAuth.auth);
    admin = await signedIn(`root-${tag}`, ["admin"]);
    person = await signedIn(`ada-${tag}`);
  });
  afterAll(async () => {
    await server.close();
  });

  function ok<T = Record<string, unknown>>(answer: CallResult): T {
    expectEnvelope(answer, 0);
    return answer.body.data as T;
  }
  const get = (path: string, token: string) => call(server, "GET", path, { token });
  const send = (method: string, path: string, token: string, json: unknown = {}) => call(server, method, path, { token, json });
  /** An administrator's change, with their password (their sign-in may be older than `recentSignIn` by then). */
  const change = (method: string, path: string, json: Record<string, unknown> = {}) =>
    send(method, `${base}/admin/service-accounts${path}`, admin.accessToken, { ...json, password: testPassword });

  async function signedIn(username: string, roles: string[] = []) {
    const user = await createUser(testAuth.auth, { username, password: testPassword, roles });
    const tokens = ok<{ accessToken: string }>(await post(server, `${base}/login`, { username, password: testPassword }));
    return { id: user.id, accessToken: tokens.accessToken };
  }

  async function newAccount(scopes = ["invoices:read", "invoices:write"], roles: string[] = ["billing"]) {
    return ok<{ id: string; clientId: string }>(await change("POST", "", { name: `billing ${events.length}`, roles, scopes }));
  }
  async function newSecret(id: string) {
    return ok<{ id: string; clientSecret: string }>(await change("POST", `/${id}/secrets`));
  }

  /** What oauth4webapi is told of the server: its issuer, and the token endpoint on this test server. */
  const authorizationServer = (): oauth.AuthorizationServer => ({
    issuer: testIssuer,
    token_endpoint: `${server.baseUrl}${base}/token`,
  });
  /** The client, with oauth4webapi's clock set to the frozen one, and what it last sent and received. */
  function clientOf(clientId: string) {
    const seen: { body?: string; headers?: Headers } = {};
    const client: oauth.Client = {
      client_id: clientId,
      [oauth.clockSkew]: Math.round((testAuth.clock.now - Date.now()) / 1000),
    };
    const options = {
      [oauth.allowInsecureRequests]: true,
      [oauth.customFetch]: async (url: string, init: RequestInit) => {
        seen.body = String(init.body);
        const response = await fetch(url, init);
        seen.headers = response.headers;
        return response;
      },
    };
    return { client, options, seen };
  }

  async function grant(clientId: string, authentication: oauth.ClientAuth, scope?: string) {
    const { client, options, seen } = clientOf(clientId);
    const parameters: Record<string, string> = scope === undefined ? {} : { scope };
    const response = await oauth.clientCredentialsGrantRequest(
      authorizationServer(),
      client,
      authentication,
      parameters,
      options,
    );
    const result = await oauth.processClientCredentialsResponse(authorizationServer(), client, response);
    return { result, seen };
  }

  /** The OAuth error oauth4webapi throws for a refused grant: its `error`, and the status. */
  async function refusedGrant(clientId: string, authentication: oauth.ClientAuth, scope?: string) {
    try {
      await grant(clientId, authentication, scope);
    } catch (error) {
      // A 401 with WWW-Authenticate is oauth4webapi's WWWAuthenticateChallengeError: the error is in the body it kept.
      const { error: code, status, response } = error as { error?: string; status?: number; response?: Response };
      return { error: code ?? ((await response?.json()) as { error?: string } | undefined)?.error, status };
    }
    throw new Error("the grant was not refused");
  }

  /** A token request sent as it is, so that its answer is checked against the document too. */
  const tokenRequest = (body: string, headers: Record<string, string> = {}) =>
    call(server, "POST", `${base}/token`, { body, headers: { "content-type": form, ...headers } });
  const basic = (id: string, secret: string) =>
    `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;

  it("SA-1: administrators make, list, read, change and delete service accounts, each change re-authenticated; others are 40300", async () => {
    expectEnvelope(await send("POST", `${base}/admin/service-accounts`, person.accessToken, { name: "x" }), 40300);
    const made = await newAccount();
    expect(made).toMatchObject({ clientId: made.id, roles: ["billing"], scopes: ["invoices:read", "invoices:write"] });
    expect(made).toMatchObject({ disabled: false, createdBy: admin.id });
    const listed = ok<{ id: string }[]>(await get(`${base}/admin/service-accounts`, admin.accessToken));
    expect(listed.map(({ id }) => id)).toContain(made.id);
    expect(ok(await get(`${base}/admin/service-accounts/${made.id}`, admin.accessToken))).toMatchObject({ credentials: [] });
    expectEnvelope(await get(`${base}/admin/service-accounts/unknown`, admin.accessToken), 40400);
    expect(ok(await change("PATCH", `/${made.id}`, { name: "invoicing" }))).toMatchObject({ name: "invoicing" });
    expectEnvelope(await change("PATCH", `/${made.id}`), 40001);
    expectEnvelope(await change("PATCH", `/${made.id}`, { disabled: "yes" }), 40002);
    expectEnvelope(await change("POST", "", { name: "" }), 40001);
    expectEnvelope(await change("POST", "", { name: "x".repeat(65) }), 42200);

    // Past recentSignIn, the administrator's sign-in no longer proves them: the password does (STUP-3).
    testAuth.clock.advance(301_000);
    expectEnvelope(await send("PATCH", `${base}/admin/service-accounts/${made.id}`, admin.accessToken, { name: "n" }), 40001);
    expectEnvelope(
      await send("PATCH", `${base}/admin/service-accounts/${made.id}`, admin.accessToken, { name: "n", password: "wrong" }),
      40100,
    );
    expectEnvelope(await send("DELETE", `${base}/admin/service-accounts/${made.id}`, admin.accessToken), 40001);
    expect(ok(await change("DELETE", `/${made.id}`))).toEqual({ deleted: true });
    expectEnvelope(await get(`${base}/admin/service-accounts/${made.id}`, admin.accessToken), 40400);
    expectEnvelope(await change("DELETE", `/${made.id}`), 40400);
    expect(events.map((event) => event.type)).toEqual(
      expect.arrayContaining(["service_account.created", "service_account.updated", "service_account.deleted"]),
    );
  });

  it("SA-2: a client secret is answered once and stored only as its SHA-256; an account holds two at most", async () => {
    const account = await newAccount();
    const first = await newSecret(account.id);
    expect(first.clientSecret).toMatch(/^pcs_live_[A-Za-z0-9]+$/);
    const details = ok<{ credentials: { id: string; kind: string; start: string }[] }>(
      await get(`${base}/admin/service-accounts/${account.id}`, admin.accessToken),
    );
    expect(details.credentials).toEqual([
      expect.objectContaining({ id: first.id, kind: "secret", start: first.clientSecret.slice(0, 13) }),
    ]);
    const text = JSON.stringify(await testAuth.auth.storage.serviceAccounts?.findServiceAccountClient(account.id));
    expect(text).not.toContain(first.clientSecret);
    expect(text).not.toContain(first.clientSecret.slice(9));
    expect(text).toContain(createHash("sha256").update(first.clientSecret).digest("base64url"));
    const second = await newSecret(account.id);
    expectEnvelope(await change("POST", `/${account.id}/secrets`), 40900);
    expect(ok(await change("DELETE", `/${account.id}/credentials/${first.id}`))).toEqual({ removed: true });
    expectEnvelope(await change("DELETE", `/${account.id}/credentials/${first.id}`), 40400);
    await newSecret(account.id);
    expect(second.clientSecret).not.toBe(first.clientSecret);
    // The removed secret is refused at the token endpoint; the kept one is not.
    expect((await refusedGrant(account.id, oauth.ClientSecretBasic(first.clientSecret))).error).toBe("invalid_client");
    expect((await grant(account.id, oauth.ClientSecretBasic(second.clientSecret))).result.token_type).toBe("bearer");
    expectEnvelope(await change("POST", `/${account.id}/secrets`, { expiresIn: "soon" }), 42200);
  });

  it("SA-3: oauth4webapi gets tokens with client_secret_basic and private_key_jwt; a replayed assertion, a wrong secret, another grant, a foreign scope and a secret in the body are refused", async () => {
    const account = await newAccount();
    const { clientSecret } = await newSecret(account.id);

    const { result, seen } = await grant(account.id, oauth.ClientSecretBasic(clientSecret));
    expect(result).toMatchObject({ token_type: "bearer", expires_in: 600, scope: "invoices:read invoices:write" });
    expect(result.refresh_token).toBeUndefined();
    expect(seen.headers?.get("cache-control")).toBe("no-store");
    expect(seen.headers?.get("pragma")).toBe("no-cache");
    expect((await grant(account.id, oauth.ClientSecretBasic(clientSecret), "invoices:read")).result.scope).toBe("invoices:read");

    const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
    const jwk = { ...(await exportJWK(publicKey)), kid: `k-${tag}` };
    const key = ok<{ id: string; kid: string; alg: string }>(await change("POST", `/${account.id}/keys`, { jwk }));
    expect(key).toMatchObject({ kind: "jwk", kid: `k-${tag}`, alg: "ES256", start: null });
    expectEnvelope(await change("POST", `/${account.id}/keys`, { jwk: await exportJWK(privateKey) }), 42200);
    const signed = await grant(account.id, oauth.PrivateKeyJwt({ key: privateKey, kid: `k-${tag}` }), "invoices:read");
    expect(signed.result).toMatchObject({ token_type: "bearer", scope: "invoices:read" });
    // The same assertion again: its jti is spent (RFC 7523 §3).
    const replayed = await tokenRequest(signed.seen.body as string);
    expect([replayed.status, replayed.body.error]).toEqual([400, "invalid_client"]);

    const wrong = await tokenRequest("grant_type=client_credentials", { authorization: basic(account.id, `${clientSecret}x`) });
    expect([wrong.status, wrong.body.error]).toEqual([401, "invalid_client"]);
    expect(wrong.headers.get("www-authenticate")).toBe(`Basic realm="${testIssuer}"`);
    expect(await refusedGrant(account.id, oauth.ClientSecretBasic("pcs_live_wrong"))).toEqual({
      error: "invalid_client",
      status: 401,
    });
    const unknown = await tokenRequest("grant_type=client_credentials", { authorization: basic("nobody", clientSecret) });
    expect([unknown.status, unknown.body.error]).toEqual([401, "invalid_client"]);

    const password = await tokenRequest("grant_type=password&username=a&password=b", {
      authorization: basic(account.id, clientSecret),
    });
    expect([password.status, password.body.error]).toEqual([400, "unsupported_grant_type"]);
    expect(await refusedGrant(account.id, oauth.ClientSecretBasic(clientSecret), "admin:all")).toEqual({
      error: "invalid_scope",
      status: 400,
    });
    expect(await refusedGrant(account.id, oauth.ClientSecretPost(clientSecret))).toEqual({
      error: "invalid_request",
      status: 400,
    });

    const twice = await tokenRequest("grant_type=client_credentials&scope=a&scope=b", {
      authorization: basic(account.id, clientSecret),
    });
    expect([twice.status, twice.body.error]).toEqual([400, "invalid_request"]);
    const json = await call(server, "POST", `${base}/token`, {
      json: { grant_type: "client_credentials" },
      headers: { authorization: basic(account.id, clientSecret) },
    });
    expect([json.status, json.body.error]).toEqual([400, "invalid_request"]);
    const malformed = await tokenRequest("grant_type=client_credentials", { authorization: "Basic !!!" });
    expect([malformed.status, malformed.body.error]).toEqual([400, "invalid_request"]);
    const none = await tokenRequest("grant_type=client_credentials");
    expect([none.status, none.body.error]).toEqual([400, "invalid_client"]);
    for (const refused of [replayed, wrong, password, twice, json, malformed, none]) {
      expect(Object.keys(refused.body).sort()).toEqual(["error", "error_description"]);
      expect(refused.text).not.toMatch(/stack|Error:|\.ts:\d|pcs_live_/);
      expect(refused.headers.get("cache-control")).toBe("no-store");
    }
    expect(events.filter((event) => event.type === "service_account.token_issued").length).toBeGreaterThanOrEqual(3);
    expect(events.some((event) => event.type === "service_account.token_refused")).toBe(true);
  });

  it("SA-3: private_key_jwt with RS256 and EdDSA keys; an assertion for another audience or a client_id differing from Basic's is refused", async () => {
    const account = await newAccount();
    const rsa = await generateKeyPair("RS256", { extractable: true });
    const ed = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
    ok(await change("POST", `/${account.id}/keys`, { jwk: { ...(await exportJWK(rsa.publicKey)), alg: "RS256", kid: "rsa" } }));
    ok(await change("POST", `/${account.id}/keys`, { jwk: { ...(await exportJWK(ed.publicKey)), kid: "ed" } }));
    for (const [key, kid] of [
      [rsa.privateKey, "rsa"],
      [ed.privateKey, "ed"],
    ] as const) {
      const { result } = await grant(account.id, oauth.PrivateKeyJwt({ key, kid }), "invoices:read");
      expect(result.scope, kid).toBe("invoices:read");
    }
    const elsewhere = oauth.PrivateKeyJwt(
      { key: ed.privateKey, kid: "ed" },
      {
        [oauth.modifyAssertion]: (_header, payload) => {
          payload.aud = "https://elsewhere.example";
        },
      },
    );
    expect(await refusedGrant(account.id, elsewhere)).toEqual({ error: "invalid_client", status: 400 });
    const { clientSecret } = await newSecret(account.id);
    const mismatch = await tokenRequest("grant_type=client_credentials&client_id=someone-else", {
      authorization: basic(account.id, clientSecret),
    });
    expect([mismatch.status, mismatch.body.error]).toEqual([400, "invalid_request"]);
    const both = await tokenRequest(
      `grant_type=client_credentials&client_assertion_type=${encodeURIComponent(jwtBearerAssertionType)}&client_assertion=x.y.z`,
      { authorization: basic(account.id, clientSecret) },
    );
    expect([both.status, both.body.error]).toEqual([400, "invalid_request"]);
  });

  it("SA-4: the token passes requireAuth with service_account credentials and its scope, nowhere else, and is refused from the next request after disable, endTokens or delete", async () => {
    const account = await newAccount();
    const { clientSecret } = await newSecret(account.id);
    const tokenFor = async (scope?: string) =>
      (await grant(account.id, oauth.ClientSecretBasic(clientSecret), scope)).result.access_token;
    const appAnswer = (answer: CallResult) => {
      expect([answer.status, answer.body.code], answer.text).toEqual([200, 0]);
      return answer.body.data as Record<string, unknown>;
    };

    let token = await tokenFor();
    expect(appAnswer(await get(invoicesRoute, token))).toEqual({
      kind: "service_account",
      serviceAccountId: account.id,
      scopes: ["invoices:read", "invoices:write"],
      roles: ["billing"],
    });
    expect(appAnswer(await get(eitherRoute, token))).toMatchObject({ kind: "service_account" });
    expect(appAnswer(await get(eitherRoute, person.accessToken))).toEqual({ kind: "access_token", userId: person.id });
    expectEnvelope(await get(invoicesRoute, person.accessToken), 40300);
    expectEnvelope(await get(invoicesRoute, await tokenFor("invoices:write")), 40300);
    // No person signed in: a default requireAuth route and Portcullis's own bearer routes refuse it.
    expectEnvelope(await get(whoRoute, token), 40101);
    expectEnvelope(await get(`${base}/me`, token), 40101);
    expectEnvelope(await get(`${base}/sessions`, token), 40101);
    expectEnvelope(await get(`${base}/admin/service-accounts`, token), 40101);

    ok(await change("PATCH", `/${account.id}`, { disabled: true }));
    expectEnvelope(await get(invoicesRoute, token), 40101);
    expect((await refusedGrant(account.id, oauth.ClientSecretBasic(clientSecret))).error).toBe("invalid_client");
    ok(await change("PATCH", `/${account.id}`, { disabled: false }));
    expectEnvelope(await get(invoicesRoute, token), 40101);

    token = await tokenFor();
    appAnswer(await get(invoicesRoute, token));
    ok(await change("PATCH", `/${account.id}`, { endTokens: true }));
    expectEnvelope(await get(invoicesRoute, token), 40101);

    token = await tokenFor();
    appAnswer(await get(invoicesRoute, token));
    ok(await change("DELETE", `/${account.id}`));
    expectEnvelope(await get(invoicesRoute, token), 40101);
    expect((await refusedGrant(account.id, oauth.ClientSecretBasic(clientSecret))).error).toBe("invalid_client");
  });
});

describe.each(machineAdapters)("the token endpoint's statuses on %s", (_name, start) => {
  it('SA-3: failures from one address are throttled (429 temporarily_unavailable with Retry-After), and OAuth statuses hold under statusMode "always-200"', async () => {
    const { auth } = makeTestAuth({
      throttle: { ...generousThrottle, ip: [{ limit: 3, window: "15m" }] },
      serviceAccounts: { enabled: true },
      http: { statusMode: "always-200" },
    });
    const server = await start(auth);
    try {
      const admin = await createUser(auth, { username: "root", password: testPassword, roles: ["admin"] });
      const signedIn = await post(server, `${base}/login`, { username: "root", password: testPassword });
      const token = signedIn.body.data.accessToken as string;
      const account = await call(server, "POST", `${base}/admin/service-accounts`, { token, json: { name: "billing" } });
      const id = account.body.data.id as string;
      const secret = await call(server, "POST", `${base}/admin/service-accounts/${id}/secrets`, { token, json: {} });
      const clientSecret = secret.body.data.clientSecret as string;
      expect(account.body.data.createdBy).toBe(admin.id);
      const tokenRequest = (secretSent: string) =>
        call(server, "POST", `${base}/token`, {
          body: "grant_type=client_credentials",
          headers: {
            "content-type": form,
            authorization: `Basic ${Buffer.from(`${id}:${secretSent}`).toString("base64")}`,
          },
        });
      const granted = await tokenRequest(clientSecret);
      expect([granted.status, granted.body.token_type]).toEqual([200, "Bearer"]);
      // The sign-in above took one attempt of the address's budget of 3 too.
      const refused = await tokenRequest(`${clientSecret}x`);
      expect([refused.status, refused.body.error]).toEqual([401, "invalid_client"]);
      expect((await tokenRequest(`${clientSecret}x`)).status).toBe(401);
      const throttled = await tokenRequest(`${clientSecret}x`);
      expect([throttled.status, throttled.body.error]).toEqual([429, "temporarily_unavailable"]);
      expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
  });
});

describeOpenApiDrift({
  exercises: [
    "login",
    "createServiceAccount",
    "listServiceAccounts",
    "getServiceAccount",
    "updateServiceAccount",
    "deleteServiceAccount",
    "addClientSecret",
    "addPublicKey",
    "removeServiceAccountCredential",
    "issueClientCredentialsToken",
  ],
});
