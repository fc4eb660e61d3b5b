// Sign-in with an OpenID provider end to end in a real browser: Debian's Chromium, driven by
// playwright-core, on the Express demo with its local provider (oidc-provider on 127.0.0.1), as
// `pnpm demo` runs them, and on the same demo with its API on Fastify (the binding cookie and the
// callback go through each adapter). The browser clicks the page's button, fills in the provider's own login
// and consent pages, and comes back to the page's callback, which relays the query.
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { base32Decode, totpCodeAt } from "../fixtures/auth.js";
import { type ExpressDemo, startExpressDemo, startFastifyDemo } from "./apps.js";
import { collectPageErrors } from "./chromium.js";
import {
  type Envelope,
  describeInBrowser,
  expectError,
  expectStatus,
  openAccountSection,
  shownSection,
  shownUserField,
  useChromium,
} from "./page.js";

const newContext = useChromium();

/** A fresh context on the demo's page at `path`, with every URL the browser requests recorded. */
async function openDemo(
  app: ExpressDemo,
  path = "/",
): Promise<{ context: BrowserContext; page: Page; errors: string[]; requestedUrls: string[] }> {
  const context = await newContext();
  const requestedUrls: string[] = [];
  context.on("request", (request) => requestedUrls.push(request.url()));
  const page = await context.newPage();
  const errors = collectPageErrors(page);
  await page.goto(`${app.origin}${path}`);
  return { context, page, errors, requestedUrls };
}

/**
 * Clicks "Sign in with the local provider", signs in as the provider's account on its login
 * page, answers its consent page (when it asks) with `decision`, and returns the envelope the
 * page's callback relay received.
 */
async function signInAtProvider(app: ExpressDemo, page: Page, decision: "Allow" | "Deny" = "Allow"): Promise<Envelope> {
  const { provider, account } = app.localProvider;
  const relayed = page.waitForResponse((response) =>
    response.url().startsWith(`${app.origin}/api/v1/auth/oauth/local/callback?`),
  );
  await page.getByRole("button", { name: "Sign in with the local provider" }).click();
  await page.waitForURL((url) => url.origin === provider.issuer && url.pathname.startsWith("/interaction/"));
  await page.getByLabel("Username").fill(account.username);
  await page.getByLabel("Password").fill(account.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  const consent = page.getByRole("button", { name: decision });
  await consent.or(page.locator("#status")).waitFor({ state: "attached" });
  if (new URL(page.url()).origin === provider.issuer) await consent.click();
  return (await (await relayed).json()) as Envelope;
}

/** The address bar is at `path` of the demo, without a query, and no URL the browser requested holds a token of `envelope`. */
function expectNoSecretInUrls(app: ExpressDemo, page: Page, requestedUrls: string[], envelope: Envelope, path = "/"): void {
  expect(page.url()).toBe(`${app.origin}${path}`);
  const tokens = [envelope.data?.accessToken, envelope.data?.refreshToken, envelope.data?.tempToken].filter(Boolean);
  for (const url of requestedUrls) for (const token of tokens) expect(url).not.toContain(token);
}

const demos: [string, () => Promise<ExpressDemo>][] = [
  ["the Express demo", startExpressDemo],
  ["the demo with its API on Fastify", startFastifyDemo],
];

for (const [name, startDemo] of demos) {
  describeInBrowser(`sign-in with the local provider in Chromium, on ${name}`, () => {
    let app: ExpressDemo;

    beforeAll(async () => {
      app = await startDemo();
    });

    afterAll(async () => {
      await app?.close();
    });

    it("OA-1, OA-5, OA-8: the button goes to the provider's login and consent, and back to the page signed in; the address bar ends at the path it began at, without code or state", async () => {
      const { context, page, errors, requestedUrls } = await openDemo(app, "/index.html");
      try {
        const authorize = page.waitForRequest((request) => request.url().includes("/api/v1/auth/oauth/local/authorize?"));
        const answer = await signInAtProvider(app, page);
        expect(new URL((await authorize).url()).searchParams.get("redirect")).toBe("/index.html");
        expect(answer).toMatchObject({ code: 0, data: { returnPath: "/index.html", user: { username: "ada" } } });
        await expectStatus(page, /^Signed in with the local provider\.$/);
        expect(await shownSection(page)).toBe("account");
        expect(await shownUserField(page, "username")).toBe("ada");
        // The provider made the account without a password: the page shows no password field.
        expect(await shownUserField(page, "hasPassword")).toMatch(/^none/);
        expect(await page.locator('#account input[type="password"]:visible').count()).toBe(0);
        expect(await page.locator("#password").isHidden()).toBe(true);

        // The provider sent the browser to the exact redirect URI with the code; the page relayed it.
        const redirected = requestedUrls.find((url) => url.startsWith(`${app.origin}/oauth/local/callback?`));
        expect(new URL(redirected ?? app.origin).searchParams.get("code")).toEqual(expect.any(String));
        expectNoSecretInUrls(app, page, requestedUrls, answer, "/index.html");
        // The binding cookie was spent with the state.
        expect((await context.cookies(app.origin)).map((cookie) => cookie.name)).not.toContain("portcullis_oauth");

        // The tokens the page keeps work: a protected route through the page.
        await page.click("#load-things");
        await expectStatus(page, /^\d+ things loaded\.$/);
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    });

    it("OA-9: denied on the provider's consent page, the page says the provider did not sign you in and drops the error from the address bar", async () => {
      const { context, page, errors, requestedUrls } = await openDemo(app);
      try {
        const answer = await signInAtProvider(app, page, "Deny");
        expect(answer).toEqual({ code: 40100, message: "The provider did not sign you in" });
        await expectError(page, "#provider-sign-in", /^The provider did not sign you in\.$/);
        expect(await shownSection(page)).toBe("sign-in");
        expectNoSecretInUrls(app, page, requestedUrls, answer);
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    });

    it("a provider account with TOTP on is asked for the code after the provider (40102), as after a password, then signed in", async () => {
      const first = await openDemo(app);
      let secret: Uint8Array;
      try {
        expect((await signInAtProvider(app, first.page)).code).toBe(0);
        await expectStatus(first.page, /^Signed in with the local provider\.$/);
        // TOTP through the page, relying on the sign-in just made (the account has no password).
        await openAccountSection(first.page, "security");
        await first.page.click('#setup-form button[type="submit"]');
        await expectStatus(first.page, /^Scan the QR code/, "info");
        secret = base32Decode((await first.page.locator("#secret").textContent()) ?? "");
        await first.page.fill('#enable-form input[name="code"]', await totpCodeAt(app.auth, secret));
        await first.page.click('#enable-form button[type="submit"]');
        await expectStatus(
          first.page,
          /^Two-step sign-in is on\. Your other devices were signed out; this one stays signed in\.$/,
        );
        expect(first.errors).toEqual([]);
      } finally {
        await first.context.close();
      }

      const { context, page, errors, requestedUrls } = await openDemo(app);
      try {
        const answer = await signInAtProvider(app, page);
        expect(answer).toEqual({
          code: 40102,
          message: expect.any(String),
          data: { tempToken: expect.any(String), returnPath: "/" },
        });
        await expectStatus(page, /^Sign-in with the local provider accepted; a second factor is required\.$/, "info");
        expect(await shownSection(page)).toBe("second-factor");
        expect(await page.locator("#second-factor-prompt").textContent()).toMatch(
          /^Your sign-in with the local provider was accepted\./,
        );
        expectNoSecretInUrls(app, page, requestedUrls, answer);
        // The code of the next step: enabling spent the current one (TOTP-4).
        await page.fill('#second-factor-form input[name="code"]', await totpCodeAt(app.auth, secret, 1));
        await page.click('#second-factor-form button[type="submit"]');
        await expectStatus(page, /^Signed in with two factors\.$/);
        expect(await shownUserField(page, "username")).toBe("ada");
        expect(await shownUserField(page, "totpEnabled")).toBe("on");
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    });
  });
}
