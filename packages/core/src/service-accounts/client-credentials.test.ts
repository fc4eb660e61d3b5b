import { generateKeyPairSync } from "node:crypto";
import { SignJWT, exportJWK, generateKeyPair } from "jose";
import { describe, expect, it, vi } from "vitest";
import { AuthError } from "../errors/auth-error.js";
import { addUser, goodPassword, makeAuth, outcome, signIn } from "../flows/fixtures.test-support.js";
import { authorizeRequest } from "../http/authorize-request.js";
import { jwtBearerAssertionType, readPublicJwk } from "./client-assertion.js";
import { type ClientCredentialsInput, issueClientCredentialsToken } from "./client-credentials.js";
import { addClientSecret, addPublicKey, createServiceAccount, updateServiceAccount } from "./manage-service-accounts.js";
import { verifyServiceToken } from "./service-token.js";

const tokenEndpoint = "https://api.example.com/api/v1/auth/token";

async function setUp(options: { tokenStateCacheSeconds?: number } = {}) {
  const harness = makeAuth({ serviceAccounts: { enabled: true }, ...options });
  const adminUserId = await addUser(harness.auth, "root", goodPassword, ["admin"]);
  const account = await createServiceAccount(harness.auth, {
    adminUserId,
    name: "billing",
    roles: ["billing"],
    scopes: ["invoices:read", "invoices:write"],
    password: goodPassword,
  });
  const { clientSecret } = await addClientSecret(harness.auth, { adminUserId, id: account.id, password: goodPassword });
  const basic = (secret = clientSecret, clientId = account.id): ClientCredentialsInput => ({
    grantType: "client_credentials",
    basic: { clientId, clientSecret: secret },
  });
  return { harness, adminUserId, account, clientSecret, basic };
}

/** The RFC 6749 error a token request is refused with. */
async function tokenErrorOf(promise: Promise<unknown>): Promise<string | number> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AuthError) return (error.data?.error as string | undefined) ?? error.code;
    throw error;
  }
  return "issued";
}

const requestWith = (token: string) => ({
  header: (name: string) => (name === "authorization" ? `Bearer ${token}` : undefined),
  peerAddress: "127.0.0.1",
  secure: true,
});

describe("SA-3: the client-credentials grant with client_secret_basic", () => {
  it("issues a short token for the scopes asked, or all of the account's; no refresh token", async () => {
    const { harness, account, basic } = await setUp();
    const all = await issueClientCredentialsToken(harness.auth, basic());
    expect(all).toEqual({
      access_token: expect.any(String),
      token_type: "Bearer",
      expires_in: 600,
      scope: "invoices:read invoices:write",
    });
    expect(Object.keys(all)).not.toContain("refresh_token");
    const some = await issueClientCredentialsToken(harness.auth, { ...basic(), scope: "invoices:read" });
    expect(some.scope).toBe("invoices:read");
    const context = await verifyServiceToken(harness.auth, some.access_token);
    expect(context).toMatchObject({
      kind: "service_account",
      serviceAccountId: account.id,
      roles: ["billing"],
      scopes: ["invoices:read"],
      tokenVersion: 0,
    });
    expect(context.claims).toMatchObject({ sub: account.id, client_id: account.id, exp: context.claims.iat + 600 });
    expect(harness.events.filter((event) => event.type === "service_account.token_issued")).toHaveLength(2);
  });

  it("refuses a wrong, mistyped, removed or expired secret, an unknown client and a disabled account alike: invalid_client", async () => {
    const { harness, adminUserId, account, clientSecret, basic } = await setUp();
    const wrongChecksum = `${clientSecret.slice(0, -1)}${clientSecret.endsWith("A") ? "B" : "A"}`;
    expect(await tokenErrorOf(issueClientCredentialsToken(harness.auth, basic(wrongChecksum)))).toBe("invalid_client");
    expect(await tokenErrorOf(issueClientCredentialsToken(harness.auth, basic(`${clientSecret}x`)))).toBe("invalid_client");
    expect(await tokenErrorOf(issueClientCredentialsToken(harness.auth, basic(clientSecret, "nobody")))).toBe("invalid_client");
    const expiring = await addClientSecret(harness.auth, { adminUserId, id: account.id, expiresIn: 60, password: goodPassword });
    expect(await tokenErrorOf(issueClientCredentialsToken(harness.auth, basic(expiring.clientSecret)))).toBe("issued");
    harness.clock.advance(60_000);
    expect(await tokenErrorOf(issueClientCredentialsToken(harness.auth, basic(expiring.clientSecret)))).toBe("invalid_client");
    await updateServiceAccount(harness.auth, { adminUserId, id: account.id, disabled: true, password: goodPassword });
    expect(await tokenErrorOf(issueClientCredentialsToken(harness.auth, basic()))).toBe("invalid_client");
    const refused = harness.events.filter((event) => event.type === "service_account.token_refused");
    expect(refused.length).toBe(5);
    expect(JSON.stringify(harness.events)).not.toContain(clientSecret);
  });

  it("refuses what RFC 6749 calls a bad request: another grant, no grant, a secret in the body, two methods, a scope not held", async () => {
    const { harness, clientSecret, account, basic } = await setUp();
    const cases: [ClientCredentialsInput, string][] = [
      [{ ...basic(), grantType: "password" }, "unsupported_grant_type"],
      [{ ...basic(), grantType: undefined }, "invalid_request"],
      [{ ...basic(), grantType: "" }, "invalid_request"],
      [{ ...basic(), grantType: null }, "invalid_request"],
      [{ grantType: "client_credentials", basic: null, clientAssertionType: jwtBearerAssertionType }, "invalid_request"],
      [{ grantType: "client_credentials", basic: null, clientAssertion: "a.b.c" }, "invalid_request"],
      [{ ...basic(), scope: 'invoices:read "x"' }, "invalid_scope"],
      [{ ...basic(), scope: "invoices:read\\" }, "invalid_scope"],
      [{ ...basic(), scope: " invoices:read" }, "invalid_scope"],
      [{ grantType: "client_credentials", basic: null, clientId: account.id, clientSecret }, "invalid_request"],
      [{ grantType: "client_credentials", basic: null }, "invalid_client"],
      [{ ...basic(), clientAssertionType: jwtBearerAssertionType, clientAssertion: "a.b.c" }, "invalid_request"],
      [{ ...basic(), clientId: "another" }, "invalid_request"],
      [{ ...basic(), scope: "deploy" }, "invalid_scope"],
      [{ ...basic(), scope: "invoices:read  invoices:write" }, "invalid_scope"],
      [{ ...basic(), scope: ["invoices:read"] }, "invalid_request"],
      [
        { grantType: "client_credentials", basic: null, clientAssertionType: "other", clientAssertion: "a.b.c" },
        "invalid_request",
      ],
    ];
    for (const [input, error] of cases) {
      expect(await tokenErrorOf(issueClientCredentialsToken(harness.auth, input)), JSON.stringify(input)).toBe(error);
    }
  });

  it("each failed client authentication takes an attempt from the address's budget: 42900 once it is spent", async () => {
    const harness = makeAuth({ serviceAccounts: { enabled: true }, throttle: { ip: [{ limit: 3, window: "15m" }] } });
    const attempt = () =>
      issueClientCredentialsToken(harness.auth, {
        grantType: "client_credentials",
        basic: { clientId: "nobody", clientSecret: "pcs_live_x" },
        ip: "203.0.113.9",
      });
    for (let index = 0; index < 3; index += 1) expect(await tokenErrorOf(attempt())).toBe("invalid_client");
    expect(await outcome(attempt())).toBe(42900);
  });
});

describe("SA-3: private_key_jwt client assertions (RFC 7523)", () => {
  async function withKey(alg: "ES256" | "RS256" | "EdDSA" = "ES256") {
    const setup = await setUp();
    const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
    const jwk = { ...(await exportJWK(publicKey)), alg, kid: `key-${alg}` };
    const key = await addPublicKey(setup.harness.auth, {
      adminUserId: setup.adminUserId,
      id: setup.account.id,
      jwk,
      password: goodPassword,
    });
    const now = () => Math.floor(setup.harness.clock.now / 1000);
    const assertion = (claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}) =>
      new SignJWT({
        iss: setup.account.id,
        sub: setup.account.id,
        aud: tokenEndpoint,
        jti: crypto.randomUUID(),
        iat: now(),
        exp: now() + 60,
        ...claims,
      })
        .setProtectedHeader({ alg, kid: jwk.kid, ...header })
        .sign(privateKey);
    const asserted = (text: string): ClientCredentialsInput => ({
      grantType: "client_credentials",
      basic: null,
      clientAssertionType: jwtBearerAssertionType,
      clientAssertion: text,
    });
    return { ...setup, key, jwk, assertion, asserted, privateKey, now };
  }

  it.each(["ES256", "RS256", "EdDSA"] as const)(
    "a %s assertion for the token endpoint or the issuer gets a token, once per jti",
    async (alg) => {
      const { harness, assertion, asserted, account, key } = await withKey(alg);
      expect(key).toMatchObject({ kind: "jwk", kid: `key-${alg}`, alg, start: null });
      const text = await assertion();
      const token = await issueClientCredentialsToken(harness.auth, asserted(text));
      expect((await verifyServiceToken(harness.auth, token.access_token)).serviceAccountId).toBe(account.id);
      expect(await tokenErrorOf(issueClientCredentialsToken(harness.auth, asserted(text)))).toBe("invalid_client");
      const toIssuer = await assertion({ aud: "https://api.example.com" });
      expect(await tokenErrorOf(issueClientCredentialsToken(harness.auth, asserted(toIssuer)))).toBe("issued");
    },
  );

  it("accepts an assertion at the edges of its lifetime, naming no kid, or with an audience list holding ours; a replay later within its lifetime is refused", async () => {
    const { harness, assertion, asserted, now } = await withKey();
    const tolerance = harness.auth.config.clockToleranceSeconds;
    const edges = [
      await assertion({ exp: now() + 300 + tolerance }),
      await assertion({ exp: now() - tolerance + 1 }),
      await assertion({}, { kid: undefined }),
      await assertion({ aud: ["https://other.example", tokenEndpoint] }),
      await assertion({ iat: now() + tolerance, nbf: now() + tolerance, jti: "j".repeat(256) }),
    ];
    for (const text of edges) {
      expect(await tokenErrorOf(issueClientCredentialsToken(harness.auth, asserted(text))), text).toBe("issued");
    }
    const text = await assertion({ exp: now() + 120 });
    expect(await tokenErrorOf(issueClientCredentialsToken(harness.auth, asserted(text)))).toBe("issued");
    harness.clock.advance(100_000);
    expect(await tokenErrorOf(issueClientCredentialsToken(harness.auth, asserted(text)))).toBe("invalid_client");
  });

  it("refuses an assertion for another audience, of another client, expired, too long-lived, without jti, alg none or another key", async () => {
    const { harness, assertion, asserted, account, now } = await withKey();
    const other = await generateKeyPair("ES256");
    const forged = await new SignJWT({ jti: "x" })
      .setProtectedHeader({ alg: "ES256", kid: "key-ES256" })
      .setIssuer(account.id)
      .setSubject(account.id)
      .setAudience(tokenEndpoint)
      .setExpirationTime(now() + 60)
      .sign(other.privateKey);
    const unsigned = `${Buffer.from(JSON.stringify({ alg: "none" })).toString("base64url")}.${Buffer.from(
      JSON.stringify({ iss: account.id, sub: account.id, aud: tokenEndpoint, jti: "n", exp: now() + 60 }),
    ).toString("base64url")}.`;
    const refused = [
      await assertion({ aud: "https://evil.example/token" }),
      await assertion({ iss: "someone-else" }),
      await assertion({ sub: "someone-else" }),
      await assertion({ exp: now() - 120 }),
      await assertion({ exp: now() + 3600 }),
      await assertion({ jti: undefined }),
      await assertion({ nbf: now() + 600 }),
      await assertion({ iat: now() + 600 }),
      await assertion({ jti: "" }),
      await assertion({ jti: "j".repeat(257) }),
      await assertion({ exp: now() - 1 - harness.auth.config.clockToleranceSeconds }),
      await assertion({ exp: now() + 301 + harness.auth.config.clockToleranceSeconds }),
      await assertion({ exp: "soon" }),
      await assertion({ aud: [] }),
      await assertion({}, { kid: "unknown" }),
      forged,
      unsigned,
      "not-a-jwt",
    ];
    for (const text of refused) {
      expect(await tokenErrorOf(issueClientCredentialsToken(harness.auth, asserted(text))), text).toBe("invalid_client");
    }
    expect(await tokenErrorOf(issueClientCredentialsToken(harness.auth, { ...asserted(await assertion()), clientId: "x" }))).toBe(
      "invalid_client",
    );
  });

  it("registers only public keys of the accepted kinds, with a kid, at most two", async () => {
    const { harness, adminUserId, account, jwk } = await withKey();
    const add = (value: unknown) =>
      addPublicKey(harness.auth, { adminUserId, id: account.id, jwk: value, password: goodPassword });
    const short = generateKeyPairSync("rsa", { modulusLength: 1024 });
    const strong = generateKeyPairSync("rsa", { modulusLength: 2048 });
    expect(await outcome(add({ ...strong.privateKey.export({ format: "jwk" }), alg: "RS256" }))).toBe(42200);
    expect(await outcome(add({ ...short.publicKey.export({ format: "jwk" }), alg: "RS256" }))).toBe(42200);
    expect(await outcome(add({ kty: "oct", k: "abc" }))).toBe(42200);
    expect(await outcome(add({ ...(await exportJWK((await generateKeyPair("RS256")).publicKey)) }))).toBe(42200);
    expect(await outcome(add({ ...jwk, alg: "ES384" }))).toBe(42200);
    expect(await outcome(add("jwk"))).toBe(40002);
    expect(await outcome(add({ ...jwk, x: `${jwk.x}+` }))).toBe(42200);
    expect(await outcome(add({ ...jwk, y: undefined }))).toBe(42200);
    expect(await outcome(add({ ...jwk, kid: "has space" }))).toBe(42200);
    expect(await outcome(add({ ...jwk, kid: 7 }))).toBe(42200);
    expect(await outcome(add({ ...jwk, x: jwk.y, y: jwk.x, kid: "swapped" }))).toBe(42200);
    expect(
      await outcome(
        addPublicKey(harness.auth, { adminUserId, id: "nobody", jwk: { ...jwk, kid: "k2" }, password: goodPassword }),
      ),
    ).toBe(40400);
    expect(await outcome(add(undefined))).toBe(40001);
    expect(await outcome(add(jwk))).toBe(40900);
    const ec = await exportJWK((await generateKeyPair("ES256")).publicKey);
    const second = await add({ ...ec, extra: "dropped" });
    expect(second.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await outcome(add(await exportJWK((await generateKeyPair("ES256")).publicKey)))).toBe(40900);
    expect(await readPublicJwk({ ...ec, use: "sig" })).toEqual({
      kty: "EC",
      crv: "P-256",
      x: ec.x,
      y: ec.y,
      kid: second.kid,
      alg: "ES256",
    });
  });
});

describe("SA-4: a service account's token, where routes accept it", () => {
  it("passes requireAuth only where credentials name service accounts, with the scopes asked; never as a person's token", async () => {
    const { harness, basic } = await setUp();
    const { access_token: token } = await issueClientCredentialsToken(harness.auth, { ...basic(), scope: "invoices:read" });
    const request = requestWith(token);
    expect(await outcome(authorizeRequest(harness.auth, request))).toBe(40101);
    expect(await outcome(authorizeRequest(harness.auth, request, { scopes: ["invoices:read"] }))).toBe(40101);
    expect(
      await outcome(authorizeRequest(harness.auth, request, { credentials: "service_account", scopes: ["invoices:read"] })),
    ).toBe("fulfilled");
    expect(
      await outcome(authorizeRequest(harness.auth, request, { credentials: "service_account", scopes: ["invoices:write"] })),
    ).toBe(40300);
    expect(await outcome(authorizeRequest(harness.auth, request, { credentials: ["access_token", "service_account"] }))).toBe(
      "fulfilled",
    );
    expect(await outcome(authorizeRequest(harness.auth, request, { credentials: "service_account", roles: ["billing"] }))).toBe(
      "fulfilled",
    );
    expect(await outcome(authorizeRequest(harness.auth, request, { credentials: "service_account", roles: ["admin"] }))).toBe(
      40300,
    );
    expect(
      await outcome(authorizeRequest(harness.auth, request, { credentials: ["access_token", "service_account"], maxAge: 300 })),
    ).toBe(40300);
    const person = await signIn(harness, "root");
    expect(
      await outcome(authorizeRequest(harness.auth, requestWith(person.accessToken), { credentials: "service_account" })),
    ).toBe(40300);
    expect(
      await outcome(
        authorizeRequest(harness.auth, requestWith(person.accessToken), { credentials: ["access_token", "service_account"] }),
      ),
    ).toBe("fulfilled");
    await expect(authorizeRequest(harness.auth, request, { credentials: [] as never })).rejects.toThrow(TypeError);
    await expect(authorizeRequest(harness.auth, request, { credentials: "service_account", maxAge: 300 })).rejects.toThrow(
      TypeError,
    );
  });

  it.each([0, 60])(
    "is refused at its next request once its account is disabled, changed, deleted, or its tokens ended (tokenStateCacheSeconds %i)",
    async (tokenStateCacheSeconds) => {
      const { harness, adminUserId, account, basic } = await setUp({ tokenStateCacheSeconds });
      const issue = async () => (await issueClientCredentialsToken(harness.auth, basic())).access_token;
      const accepted = (token: string) =>
        outcome(authorizeRequest(harness.auth, requestWith(token), { credentials: "service_account" }));
      const change = (changes: Record<string, unknown>) =>
        updateServiceAccount(harness.auth, { adminUserId, id: account.id, password: goodPassword, ...changes });
      let token = await issue();
      expect(await accepted(token)).toBe("fulfilled");
      await change({ endTokens: true });
      expect(await accepted(token)).toBe(40101);
      token = await issue();
      expect(await accepted(token)).toBe("fulfilled");
      await change({ name: "renamed" });
      expect(await accepted(token)).toBe("fulfilled");
      await change({ roles: ["other"] });
      expect(await accepted(token)).toBe(40101);
      token = await issue();
      expect(await accepted(token)).toBe("fulfilled");
      await change({ disabled: true });
      expect(await accepted(token)).toBe(40101);
      await change({ disabled: false });
      token = await issue();
      expect(await accepted(token)).toBe("fulfilled");
      await harness.auth.storage.serviceAccounts?.updateServiceAccount(account.id, { disabled: true });
      harness.clock.advance(tokenStateCacheSeconds * 1000);
      expect(await accepted(token)).toBe(40101);
      await harness.auth.storage.serviceAccounts?.updateServiceAccount(account.id, { disabled: false });
      token = await issue();
      expect(await accepted(token)).toBe("fulfilled");
      await harness.auth.storage.serviceAccounts?.deleteServiceAccount(account.id);
      // Deleted behind Portcullis's back: a cached answer stands for tokenStateCacheSeconds, no longer.
      expect(await accepted(token)).toBe(tokenStateCacheSeconds > 0 ? "fulfilled" : 40101);
      harness.clock.advance(tokenStateCacheSeconds * 1000);
      expect(await accepted(token)).toBe(40101);
      expect(await tokenErrorOf(issue())).toBe("invalid_client");
    },
  );

  it("a token this instance signed is a service account's only with that shape: no sid, client_id its sub, roles and scope", async () => {
    const { harness, account } = await setUp();
    const iat = Math.floor(harness.clock.now / 1000);
    const good = {
      iss: harness.auth.config.issuer,
      aud: harness.auth.config.audience,
      sub: account.id,
      client_id: account.id,
      iat,
      exp: iat + 600,
      jti: "j",
      tv: 0,
      roles: ["billing"],
      scope: "invoices:read",
    };
    const sign = (claims: Record<string, unknown>) => harness.auth.keys.signing.sign(claims);
    expect(await outcome(verifyServiceToken(harness.auth, await sign(good)))).toBe("fulfilled");
    expect((await verifyServiceToken(harness.auth, await sign({ ...good, scope: "" }))).scopes).toEqual([]);
    for (const bad of [
      { sid: "s" },
      { client_id: "other" },
      { sub: 7 },
      { jti: 1 },
      { iat: "now" },
      { tv: 0.5 },
      { roles: "billing" },
      { roles: [1] },
      { scope: ["invoices:read"] },
    ]) {
      expect(await outcome(verifyServiceToken(harness.auth, await sign({ ...good, ...bad }))), JSON.stringify(bad)).toBe(40101);
    }
    const person = await signIn(harness, "root");
    expect(await outcome(verifyServiceToken(harness.auth, person.accessToken))).toBe(40101);
    for (const bearer of [
      "abc",
      "a.b",
      `a.${Buffer.from("not json").toString("base64url")}.c`,
      `a.${Buffer.from("null").toString("base64url")}.c`,
    ]) {
      expect(await outcome(authorizeRequest(harness.auth, requestWith(bearer), { credentials: "service_account" })), bearer).toBe(
        40300,
      );
    }
  });

  it("records a credential's use at most once a minute per instance", async () => {
    const { harness, basic } = await setUp();
    const store = harness.auth.storage.serviceAccounts;
    if (store === undefined) throw new Error("no store");
    const recorded = vi.spyOn(store, "recordServiceAccountCredentialUse");
    for (let index = 0; index < 3; index += 1) await issueClientCredentialsToken(harness.auth, basic());
    expect(recorded).toHaveBeenCalledTimes(1);
    harness.clock.advance(59_999);
    await issueClientCredentialsToken(harness.auth, basic());
    expect(recorded).toHaveBeenCalledTimes(1);
    harness.clock.advance(1);
    await issueClientCredentialsToken(harness.auth, basic());
    expect(recorded).toHaveBeenCalledTimes(2);
    const { credentials } = (await store.findServiceAccountClient((await store.listServiceAccounts())[0]?.id ?? "")) ?? {};
    expect(credentials?.[0]?.lastUsedAt).toBe(harness.clock.now);
  });

  it("expires after serviceAccounts.tokenTtl", async () => {
    const { harness, basic } = await setUp();
    const { access_token: token } = await issueClientCredentialsToken(harness.auth, basic());
    harness.clock.advance(599_000);
    expect(await outcome(verifyServiceToken(harness.auth, token))).toBe("fulfilled");
    harness.clock.advance(1_000 + harness.auth.config.clockToleranceSeconds * 1000);
    expect(await outcome(verifyServiceToken(harness.auth, token))).toBe(40101);
  });
});
