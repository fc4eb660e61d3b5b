// Cookie mode over TLS in Chromium on every adapter (CK-1, CK-2, CK-4): the refresh cookie is
// __Host-portcullis_refresh (Secure, Path=/, no Domain), and a sibling subdomain cannot plant one.
// Chromium is told by --host-resolver-rules that every *.example.test name is 127.0.0.1, so one TLS
// server is both the app at https://app.example.test and a sibling at https://evil.example.test.
// The test certificate names localhost only: the contexts ignore certificate errors, which Chromium
// still treats as TLS for Secure and __Host- cookies. The page and the client module are answered
// by the test (context.route); the API is the adapter's real server (test/http/servers.ts).
import { readFileSync } from "node:fs";
import type { AuthClient } from "@portcullis/client";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type TestAuth, createTestUser, generousThrottle, makeTestAuth, testPassword } from "../fixtures/auth.js";
import { type RunningServer, type StartServer, startExpress5, startFastify, startHono } from "../http/servers.js";
import { collectPageErrors } from "./chromium.js";
import { bundledClient } from "./client-bundle.js";
import { describeInBrowser, useChromium } from "./page.js";

const tls = {
  key: readFileSync(new URL("../fixtures/tls/key.pem", import.meta.url), "utf8"),
  cert: readFileSync(new URL("../fixtures/tls/cert.pem", import.meta.url), "utf8"),
};

const newContext = useChromium(["--host-resolver-rules=MAP *.example.test 127.0.0.1"], { ignoreHTTPSErrors: true });

const pagePath = "/cookie-mode/page.html";
const clientPath = "/cookie-mode/portcullis-client.js";
const refreshPath = "/api/v1/auth/refresh";

/** What the page holds for the test. */
interface PageGlobals {
  clientModule: typeof import("@portcullis/client");
  client: AuthClient;
}

/**
 * The sibling's page: sets a refresh cookie of each name for the whole parent domain, as a
 * subdomain (or a man in the middle of a plain-HTTP request to one) can.
 */
const tossingPage = `<!doctype html><title>evil</title>
<script>
for (const name of ["__Host-portcullis_refresh", "portcullis_refresh"]) {
  document.cookie = name + "=planted; Domain=example.test; Path=/; Secure; SameSite=Strict";
}
</script>`;

/** A fresh context whose pages the test answers, and the paths of the refreshes its pages send. */
async function tlsContext(): Promise<{ context: BrowserContext; refreshes: string[] }> {
  const context = await newContext();
  const client = await bundledClient();
  await context.route(`**${clientPath}`, (route) => route.fulfill({ body: client, contentType: "text/javascript" }));
  await context.route(`**${pagePath}`, (route) =>
    route.fulfill({ body: "<!doctype html><title>cookie mode</title><p>app</p>", contentType: "text/html" }),
  );
  await context.route("https://evil.example.test:*/**", (route) =>
    route.fulfill({ body: tossingPage, contentType: "text/html" }),
  );
  const refreshes: string[] = [];
  context.on("request", (request) => {
    if (request.method() === "POST" && new URL(request.url()).pathname === refreshPath) refreshes.push(request.url());
  });
  return { context, refreshes };
}

/** Loads the client module into the page and makes a cookie-mode client there. */
async function startClient(page: Page): Promise<void> {
  // A string, not a function: vitest would rewrite a function's import() for Node.
  await page.evaluate(`import(${JSON.stringify(clientPath)}).then((module) => { globalThis.clientModule = module; })`);
  await page.evaluate(() => {
    const globals = globalThis as unknown as PageGlobals;
    globals.client = globals.clientModule.createAuthClient({ tokens: "cookie" });
  });
}

const restore = (page: Page) =>
  page.evaluate(async () => (await (globalThis as unknown as PageGlobals).client.restore())?.username ?? null);

const adapters: [string, StartServer][] = [
  ["Express", startExpress5],
  ["Hono", startHono],
  ["Fastify", startFastify],
];

for (const [name, start] of adapters) {
  describeInBrowser(`cookie mode over TLS in Chromium on ${name}`, () => {
    let testAuth: TestAuth;
    let server: RunningServer;
    let origin: string;

    beforeAll(async () => {
      testAuth = makeTestAuth({ throttle: generousThrottle });
      server = await start(testAuth.auth, { tls });
      origin = `https://app.example.test:${server.port}`;
    });
    afterAll(async () => {
      await server?.close();
    });

    it("CK-1, CK-4: the refresh cookie is __Host-, Secure, on /; a sibling subdomain cannot plant one, and a reload still restores the session with one refresh", async () => {
      const user = await createTestUser(testAuth.auth, `tls-${name.toLowerCase()}`);
      const { context, refreshes } = await tlsContext();
      try {
        const page = await context.newPage();
        const errors = collectPageErrors(page);
        await page.goto(`${origin}${pagePath}`);
        await startClient(page);
        await page.evaluate(
          ({ username, password }) => (globalThis as unknown as PageGlobals).client.login({ username, password }),
          { username: user.username, password: testPassword },
        );
        const jar = async () =>
          (await context.cookies(`${origin}${refreshPath}`)).filter((cookie) => cookie.name.endsWith("portcullis_refresh"));
        const [signedIn] = await jar();
        expect(signedIn).toMatchObject({
          name: "__Host-portcullis_refresh",
          domain: "app.example.test",
          path: "/",
          secure: true,
          httpOnly: true,
          sameSite: "Strict",
        });
        expect(await page.evaluate("document.cookie")).not.toContain(signedIn?.value);

        const sibling = await context.newPage();
        await sibling.goto(`https://evil.example.test:${server.port}/`);
        await sibling.close();
        // The browser refused the __Host- cookie with a Domain; the plain one went in, and is sent
        // to the app, where over TLS it is not read.
        const planted = await jar();
        expect(planted.map((cookie) => `${cookie.name} ${cookie.domain}`).sort()).toEqual([
          "__Host-portcullis_refresh app.example.test",
          "portcullis_refresh .example.test",
        ]);

        await page.reload();
        await startClient(page);
        expect(await Promise.all([restore(page), restore(page)])).toEqual([user.username, user.username]);
        expect(refreshes).toHaveLength(1);
        const renewed = (await jar()).find((cookie) => cookie.name === "__Host-portcullis_refresh");
        expect(renewed?.value).not.toBe(signedIn?.value);
        expect(await page.evaluate("document.cookie")).not.toContain(renewed?.value);
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    });
  });
}
