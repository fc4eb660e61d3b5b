// Screenshots of the Express demo's pages in real Chromium (Debian's /usr/bin/chromium, as the
// browser tests use it), at 1280 and 390 px wide, into .tmp/screenshots/ (gitignored): signed out,
// the errors beside their controls, signed in as a user and as an administrator, an account
// without a password (signed in with the local provider), TOTP enrolment, organizations (the
// list with the active one, members and a pending invitation; the invitation's page), and the API reference.
//
//   npx tsx --tsconfig tsconfig.json scripts/demo-screenshots.ts
//
// It prints each file it wrote, and any error the page logged; it exits 1 when a page logged one.
import { mkdir } from "node:fs/promises";
import { createUser } from "@portcullis/core";
import type { Browser, Page } from "playwright-core";
import { type ExpressDemo, browserTestPassword, createBrowserTestUser, startExpressDemo } from "../test/browser/apps.js";
import { addVirtualAuthenticator, collectPageErrors, launchChromium, platformAuthenticator } from "../test/browser/chromium.js";
import { base32Decode, totpCodeAt } from "../test/fixtures/auth.js";

const outputDirectory = new URL("../.tmp/screenshots/", import.meta.url);
const widths = [1280, 390] as const;

/** Everything the page logged that shows it broke, by screenshot. */
const pageErrors: string[] = [];

async function capture(page: Page, width: number, name: string): Promise<void> {
  const file = new URL(`${name}-${width}.png`, outputDirectory);
  await page.screenshot({ path: file.pathname, fullPage: true });
  console.log(file.pathname);
}

async function openDemo(browser: Browser, demo: ExpressDemo, width: number): Promise<{ page: Page; close(): Promise<void> }> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme: "light" });
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  const errors = collectPageErrors(page);
  await addVirtualAuthenticator(context, page, platformAuthenticator);
  await page.goto(`${demo.origin}/`);
  await page.locator("#passkey-sign-in-button").waitFor();
  return {
    page,
    close: async () => {
      pageErrors.push(...errors.map((error) => `${width}px: ${error}`));
      await context.close();
    },
  };
}

async function submitSignIn(page: Page, username: string, password: string): Promise<void> {
  await page.fill('#sign-in-form input[name="username"]', username);
  await page.fill('#sign-in-form input[name="password"]', password);
  await page.click('#sign-in-form button[type="submit"]');
}

async function signIn(page: Page, username: string, password: string): Promise<void> {
  await submitSignIn(page, username, password);
  await page.locator("#account").waitFor();
  await page.locator("#session-list li").first().waitFor();
}

async function shoot(browser: Browser, width: number): Promise<void> {
  const demo = await startExpressDemo();
  try {
    const user = await createBrowserTestUser(demo.auth, "robin");
    // Invited to Robin's organization: an account holding the invited address, verified (OR-5).
    await createUser(demo.auth, {
      username: "sam",
      password: browserTestPassword,
      email: "sam@example.test",
      emailVerified: true,
    });
    // Signed out, then a wrong password: the error under the sign-in form.
    {
      const { page, close } = await openDemo(browser, demo, width);
      await capture(page, width, "01-signed-out");
      await submitSignIn(page, user.username, "not the password");
      await page.locator("#sign-in .error").waitFor();
      await capture(page, width, "02-sign-in-error");
      await close();
    }
    // A user without the admin role: no admin-only controls.
    {
      const { page, close } = await openDemo(browser, demo, width);
      await signIn(page, user.username, "correct horse battery staple");
      await page.click("#load-things");
      await page.locator("#things li").first().waitFor();
      await capture(page, width, "03-signed-in-user");
      // A wrong current password: the error under the password form.
      await page.fill('#password-form input[name="currentPassword"]', "not the password");
      await page.fill('#password-form input[name="newPassword"]', "a new password of some length");
      await page.click('#password-form button[type="submit"]');
      await page.locator("#password .error").waitFor();
      await page.locator("#password").scrollIntoViewIfNeeded();
      await capture(page, width, "04-password-error");
      await close();
    }
    // The administrator (the demo user): the user list, the things' Delete buttons, TOTP enrolment.
    {
      const { page, close } = await openDemo(browser, demo, width);
      await signIn(page, demo.username, demo.password);
      await page.locator("#user-list li").nth(1).waitFor();
      await page.click("#load-things");
      await page.locator("#things li").first().waitFor();
      await page.locator("#things .thing-delete").first().click();
      await capture(page, width, "05-signed-in-admin");
      await page.click('#setup-form button[type="submit"]');
      await page.locator("#totp-setup:not([hidden])").waitFor();
      await page.locator("#qr[src]").waitFor();
      await page.locator("#qr").evaluate((image) => (image as unknown as { decode(): Promise<void> }).decode());
      await page.locator("#totp-setup").scrollIntoViewIfNeeded();
      await capture(page, width, "06-totp-setup");
      await page.fill('#enable-form input[name="code"]', "000000");
      await page.click('#enable-form button[type="submit"]');
      await page.locator("#totp-setup .error").waitFor();
      await capture(page, width, "07-totp-wrong-code");
      const secret = base32Decode((await page.locator("#secret").textContent()) ?? "");
      await page.fill('#enable-form input[name="code"]', await totpCodeAt(demo.auth, secret));
      await page.click('#enable-form button[type="submit"]');
      await page.locator("#recovery-codes:not([hidden])").waitFor();
      await capture(page, width, "08-recovery-codes");
      await page.click("#recovery-codes-done");
      await page.locator("#totp-on:not([hidden])").waitFor();
      await page.click("#logout");
      await page.locator("#sign-in:not([hidden])").waitFor();
      await submitSignIn(page, demo.username, demo.password);
      await page.locator("#second-factor:not([hidden])").waitFor();
      await page.fill('#second-factor-form input[name="code"]', "123456");
      await page.click('#second-factor-form button[type="submit"]');
      await page.locator("#second-factor .error").waitFor();
      await capture(page, width, "09-second-factor-error");
      await close();
    }
    // An account the local provider made: no password, so no password fields.
    {
      const { page, close } = await openDemo(browser, demo, width);
      const { provider, account } = demo.localProvider;
      await page.getByRole("button", { name: "Sign in with the local provider" }).click();
      await page.waitForURL((url) => url.origin === provider.issuer);
      await page.getByLabel("Username").fill(account.username);
      await page.getByLabel("Password").fill(account.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      const consent = page.getByRole("button", { name: "Allow" });
      await consent.or(page.locator("#account:not([hidden])")).waitFor();
      if (new URL(page.url()).origin === provider.issuer) await consent.click();
      await page.locator("#account:not([hidden])").waitFor();
      await page.locator("#session-list li").first().waitFor();
      await capture(page, width, "10-signed-in-without-password");
      await close();
    }
    // The API reference.
    {
      const { page, close } = await openDemo(browser, demo, width);
      await Promise.all([page.waitForURL(`${demo.origin}/api-docs/`), page.click('a[href="/api-docs/"]')]);
      await page.locator(".swagger-ui .opblock").first().waitFor({ timeout: 30_000 });
      await capture(page, width, "11-api-reference");
      await close();
    }
    // Organizations: one created and made active, an invitation pending; then the invitation's page, opened from its link.
    {
      const { page, close } = await openDemo(browser, demo, width);
      await signIn(page, user.username, "correct horse battery staple");
      await page.fill('#organization-create-form input[name="name"]', `Robin's Guild ${width}`);
      await page.click('#organization-create-form button[type="submit"]');
      await page.locator("#organization-list .organization-switch").first().click();
      await page.locator("#organization-list .organization-active").waitFor();
      await page.fill('#invite-form input[name="email"]', "sam@example.test");
      await page.click('#invite-form button[type="submit"]');
      await page.locator("#invitation-list li").first().waitFor();
      await page.locator("#organizations").scrollIntoViewIfNeeded();
      await capture(page, width, "12-organizations");
      await close();
      const invitation = await demo.mail.waitFor((message) => message.to === "sam@example.test");
      const link = /https?:\/\/\S+\/accept-invitation#token=[\w-]+/.exec(invitation.text)?.[0];
      if (!link) throw new Error("no invitation link in the message");
      const invited = await openDemo(browser, demo, width);
      await invited.page.goto(link);
      await invited.page.locator("#sign-in:not([hidden])").waitFor();
      await submitSignIn(invited.page, "sam", "correct horse battery staple");
      await invited.page.locator("#accept-invitation:not([hidden])").waitFor();
      await capture(invited.page, width, "13-accept-invitation");
      await invited.close();
    }
  } finally {
    await demo.close();
  }
}

await mkdir(outputDirectory, { recursive: true });
const browser = await launchChromium();
try {
  for (const width of widths) await shoot(browser, width);
} finally {
  await browser.close();
}
if (pageErrors.length > 0) {
  console.error(`The pages logged errors:\n${pageErrors.join("\n")}`);
  process.exitCode = 1;
}
