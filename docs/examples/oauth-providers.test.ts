// Runs docs/examples/oauth-providers.ts against a real OpenID provider and a small OAuth 2.0
// server of this test's own with a GitHub-like API, through the HTTP routes.
import { createHash, randomBytes } from "node:crypto";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type Auth, createAuth, memoryStorage } from "@portcullis/core";
import { authRouter } from "@portcullis/express";
import { driveAuthorization } from "@portcullis/testing";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OidcTestProvider, startOidcProvider } from "../../test/fixtures/oidc-provider.js";
import { forgeProfile, oauthProviders } from "./oauth-providers.js";

const forgeUser = { id: 583231, login: "octo-cat", name: "Octo Cat", email: "octo@example.com" };
const forgeClient = { clientId: "forge-client", clientSecret: randomBytes(16).toString("base64url") };

/** When set, the forge's API answers 503 with a body that looks like a user (an incident id, a bot's login). */
let forgeUnwell = false;

/** What the forge server saw: the requests it refused, by reason. */
const refusals: string[] = [];

/**
 * A GitHub-like OAuth 2.0 server: `/login/oauth/authorize` signs `forgeUser` in at once and
 * redirects with a code; `/login/oauth/access_token` exchanges it (client secret, exact
 * redirect URI and PKCE S256 checked); `/api/user` answers the user for its bearer token, to a
 * request that asks for JSON.
 */
function forgeServer(): Server {
  const codes = new Map<string, { redirectUri: string; challenge: string }>();
  const tokens = new Set<string>();
  const json = (res: ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  const refuse = (res: ServerResponse, reason: string) => {
    refusals.push(reason);
    json(res, 400, { error: "invalid_grant" });
  };
  // The client authenticates with HTTP Basic, id and secret form-encoded first (RFC 6749, 2.3.1).
  return createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://forge.invalid");
    if (url.pathname === "/login/oauth/authorize") {
      const code = randomBytes(16).toString("hex");
      const challenge = url.searchParams.get("code_challenge") ?? "";
      if (url.searchParams.get("code_challenge_method") !== "S256") refusals.push("no S256");
      codes.set(code, { redirectUri: url.searchParams.get("redirect_uri") ?? "", challenge });
      const back = new URL(url.searchParams.get("redirect_uri") ?? "");
      back.searchParams.set("code", code);
      back.searchParams.set("state", url.searchParams.get("state") ?? "");
      res.writeHead(302, { location: back.href }).end();
      return;
    }
    if (url.pathname === "/login/oauth/access_token" && req.method === "POST") {
      let body = "";
      for await (const chunk of req) body += chunk;
      const form = new URLSearchParams(body);
      const basic = Buffer.from((req.headers.authorization ?? "").replace(/^Basic /, ""), "base64").toString("utf8");
      const [id = "", secret = ""] = basic.split(":").map((part) => decodeURIComponent(part.replaceAll("+", " ")));
      const kept = codes.get(form.get("code") ?? "");
      codes.delete(form.get("code") ?? "");
      if (id !== forgeClient.clientId || secret !== forgeClient.clientSecret) return refuse(res, "client");
      if (!kept || kept.redirectUri !== form.get("redirect_uri")) return refuse(res, "code or redirect_uri");
      const verifier = form.get("code_verifier") ?? "";
      if (createHash("sha256").update(verifier).digest("base64url") !== kept.challenge) return refuse(res, "pkce");
      const token = randomBytes(16).toString("hex");
      tokens.add(token);
      return json(res, 200, { access_token: token, token_type: "bearer", scope: "read:user" });
    }
    if (url.pathname === "/api/user") {
      if (req.headers.accept !== "application/json") return json(res, 406, { message: "Ask for application/json" });
      if (forgeUnwell) return json(res, 503, { id: 42, login: "status-bot", message: "Service unavailable" });
      const token = req.headers.authorization?.replace(/^Bearer /, "") ?? "";
      return tokens.has(token) ? json(res, 200, forgeUser) : json(res, 401, { message: "Bad credentials" });
    }
    json(res, 404, { message: "Not Found" });
  });
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

let oidc: OidcTestProvider;
let forge: Server;
let app: Server;
let appBase: string;
let auth: Auth;

beforeAll(async () => {
  forge = forgeServer();
  const forgeBase = await listen(forge);
  app = createServer();
  appBase = await listen(app);
  const appOrigin = appBase.replace("127.0.0.1", "localhost");
  oidc = await startOidcProvider({ redirectUris: [`${appOrigin}/oauth/corp`] });
  const { confidential } = oidc.clients;
  const settings = {
    appOrigin,
    corp: { issuer: oidc.issuer, clientId: confidential.clientId, clientSecret: confidential.clientSecret },
    forge: { baseUrl: forgeBase, apiUrl: `${forgeBase}/api`, ...forgeClient },
  };
  auth = createAuth({
    storage: memoryStorage(),
    issuer: appOrigin,
    audience: "example-api",
    secrets: { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("base64url") },
    oauth: { ...oauthProviders(settings), unsafeAllowHttpLoopbackProviders: true },
  });
  app.on("request", express().use(authRouter(auth)));
});

afterAll(async () => {
  await oidc.close();
  for (const server of [forge, app]) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** Begins at the authorize route, follows the provider back to the redirect URI, and relays its query with the cookie, as the page would. */
async function signInThrough(name: string, atProvider: (authUrl: string) => Promise<URL>) {
  const begun = await fetch(`${appBase}/api/v1/auth/oauth/${name}/authorize?redirect=%2Fhome`);
  const cookie = (begun.headers.get("set-cookie") ?? "").split(";", 1)[0] as string;
  const { data } = (await begun.json()) as { data: { authUrl: string } };
  const back = await atProvider(data.authUrl);
  const answer = await fetch(`${appBase}/api/v1/auth/oauth/${name}/callback${back.search}`, { headers: { cookie } });
  return { back, body: (await answer.json()) as { code: number; data: { returnPath: string; user: { id: string } } } };
}

describe("docs/examples/oauth-providers.ts", () => {
  it("lists both providers by display name", async () => {
    const listed = (await (await fetch(`${appBase}/api/v1/auth/oauth/providers`)).json()) as { data: unknown };
    expect(listed.data).toEqual([
      { name: "corp", displayName: "Corp ID" },
      { name: "forge", displayName: "Forge" },
    ]);
  });

  it("OA-2, OA-5: the GitHub-like provider signs its user in through /user, with PKCE S256 and the exact redirect URI", async () => {
    const { back, body } = await signInThrough("forge", async (authUrl) => {
      const redirected = await fetch(authUrl, { redirect: "manual" });
      return new URL(redirected.headers.get("location") ?? "");
    });
    expect(back.pathname).toBe("/oauth/forge");
    expect(refusals).toEqual([]);
    expect(body.code).toBe(0);
    expect(body.data).toMatchObject({ returnPath: "/home", user: { username: "octo-cat", roles: [] } });
    const identities = await auth.storage.identities.listByUser(body.data.user.id);
    expect(identities).toEqual([
      expect.objectContaining({ provider: "forge", subject: "583231", email: "octo@example.com", emailVerified: false }),
    ]);
  });

  it("OA-6: a user-info error answer is refused, even when its body looks like a user", async () => {
    forgeUnwell = true;
    try {
      const { body } = await signInThrough("forge", async (authUrl) => {
        const redirected = await fetch(authUrl, { redirect: "manual" });
        return new URL(redirected.headers.get("location") ?? "");
      });
      expect(body).toMatchObject({ code: 40100, message: "The provider's answer was not valid" });
    } finally {
      forgeUnwell = false;
    }
  });

  it("OA-4: the OpenID Connect provider signs its user in with the default roles configured", async () => {
    const { body } = await signInThrough("corp", async (authUrl) => driveAuthorization(authUrl, { username: "alice" }));
    expect(body.code).toBe(0);
    expect(body.data).toMatchObject({ returnPath: "/home", user: { username: "alice", roles: ["member"] } });
  });

  it("forgeProfile: the numeric id is the subject; a null email or empty name is left out; never verified", () => {
    expect(forgeProfile({ id: 7, login: "x", name: "", email: null })).toEqual({
      subject: "7",
      username: "x",
      displayName: undefined,
      email: undefined,
      emailVerified: false,
    });
    expect(forgeProfile({ login: "no-id" }).subject).toBe("");
  });
});
