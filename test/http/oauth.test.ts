import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestAuth } from "../fixtures/auth.js";
import { type OidcTestProvider, corpOAuthConfig, driveAuthorization, startOidcProvider } from "../fixtures/oidc-provider.js";
import { call } from "./client.js";
import { describeOpenApiDrift } from "./openapi-drift.js";
import { adapters } from "./servers.js";

const redirectUri = "https://app.example.com/auth/callback";
let provider: OidcTestProvider;

beforeAll(async () => {
  provider = await startOidcProvider({ redirectUris: [redirectUri] });
});

afterAll(async () => {
  await provider.close();
});

function authWithProvider() {
  return makeTestAuth({ oauth: corpOAuthConfig(provider, redirectUri) }).auth;
}

/** The name=value part of a Set-Cookie header. */
const cookieOf = (setCookie: string | null) => (setCookie ?? "").split(";", 1)[0] as string;

describe("OAuth routes against a real OpenID provider", () => {
  for (const [name, start] of adapters) {
    describe(name, () => {
      it("OA-1: providers, authorize with its HttpOnly SameSite=Lax cookie, the provider's login, and the callback relayed with the cookie: tokens once", async () => {
        const server = await start(authWithProvider());
        try {
          const listed = await call(server, "GET", "/api/v1/auth/oauth/providers");
          expect(listed.body).toMatchObject({ code: 0, data: [{ name: "corp", displayName: "Corp ID" }] });

          const begun = await call(server, "GET", "/api/v1/auth/oauth/corp/authorize?redirect=%2Faccount");
          expect(begun.body.code).toBe(0);
          const setCookie = begun.headers.get("set-cookie");
          expect(setCookie).toMatch(
            /^portcullis_oauth=[A-Za-z0-9_-]{43}; Path=\/api\/v1\/auth\/oauth; HttpOnly; SameSite=Lax; Max-Age=600$/,
          );
          const callback = await driveAuthorization(begun.body.data.authUrl, { username: "alice" });
          const path = `/api/v1/auth/oauth/corp/callback${callback.search}`;

          const elsewhere = await call(server, "GET", path);
          expect(elsewhere.body.code).toBe(40100);

          const fresh = await call(server, "GET", "/api/v1/auth/oauth/corp/authorize?redirect=%2Faccount%3Ftab%3Dkeys");
          const cookie = cookieOf(fresh.headers.get("set-cookie"));
          const relayed = await driveAuthorization(fresh.body.data.authUrl, { username: "alice" });
          const signedIn = await call(server, "GET", `/api/v1/auth/oauth/corp/callback${relayed.search}`, {
            headers: { cookie },
          });
          expect(signedIn.body.code).toBe(0);
          expect(signedIn.body.data.user).toMatchObject({ username: "alice", totpEnabled: false });
          expect(signedIn.body.data.returnPath).toBe("/account?tab=keys");
          expect(signedIn.headers.get("set-cookie")).toMatch(/^portcullis_oauth=; .*Max-Age=0/);
          const me = await call(server, "GET", "/api/v1/auth/me", { token: signedIn.body.data.accessToken });
          expect(me.body.data.username).toBe("alice");

          const replayed = await call(server, "GET", `/api/v1/auth/oauth/corp/callback${relayed.search}`, {
            headers: { cookie },
          });
          expect(replayed.body.code).toBe(40100);
        } finally {
          await server.close();
        }
      });

      it("OA-8: mode=redirect answers 302 to the provider; a hostile return path is 40002; an unknown provider 40400", async () => {
        const server = await start(authWithProvider());
        try {
          const response = await call(server, "GET", "/api/v1/auth/oauth/corp/authorize?mode=redirect");
          expect(response.status).toBe(302);
          expect(response.headers.get("location")).toMatch(new RegExp(`^${provider.issuer}/`));
          expect(response.headers.get("set-cookie")).toMatch(/^portcullis_oauth=/);
          for (const redirect of ["//evil.example", "/%5Cevil.example", "https:evil.example", "/.//evil.example"]) {
            const hostile = await call(
              server,
              "GET",
              `/api/v1/auth/oauth/corp/authorize?redirect=${encodeURIComponent(redirect)}`,
            );
            expect(hostile.body.code, redirect).toBe(40002);
          }
          expect((await call(server, "GET", "/api/v1/auth/oauth/other/authorize")).body.code).toBe(40400);
        } finally {
          await server.close();
        }
      });
    });
  }
});

describeOpenApiDrift({ exercises: ["oauthProviders", "oauthAuthorize", "oauthCallback", "getPublicUser"] });
