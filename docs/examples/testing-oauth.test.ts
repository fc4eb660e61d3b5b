// @portcullis/testing: a real OpenID provider on 127.0.0.1 with fixed accounts, its pages filled in without a browser.
import { randomBytes } from "node:crypto";
import { type Auth, createAuth, memoryStorage, oauthAuthorize, oauthCallback } from "@portcullis/core";
import { type LocalProvider, driveAuthorization, localProviderAccounts, startLocalProvider } from "@portcullis/testing";
import { afterAll, beforeAll, expect, it } from "vitest";

const redirectUri = "https://app.example.com/oauth/local/callback";
const clientSecret = randomBytes(32).toString("base64url");
let provider: LocalProvider;
let auth: Auth;

beforeAll(async () => {
  provider = await startLocalProvider({ clients: [{ clientId: "app", clientSecret, redirectUris: [redirectUri] }] });
  auth = createAuth({
    storage: memoryStorage(),
    issuer: "https://api.example.com",
    audience: "example-api",
    secrets: { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("hex") },
    oauth: {
      providers: { local: { issuer: provider.issuer, clientId: "app", clientSecret, redirectUri } },
      unsafeAllowHttpLoopbackProviders: true, // the provider listens on plain http://127.0.0.1
    },
  });
});

afterAll(async () => {
  await provider.close();
});

it("a first sign-in with the provider creates the account; the next finds it by the provider's subject", async () => {
  const signIn = async () => {
    const { authUrl, browserBinding } = await oauthAuthorize(auth, { provider: "local" });
    const callback = await driveAuthorization(authUrl, { username: "ada" });
    return oauthCallback(auth, { provider: "local", query: callback.search, browserBinding });
  };
  const first = await signIn();
  const second = await signIn();
  expect(first.status).toBe("authenticated");
  expect(second.status).toBe("authenticated");
  const identity = await auth.storage.identities.find("local", localProviderAccounts.ada.sub);
  expect(identity).toBeDefined();
});

it("a person who denies consent is not signed in", async () => {
  const { authUrl, browserBinding } = await oauthAuthorize(auth, { provider: "local" });
  const callback = await driveAuthorization(authUrl, { username: "ada", consent: false });
  expect(callback.searchParams.get("error")).toBe("access_denied");
  await expect(oauthCallback(auth, { provider: "local", query: callback.search, browserBinding })).rejects.toMatchObject({
    code: 40100,
  });
});
