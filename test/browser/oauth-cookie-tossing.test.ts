// Login CSRF by cookie tossing (OA-10, issue 20 item 7) in a real browser: Debian's Chromium, told
// by --host-resolver-rules that every *.example.test name is 127.0.0.1, so that one TLS server is
// both the app at https://app.example.test and a sibling subdomain at https://evil.example.test.
// The sibling sets its own binding cookie for the parent domain and sends the victim to the app's
// callback page with the attacker's code and state; the demo page relays them through
// client.oauth.finish(). The test certificate names localhost only: the contexts ignore
// certificate errors, which Chromium still treats as TLS for Secure and __Host- cookies. The app's
// API runs on Express, then on Fastify: each adapter tells core the request came over TLS.
import { readFileSync } from "node:fs";
import { type Server, createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { type Auth, createAuth, memoryStorage } from "@portcullis/core";
import { authRouter } from "@portcullis/express";
import { driveAuthorization } from "@portcullis/testing";
import express from "express";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { contentSecurityPolicy, demoPageFiles, randomSecret } from "../../examples/express/src/app.js";
import { type OidcTestProvider, corpOAuthConfig, startOidcProvider } from "../fixtures/oidc-provider.js";
import { call } from "../http/client.js";
import type { RunningServer } from "../http/servers.js";
import { type FastifyApi, fastifyApi } from "./apps.js";
import { collectPageErrors } from "./chromium.js";
import { type Envelope, describeInBrowser, expectError, expectStatus, shownUserField, useChromium } from "./page.js";

const tls = {
  key: readFileSync(new URL("../fixtures/tls/key.pem", import.meta.url), "utf8"),
  cert: readFileSync(new URL("../fixtures/tls/cert.pem", import.meta.url), "utf8"),
};

const newContext = useChromium(["--host-resolver-rules=MAP *.example.test 127.0.0.1"], { ignoreHTTPSErrors: true });

/**
 * The sibling subdomain's page: it sets `portcullis_oauth` (the plain name) for the whole parent
 * domain, once on `/` and once on the callback route's own path (a longer path, which the
 * browser sends first), tries the same with the `__Host-` name, and links to `next`.
 */
const tossingPage = `<!doctype html><title>evil</title>
<script>
const query = new URLSearchParams(location.search);
const value = query.get("binding");
for (const name of ["portcullis_oauth", "__Host-portcullis_oauth"]) {
  for (const path of ["/", "/api/v1/auth/oauth/corp"]) {
    document.cookie = name + "=" + value + "; Domain=example.test; Path=" + path + "; Secure; SameSite=Lax";
  }
}
addEventListener("DOMContentLoaded", () => { document.getElementById("next").href = query.get("next"); });
</script>
<a id="next">Claim your prize</a>`;

/** The app and its sibling on one TLS server: the demo page with `corp` as its provider, and the sibling's page. */
interface Sites {
  app: string;
  evil: string;
  auth: Auth;
  /** The OpenID provider, with the app's callback page as its clients' redirect URI. */
  idp: OidcTestProvider;
  /** The same server for the test's own requests, as the HTTP tests' helpers take it. */
  server: RunningServer;
  close(): Promise<void>;
}

/** The adapter the app's API (`/api/…`) runs on; the pages are Express's either way. */
type Api = "Express" | "Fastify";

async function startSites(api: Api): Promise<Sites> {
  let handler: express.Express | undefined;
  let fastify: FastifyApi | undefined;
  const server: Server = createServer(tls, (req, res) => {
    if (fastify && req.url?.startsWith("/api/") && !req.headers.host?.startsWith("evil.")) fastify.listener(req, res);
    else if (handler) handler(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const app = `https://app.example.test:${port}`;
  const redirectUri = `${app}/oauth/corp/callback`;
  const idp = await startOidcProvider({ redirectUris: [redirectUri] });
  const auth = createAuth({
    storage: memoryStorage(),
    issuer: app,
    audience: "portcullis-cookie-tossing-test",
    secrets: { signing: randomSecret(), encryption: randomSecret() },
    oauth: corpOAuthConfig(idp, redirectUri),
  });
  const { publicDirectory, pageClientPath, bundlePageClient } = demoPageFiles;
  const { javascript } = await bundlePageClient();
  handler = express();
  handler.use((req, res, next) => {
    if (!req.hostname.startsWith("evil.")) {
      res.set("content-security-policy", contentSecurityPolicy);
      next();
      return;
    }
    res.type("html").send(tossingPage);
  });
  if (api === "Fastify") fastify = await fastifyApi(auth);
  else handler.use(authRouter(auth));
  handler.get(pageClientPath, (_req, res) => {
    res.type("text/javascript").send(javascript);
  });
  handler.get("/oauth/corp/callback", (_req, res) => {
    res.sendFile("index.html", { root: publicDirectory });
  });
  handler.use(express.static(publicDirectory));
  return {
    app,
    evil: `https://evil.example.test:${port}`,
    auth,
    idp,
    server: { baseUrl: `https://127.0.0.1:${port}`, host: "127.0.0.1", port, ca: tls.cert, auth, close: async () => {} },
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await fastify?.close();
      await idp.close();
    },
  };
}

/** The attacker's own flow, begun outside the victim's browser: its binding cookie's value and the callback URL with its code and state. */
async function attackersFlow(sites: Sites): Promise<{ binding: string; callbackUrl: string }> {
  const begun = await call(sites.server, "GET", "/api/v1/auth/oauth/corp/authorize");
  const binding = /^(?:__Host-)?portcullis_oauth=([^;]+);/.exec(begun.headers.get("set-cookie") ?? "")?.[1];
  if (!binding) throw new Error(`authorize set no binding cookie: ${begun.headers.get("set-cookie")}`);
  const callback = await driveAuthorization(begun.body.data.authUrl, { username: "bob" });
  return { binding, callbackUrl: callback.href };
}

/** Opens the sibling's page in the victim's browser with the attacker's values, follows its link, and returns the envelope the demo page's relay received. */
async function followTossingLink(
  sites: Sites,
  page: Page,
  attacker: { binding: string; callbackUrl: string },
): Promise<Envelope> {
  const query = new URLSearchParams({ binding: attacker.binding, next: attacker.callbackUrl });
  await page.goto(`${sites.evil}/?${query}`);
  const relayed = page.waitForResponse((response) => response.url().startsWith(`${sites.app}/api/v1/auth/oauth/corp/callback?`));
  await page.click("#next");
  return (await (await relayed).json()) as Envelope;
}

/** The binding cookies the browser holds, by domain, path and name. */
async function bindingCookies(context: BrowserContext): Promise<string[]> {
  return (await context.cookies())
    .filter((cookie) => cookie.name.endsWith("portcullis_oauth"))
    .map((cookie) => `${cookie.domain}${cookie.path} ${cookie.name}`)
    .sort();
}

const cookieTossing = (api: Api) => () => {
  let sites: Sites;

  beforeAll(async () => {
    sites = await startSites(api);
  });

  afterAll(async () => {
    await sites?.close();
  });

  it("OA-10: a victim who follows a sibling's link with the attacker's code and state is not signed in as the attacker; the browser refuses the tossed __Host- cookie", async () => {
    const attacker = await attackersFlow(sites);
    const context = await newContext();
    try {
      const page = await context.newPage();
      const errors = collectPageErrors(page);
      const answer = await followTossingLink(sites, page, attacker);
      expect(await bindingCookies(context), "only the plain name can be tossed").toEqual([
        ".example.test/ portcullis_oauth",
        ".example.test/api/v1/auth/oauth/corp portcullis_oauth",
      ]);
      expect(answer).toEqual({ code: 40100, message: "The sign-in state is missing, unknown, expired or already used" });
      await expectError(page, "#provider-sign-in", /^The sign-in state is missing, unknown, expired or already used\.$/);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("OA-10: a victim in the middle of a sign-in of their own keeps it: the tossed cookie, sent first, does not sign them in as the attacker, and their own flow then finishes", async () => {
    const context = await newContext();
    try {
      const page = await context.newPage();
      const errors = collectPageErrors(page);
      await page.goto(`${sites.app}/`);
      // The victim's own flow: the page begins it and the browser is sent to the provider, where it
      // pauses on the login page. That navigation is let finish before the next goto, which it
      // would otherwise interrupt.
      const ownAuthUrl = page.waitForRequest((request) => request.url().startsWith(`${sites.idp.issuer}/`));
      const atProvider = page.waitForURL((url) => url.href.startsWith(`${sites.idp.issuer}/interaction/`));
      await page.getByRole("button", { name: "Sign in with Corp ID" }).click();
      const ownCallback = await driveAuthorization((await ownAuthUrl).url(), { username: "alice" });
      await atProvider;

      const attacker = await attackersFlow(sites);
      const tossed = await followTossingLink(sites, page, attacker);
      expect(tossed).toMatchObject({ code: 40100 });
      expect(await bindingCookies(context)).toEqual([
        ".example.test/ portcullis_oauth",
        ".example.test/api/v1/auth/oauth/corp portcullis_oauth",
        "app.example.test/ __Host-portcullis_oauth",
      ]);

      const relayed = page.waitForResponse((response) =>
        response.url().startsWith(`${sites.app}/api/v1/auth/oauth/corp/callback?`),
      );
      await page.goto(ownCallback.href);
      const own = (await (await relayed).json()) as Envelope;
      expect(own).toMatchObject({ code: 0, data: { user: { username: "alice" }, returnPath: "/" } });
      await expectStatus(page, /^Signed in with Corp ID\.$/);
      expect(await shownUserField(page, "username")).toBe("alice");
      expect(await bindingCookies(context), "the answer cleared the __Host- cookie").toEqual([
        ".example.test/ portcullis_oauth",
        ".example.test/api/v1/auth/oauth/corp portcullis_oauth",
      ]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
};

for (const api of ["Express", "Fastify"] as const) {
  describeInBrowser(
    `OA-10: cookie tossing from a sibling subdomain, in Chromium over TLS, the API on ${api}`,
    cookieTossing(api),
  );
}
