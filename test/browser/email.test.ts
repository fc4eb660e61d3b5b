// Password reset by email on the demo page in a real browser: Debian's Chromium, driven by
// playwright-core, on the Express demo with its own SMTP server. "Forgot password?", the outbox
// page the demo's mail lands on, the link (its token in the fragment, read by the page and taken
// out of the address bar), a new password, and a sign-in with it; for a TOTP user the reset page
// asks for the code after the server's 40103 (PR-3).
import type { Locator, Page } from "playwright-core";
import { expect, it } from "vitest";
import { createTotpUser, totpCodeAt } from "../fixtures/auth.js";
import { browserTestPassword, createBrowserTestUser, startExpressDemo } from "./apps.js";
import {
  describeInBrowser,
  expectError,
  expectStatus,
  openPage,
  shownSection,
  shownUserField,
  signInWithPassword,
  useChromium,
  usePageApp,
} from "./page.js";

const newContext = useChromium();

const newPassword = "a new passphrase from the reset link";

/** Reloads the outbox page until `message` is on it: the server sends a link after its answer. */
async function reloadUntilShown(page: Page, message: Locator): Promise<void> {
  await expect
    .poll(
      async () => {
        await page.reload();
        return message.count();
      },
      { timeout: 60_000 },
    )
    .toBeGreaterThan(0);
}

/**
 * From the sign-in form: "Forgot password?", the account typed and sent, then the outbox page
 * through the page's own link, and the newest message to `address` there, whose reset link is
 * clicked. Resolves once the reset form is shown.
 */
async function followResetLink(page: Page, account: string, address: string): Promise<void> {
  await page.click("#forgot-link");
  expect(await shownSection(page)).toBe("forgot-password");
  await page.fill('#forgot-form input[name="account"]', account);
  await page.click('#forgot-form button[type="submit"]');
  await expectStatus(page, /^Check the outbox for the link\.$/);
  await page.click('#forgot-sent a[href="/outbox"]');
  await page.waitForURL((url) => url.pathname === "/outbox");
  expect(await page.locator("#outbox-notice").textContent()).toMatch(/A demo aid, not part of Portcullis/);

  const message = page.locator(".message").filter({ has: page.locator(".message-to", { hasText: address }) });
  await reloadUntilShown(page, message);
  expect(await message.first().locator(".message-subject").textContent()).toBe("Reset your Portcullis demo password");
  await message.first().locator('.message-text a[href*="/reset-password#token="]').click();
  await page.waitForURL((url) => url.pathname === "/reset-password");
  await page.locator("#reset-form").waitFor();
  // The page took the token out of the address bar (and so out of the history).
  expect(new URL(page.url()).hash).toBe("");
}

describeInBrowser("password reset by email in Chromium, on the Express demo", () => {
  const app = usePageApp(startExpressDemo);

  it("PR-1, PR-2, PR-4: Forgot password? sends a link to the outbox; it opens the reset page, the new password is set, and the user signs in with it", async () => {
    const demo = app();
    const { context, page, errors } = await openPage(newContext, demo);
    try {
      await followResetLink(page, demo.username, "demo@example.test");
      expect(await page.locator("#reset-code").isHidden()).toBe(true);
      await page.fill('#reset-form input[name="newPassword"]', newPassword);
      await page.click('#reset-form button[type="submit"]');
      await expectStatus(page, /^Your password is set, and every session of the account is signed out\./);
      expect(await shownSection(page)).toBe("sign-in");
      expect(new URL(page.url()).pathname).toBe("/");

      await signInWithPassword(page, demo.username, demo.password);
      await expectError(page, "#sign-in", /Invalid username or password/);
      await signInWithPassword(page, demo.username, newPassword);
      await expectStatus(page, /^Signed in\.$/);
      expect(await shownSection(page)).toBe("account");
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("PR-3: for a TOTP user the reset page asks for the code after the server's 40103, then sets the password; the sign-in asks for the second factor as before", async () => {
    const demo = app();
    const user = await createTotpUser(demo.auth, "totp-reader");
    await demo.auth.storage.users.setEmail(user.id, { email: "totp-reader@example.test", verified: true }, demo.auth.now());
    const { context, page, errors } = await openPage(newContext, demo);
    try {
      await followResetLink(page, "totp-reader@example.test", "totp-reader@example.test");
      await page.fill('#reset-form input[name="newPassword"]', newPassword);
      await page.click('#reset-form button[type="submit"]');
      await expectError(page, "#reset-password", /two-step sign-in: enter a code/);
      await page.locator("#reset-code").waitFor();
      expect(await shownSection(page)).toBe("reset-password");

      await page.fill('#reset-form input[name="newPassword"]', newPassword);
      await page.fill('#reset-form input[name="code"]', await totpCodeAt(demo.auth, user.secret));
      await page.click('#reset-form button[type="submit"]');
      await expectStatus(page, /^Your password is set/);
      expect(await shownSection(page)).toBe("sign-in");

      await signInWithPassword(page, user.username, newPassword);
      await expectStatus(page, /^Password accepted; a second factor is required\.$/, "info");
      await page.fill('#second-factor-form input[name="code"]', await totpCodeAt(demo.auth, user.secret, 1));
      await page.click('#second-factor-form button[type="submit"]');
      await expectStatus(page, /^Signed in with two factors\.$/);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("EV-1: the account page sends a link to a new address; from the outbox it opens the verify page, a click confirms it, and the account shows it verified", async () => {
    const demo = app();
    const user = await createBrowserTestUser(demo.auth, "new-address");
    const { context, page, errors } = await openPage(newContext, demo);
    try {
      await signInWithPassword(page, user.username, browserTestPassword);
      await expectStatus(page, /^Signed in\.$/);
      expect(await shownUserField(page, "email")).toBe("none");
      await page.fill('#email-form input[name="email"]', "new-address@example.test");
      await page.click('#email-form button[type="submit"]');
      await expectStatus(page, /^A confirmation link is on its way to new-address@example\.test/);
      expect(await shownUserField(page, "email")).toBe("none");

      await page.goto(`${demo.origin}/outbox`);
      const message = page
        .locator(".message")
        .filter({ has: page.locator(".message-to", { hasText: "new-address@example.test" }) });
      await reloadUntilShown(page, message);
      await message.first().locator('.message-text a[href*="/verify-email#token="]').click();
      await page.waitForURL((url) => url.pathname === "/verify-email");
      await page.locator("#verify-button").waitFor();
      expect(new URL(page.url()).hash).toBe("");
      await page.click("#verify-button");
      await expectStatus(page, /^Your address is confirmed/);

      // The page was opened afresh from the link (tokens live in memory): sign in to see the account.
      await signInWithPassword(page, user.username, browserTestPassword);
      await expectStatus(page, /^Signed in\.$/);
      expect(await shownUserField(page, "email")).toBe("new-address@example.test (verified)");
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
