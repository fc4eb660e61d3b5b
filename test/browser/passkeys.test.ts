// Passkeys end to end in a real browser: Debian's Chromium, driven by playwright-core, with the
// CDP WebAuthn virtual authenticator, against the demo page served by the Express example, by
// a Hono app, and by the demo with its API on Fastify. Everything the user does goes through the page's UI; the test then checks the
// authenticator (WebAuthn.getCredentials), the server's storage and the tokens.
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTotpUser, totpCodeAt } from "../fixtures/auth.js";
import {
  type ExpressDemo,
  type PageApp,
  browserTestPassword,
  createBrowserTestUser,
  startExpressDemo,
  startFastifyDemo,
  startHonoPageApp,
} from "./apps.js";
import { collectPageErrors, platformAuthenticator } from "./chromium.js";
import {
  type Envelope,
  describeInBrowser,
  expectError,
  expectStatus,
  openAccountSection,
  openPage,
  registerPasskey,
  reloadMyDetails,
  shownSection,
  shownUserField,
  signInWithPasskey,
  signInWithPassword,
  useChromium,
} from "./page.js";

const newContext = useChromium();

async function getJson(app: PageApp, path: string, accessToken: string): Promise<Envelope> {
  const response = await fetch(`${app.apiBase}${path}`, { headers: { authorization: `Bearer ${accessToken}` } });
  return (await response.json()) as Envelope;
}

function accessTokenClaims(accessToken: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(accessToken.split(".")[1]!, "base64url").toString("utf8"));
}

/**
 * The whole passkey life cycle through the page: password sign-in, registration (which keeps the
 * session: SE-2), a sign-out and a discoverable passkey sign-in with no username typed, a
 * protected route with the token it gave, rename, and revoke (which keeps the session too and
 * removes the passkey from the authenticator; after a sign-out a copy of it is refused, while
 * the password still works).
 */
async function passkeyLifeCycle(app: PageApp, user: { id: string; username: string; password: string }): Promise<void> {
  const { context, page, authenticator, errors } = await openPage(newContext, app);
  try {
    // 1. Password sign-in.
    await signInWithPassword(page, user.username, user.password);
    await expectStatus(page, /^Signed in\.$/);
    await openAccountSection(page, "security");
    await page.locator("#passkey-none").waitFor();
    expect(await authenticator.credentials()).toEqual([]);

    // 2. Register a passkey, relying on the sign-in just made (no password typed): the page stays
    // signed in (SE-2) and lists it.
    await registerPasskey(page, "Test laptop");
    await expectStatus(page, /^Passkey "Test laptop" added\. Your other devices were signed out; this one stays signed in\.$/);
    expect(await shownSection(page)).toBe("account");

    const held = await authenticator.credentials();
    expect(held).toHaveLength(1);
    const credential = held[0]!;
    expect(credential).toMatchObject({ isResidentCredential: true, rpId: "localhost", userHandle: user.id });
    const stored = await app.auth.storage.passkeys.findById(credential.id);
    expect(stored).toMatchObject({ userId: user.id, label: "Test laptop", transports: ["internal"], lastUsedAt: null });

    await page.locator(`#passkey-list li[data-passkey-id="${credential.id}"]`).waitFor();
    await reloadMyDetails(page);
    await expectStatus(page, /^GET \/auth\/me answered\.$/);

    // 3. Sign out, then in with the passkey, the username field empty.
    await page.click("#logout");
    await expectStatus(page, /^Signed out\.$/);
    await page.fill('#sign-in-form input[name="username"]', "");
    const signedIn = await signInWithPasskey(page);
    await expectStatus(page, /^Signed in with a passkey\.$/);
    expect(signedIn.code).toBe(0);
    expect(await shownUserField(page, "username")).toBe(user.username);
    expect((await authenticator.credentials())[0]!.signCount).toBeGreaterThan(credential.signCount);

    // 4. A protected route with that token, from outside the page and through it.
    const accessToken: string = signedIn.data.accessToken;
    expect(accessTokenClaims(accessToken)).toMatchObject({ sub: user.id, amr: ["hwk", "user", "mfa"] });
    const me = await getJson(app, "/api/v1/auth/me", accessToken);
    expect(me).toMatchObject({ code: 0, data: { id: user.id, username: user.username } });
    await reloadMyDetails(page);
    await expectStatus(page, /^GET \/auth\/me answered\.$/);

    // 5. The list shows the passkey, now used; rename it.
    await openAccountSection(page, "security");
    const item = page.locator(`#passkey-list li[data-passkey-id="${credential.id}"]`);
    await item.locator(".passkey-label", { hasText: /^Test laptop$/ }).waitFor();
    expect(await item.locator(".hint").textContent()).not.toContain("last used never");
    await item.locator('input[name="label"]').fill("Work laptop");
    await item.locator('button[type="submit"]').click();
    await expectStatus(page, /^Passkey "Test laptop" renamed to "Work laptop"\.$/);
    await item.locator(".passkey-label", { hasText: /^Work laptop$/ }).waitFor();
    expect((await app.auth.storage.passkeys.findById(credential.id))?.label).toBe("Work laptop");

    // 6. Revoke it: the button asks for a second click, then the user's other sessions end and
    // this one goes on (SE-2), and the page tells the browser the passkey is gone
    // (signalUnknownCredential), which removes it from the authenticator.
    const copy = await authenticator.rawCredentials();
    const revoke = item.locator(".passkey-revoke");
    await revoke.click();
    expect(await revoke.textContent()).toMatch(/click again/i);
    expect(await app.auth.storage.passkeys.findById(credential.id)).not.toBeNull();
    await revoke.click();
    await expectStatus(
      page,
      /^Passkey "Work laptop" revoked\. Your browser was asked to remove it from the authenticator\. Your other devices were signed out; this one stays signed in\.$/,
    );
    expect(await shownSection(page)).toBe("account");
    await page.locator("#passkey-none").waitFor();
    expect(await app.auth.storage.passkeys.findById(credential.id)).toBeNull();
    expect((await getJson(app, "/api/v1/auth/me", accessToken)).code).toBe(0);
    expect(await authenticator.credentials()).toEqual([]);

    // After a sign-out, a copy of the revoked passkey (a device that missed the signal) is refused by the server.
    await page.click("#logout");
    await expectStatus(page, /^Signed out\.$/);
    await authenticator.addCredential(copy[0]!);
    expect((await authenticator.credentials()).map((held) => held.id)).toEqual([credential.id]);
    const refused = await signInWithPasskey(page);
    expect(refused.code).toBe(40100);
    await expectError(page, "#passkey-sign-in", /^The passkey was not accepted\.$/);
    expect(await shownSection(page)).toBe("sign-in");

    // 7. The password still signs in, and the list is empty.
    await signInWithPassword(page, user.username, user.password);
    await expectStatus(page, /^Signed in\.$/);
    await openAccountSection(page, "security");
    await page.locator("#passkey-none").waitFor();
    expect(await page.locator("#passkey-list li").count()).toBe(0);

    expect(errors).toEqual([]);
  } finally {
    await context.close();
  }
}

describeInBrowser("passkeys in Chromium, on the Express demo", () => {
  let app: ExpressDemo;

  beforeAll(async () => {
    app = await startExpressDemo();
  });

  afterAll(async () => {
    await app?.close();
  });

  it("signs in with a password, registers a passkey, signs in with it, renames and revokes it", async () => {
    await passkeyLifeCycle(app, { id: app.userId, username: app.username, password: app.password });
  });

  it("opened at 127.0.0.1, hides the passkey and provider buttons and links to http://localhost:<port>/", async () => {
    const context = await newContext();
    try {
      const page = await context.newPage();
      const errors = collectPageErrors(page);
      await page.goto(`${app.apiBase}/`);
      const hint = page.locator("#passkeys-unavailable");
      await hint.waitFor();
      expect(await hint.textContent()).toBe(
        `Passkeys and sign-in with a provider work only on a domain name: open this page at ${app.origin}/.`,
      );
      expect(await hint.locator("a").getAttribute("href")).toBe(`${app.origin}/`);
      expect(await page.locator("#passkey-sign-in").isHidden()).toBe(true);
      // The provider's button is made (the providers were listed before the hint), but not shown.
      expect(await page.locator("#provider-buttons button").count()).toBe(1);
      expect(await page.locator("#provider-sign-in").isHidden()).toBe(true);
      // Password sign-in works there as before.
      await signInWithPassword(page, app.username, app.password);
      await expectStatus(page, /^Signed in\.$/);
      expect(await page.locator("#passkeys").isHidden()).toBe(true);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describeInBrowser("passkeys in Chromium, on a Hono app serving the demo page", () => {
  let app: PageApp;

  beforeAll(async () => {
    app = await startHonoPageApp();
  });

  afterAll(async () => {
    await app?.close();
  });

  it("signs in with a password, registers a passkey, signs in with it, renames and revokes it", async () => {
    const user = await createBrowserTestUser(app.auth, "hono-user");
    await passkeyLifeCycle(app, { ...user, password: browserTestPassword });
  });
});

describeInBrowser("passkeys in Chromium, on the demo with its API on Fastify", () => {
  let app: ExpressDemo;

  beforeAll(async () => {
    app = await startFastifyDemo();
  });

  afterAll(async () => {
    await app?.close();
  });

  it("signs in with a password, registers a passkey, signs in with it, renames and revokes it", async () => {
    await passkeyLifeCycle(app, { id: app.userId, username: app.username, password: app.password });
  });
});

describeInBrowser("passkeys in Chromium, without user verification, for a user with TOTP", () => {
  let app: PageApp;

  beforeAll(async () => {
    // "preferred": a passkey the authenticator did not verify the user with is a first factor only.
    app = await startHonoPageApp({ userVerification: "preferred" });
  });

  afterAll(async () => {
    await app?.close();
  });

  // Chromium refuses a discoverable request (no allowCredentials) to an authenticator that cannot
  // verify the user, even with userVerification "discouraged" (NotAllowedError at once), so the
  // page's username-less sign-in always yields a verified, complete sign-in there. To reach the
  // unverified path, the test adds the username to the page's login/begin request: the server
  // then lists the user's passkeys, Chromium signs with user presence only, and the server's real
  // answer is 40102. Only that request body is rewritten; the page, the browser, the
  // authenticator and the server are real.
  it("asks for the TOTP code after a passkey without user verification, as after a password (40102)", async () => {
    const user = await createTotpUser(app.auth, "totp-user");
    // A passkey provider that cannot verify the user: user presence only.
    const { context, page, authenticator, errors } = await openPage(newContext, app, {
      ...platformAuthenticator,
      hasUserVerification: false,
      isUserVerified: false,
    });
    try {
      await signInWithPassword(page, user.username, user.password);
      await expectStatus(page, /^Password accepted; a second factor is required\.$/, "info");
      expect(await page.locator("#second-factor-prompt").textContent()).toMatch(/^Your password was accepted\./);
      await page.fill('#second-factor-form input[name="code"]', await totpCodeAt(app.auth, user.secret));
      await page.click('#second-factor-form button[type="submit"]');
      await expectStatus(page, /^Signed in with two factors\.$/);

      await registerPasskey(page, "Security key");
      await expectStatus(page, /^Passkey "Security key" added\./);
      const [credential] = await authenticator.credentials();
      expect(credential).toMatchObject({ isResidentCredential: true, userHandle: user.id });
      await page.click("#logout");
      await expectStatus(page, /^Signed out\.$/);

      await page.route("**/api/v1/auth/public-key/login/begin", (route) =>
        route.continue({ postData: JSON.stringify({ username: user.username }) }),
      );
      const firstFactor = await signInWithPasskey(page, { beginRewritten: true });
      expect(firstFactor).toEqual({ code: 40102, message: expect.any(String), data: { tempToken: expect.any(String) } });
      await expectStatus(page, /^Passkey accepted; a second factor is required\.$/, "info");
      expect(await shownSection(page)).toBe("second-factor");
      expect(await page.locator("#second-factor-prompt").textContent()).toMatch(/^Your passkey was accepted\./);
      // The code of the next step: the current one was spent by the password sign-in (TOTP-4).
      const signedIn = page.waitForResponse((response) => response.url().endsWith("/api/v1/auth/2fa/verify"));
      await page.fill('#second-factor-form input[name="code"]', await totpCodeAt(app.auth, user.secret, 1));
      await page.click('#second-factor-form button[type="submit"]');
      await expectStatus(page, /^Signed in with two factors\.$/);
      const { data } = (await (await signedIn).json()) as Envelope;
      expect(accessTokenClaims(data.accessToken).amr).toEqual(expect.arrayContaining(["hwk", "otp"]));
      expect(await shownUserField(page, "username")).toBe(user.username);
      await openAccountSection(page, "security");
      await page.locator(`#passkey-list li[data-passkey-id="${credential!.id}"]`).waitFor();

      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
