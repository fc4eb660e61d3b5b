// Screenshots of the Express demo's pages in real Chromium (Debian's /usr/bin/chromium, as the
// browser tests use it), at 1280 and 390 px wide, into .tmp/screenshots/ (gitignored): signed out,
// the errors beside their controls, the account's sections (profile, security, sessions,
// administration) as a user and as an administrator, the "Confirm it is you" dialog a step-up
// opens, an account without a password (signed in with the local provider), TOTP enrolment,
// organizations (the list with the active one, members and a pending invitation; the
// invitation's page), and the API reference. Each shot is measured too: the page's height, the
// header's (one line at any width) and whether anything is wider than the window.
// test/browser/demo-screenshots.test.ts runs it and checks those measures and the page's errors.
//
//   npx tsx --tsconfig tsconfig.json scripts/demo-screenshots.ts
//
// It prints each file it wrote, and any error the page logged; it exits 1 when a page logged one.
import { mkdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { createUser } from "@portcullis/core";
import type { Browser, Page } from "playwright-core";
import { type ExpressDemo, browserTestPassword, createBrowserTestUser, startExpressDemo } from "../test/browser/apps.js";
import { addVirtualAuthenticator, collectPageErrors, launchChromium, platformAuthenticator } from "../test/browser/chromium.js";
import { base32Decode, totpCodeAt } from "../test/fixtures/auth.js";

/** The widths shot: a laptop's window and a phone's. */
export const screenshotWidths = [1280, 390] as const;

/** What a screenshot showed, measured in the page as it was shot. */
export interface ScreenshotMeasure {
  /** The shot's name, such as `03-profile`. */
  name: string;
  width: number;
  /** The file written. */
  file: string;
  /** The page's whole height in CSS pixels. */
  pageHeight: number;
  /** The header bar's height: one line of it is under 80 px. */
  headerHeight: number;
  /** How far the page is wider than the window (0 when nothing sticks out sideways). */
  overflowX: number;
}

/** What {@link takeDemoScreenshots} made: a measure for each shot, and what the pages logged that shows they broke. */
export interface DemoScreenshots {
  shots: ScreenshotMeasure[];
  pageErrors: string[];
}

/** Where the shots go. */
export const screenshotDirectory = new URL("../.tmp/screenshots/", import.meta.url);

/** The shots taken so far in this run, and what the pages logged. */
let shots: ScreenshotMeasure[] = [];
let pageErrors: string[] = [];

async function capture(page: Page, width: number, name: string): Promise<void> {
  const file = new URL(`${name}-${width}.png`, screenshotDirectory);
  await page.screenshot({ path: file.pathname, fullPage: true });
  // In the page: its document's sizes, and the header bar's height (0 on a page without one).
  const measured = await page.evaluate(() => {
    interface Box {
      scrollHeight: number;
      scrollWidth: number;
      clientWidth: number;
    }
    const { document } = globalThis as unknown as {
      document: { documentElement: Box; querySelector(selector: string): { getBoundingClientRect(): { height: number } } | null };
    };
    const root = document.documentElement;
    return {
      pageHeight: root.scrollHeight,
      headerHeight: document.querySelector("header.top")?.getBoundingClientRect().height ?? 0,
      overflowX: Math.max(0, root.scrollWidth - root.clientWidth),
    };
  });
  shots.push({ name, width, file: file.pathname, ...measured });
}

async function openDemo(
  browser: Browser,
  demo: ExpressDemo,
  width: number,
  userAgent?: string,
): Promise<{ page: Page; close(): Promise<void> }> {
  const context = await browser.newContext({
    viewport: { width, height: 900 },
    colorScheme: "light",
    ...(userAgent ? { userAgent } : {}),
  });
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
  await page.locator("#me dd").first().waitFor();
}

/** Shows the account's section `name` (clicks its tab). */
async function openSection(page: Page, name: string): Promise<void> {
  await page.click(`#tab-${name}`);
  await page.locator(`#tab-${name}[aria-selected="true"]`).waitFor();
}

/** A phone's browser, for a second session of the user: the sessions list names it "Safari on iPhone". */
const iphoneUserAgent =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1";

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
    // A user without the admin role: the profile (no admin-only controls), a wrong current
    // password under the password form, and the sessions with a phone signed in too.
    {
      const phone = await openDemo(browser, demo, width, iphoneUserAgent);
      await signIn(phone.page, user.username, "correct horse battery staple");
      const { page, close } = await openDemo(browser, demo, width);
      await signIn(page, user.username, "correct horse battery staple");
      await page.click("#load-things");
      await page.locator("#things li").first().waitFor();
      await capture(page, width, "03-profile");
      await openSection(page, "security");
      await page.fill('#password-form input[name="currentPassword"]', "not the password");
      await page.fill('#password-form input[name="newPassword"]', "a new password of some length");
      await page.click('#password-form button[type="submit"]');
      await page.locator("#password .error").waitFor();
      await capture(page, width, "04-security-password-error");
      await openSection(page, "sessions");
      await page.locator("#session-list li").nth(1).waitFor();
      await capture(page, width, "05-sessions");
      await close();
      await phone.close();
    }
    // The administrator (the demo user): the user list, a thing's Delete armed, the step-up
    // dialog of an old sign-in, TOTP enrolment.
    {
      const { page, close } = await openDemo(browser, demo, width);
      await signIn(page, demo.username, demo.password);
      await openSection(page, "administration");
      await page.locator("#user-list li").nth(1).waitFor();
      await capture(page, width, "06-administration");
      await openSection(page, "profile");
      await page.click("#load-things");
      await page.locator("#things li").first().waitFor();
      await page.locator("#things .thing-delete").first().click();
      demo.advanceClock(6 * 60_000);
      await page.locator("#things .thing-delete").first().click();
      await page.locator("#reauthenticate-dialog[open]").waitFor();
      await capture(page, width, "07-confirm-it-is-you");
      await page.fill('#reauthenticate-dialog input[name="password"]', demo.password);
      await page.click('#reauthenticate-dialog button[type="submit"]');
      await page.locator("#status.ok").waitFor();
      await openSection(page, "security");
      await page.click('#setup-form button[type="submit"]');
      await page.locator("#totp-setup:not([hidden])").waitFor();
      await page.locator("#qr[src]").waitFor();
      await page.locator("#qr").evaluate((image) => (image as unknown as { decode(): Promise<void> }).decode());
      await capture(page, width, "08-totp-setup");
      await page.fill('#enable-form input[name="code"]', "000000");
      await page.click('#enable-form button[type="submit"]');
      await page.locator("#totp-setup .error").waitFor();
      await capture(page, width, "09-totp-wrong-code");
      const secret = base32Decode((await page.locator("#secret").textContent()) ?? "");
      await page.fill('#enable-form input[name="code"]', await totpCodeAt(demo.auth, secret));
      await page.click('#enable-form button[type="submit"]');
      await page.locator("#recovery-codes:not([hidden])").waitFor();
      await capture(page, width, "10-recovery-codes");
      await page.click("#recovery-codes-done");
      await page.locator("#totp-on:not([hidden])").waitFor();
      await page.click("#logout");
      await page.locator("#sign-in:not([hidden])").waitFor();
      await submitSignIn(page, demo.username, demo.password);
      await page.locator("#second-factor:not([hidden])").waitFor();
      await page.fill('#second-factor-form input[name="code"]', "123456");
      await page.click('#second-factor-form button[type="submit"]');
      await page.locator("#second-factor .error").waitFor();
      await capture(page, width, "11-second-factor-error");
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
      await openSection(page, "security");
      await capture(page, width, "12-security-without-password");
      await close();
    }
    // The API reference.
    {
      const { page, close } = await openDemo(browser, demo, width);
      await Promise.all([page.waitForURL(`${demo.origin}/api-docs/`), page.click('a[href="/api-docs/"]')]);
      await page.locator(".swagger-ui .opblock").first().waitFor({ timeout: 30_000 });
      await capture(page, width, "13-api-reference");
      await close();
    }
    // Organizations: one created and made active, an invitation pending; then the invitation's page, opened from its link.
    {
      const { page, close } = await openDemo(browser, demo, width);
      await signIn(page, user.username, "correct horse battery staple");
      await openSection(page, "organizations");
      await page.fill('#organization-create-form input[name="name"]', `Robin's Guild ${width}`);
      await page.click('#organization-create-form button[type="submit"]');
      await page.locator("#organization-list .organization-switch").first().click();
      await page.locator("#organization-list .organization-active").waitFor();
      await page.fill('#invite-form input[name="email"]', "sam@example.test");
      await page.click('#invite-form button[type="submit"]');
      await page.locator("#invitation-list li").first().waitFor();
      await capture(page, width, "14-organizations");
      await close();
      const invitation = await demo.mail.waitFor((message) => message.to === "sam@example.test");
      const link = /https?:\/\/\S+\/accept-invitation#token=[\w-]+/.exec(invitation.text)?.[0];
      if (!link) throw new Error("no invitation link in the message");
      const invited = await openDemo(browser, demo, width);
      await invited.page.goto(link);
      await invited.page.locator("#sign-in:not([hidden])").waitFor();
      await submitSignIn(invited.page, "sam", "correct horse battery staple");
      await invited.page.locator("#accept-invitation:not([hidden])").waitFor();
      await capture(invited.page, width, "15-accept-invitation");
      await invited.close();
    }
  } finally {
    await demo.close();
  }
}

/**
 * Starts the demo, shoots its pages at each width in `widths` (every shot measured), and stops it.
 * Runs in the given Chromium; the files go to `.tmp/screenshots/`.
 */
export async function takeDemoScreenshots(
  browser: Browser,
  widths: readonly number[] = screenshotWidths,
): Promise<DemoScreenshots> {
  shots = [];
  pageErrors = [];
  await mkdir(screenshotDirectory, { recursive: true });
  for (const width of widths) await shoot(browser, width);
  return { shots, pageErrors };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const browser = await launchChromium();
  try {
    const taken = await takeDemoScreenshots(browser);
    for (const shot of taken.shots) {
      console.log(`${shot.file}  ${shot.pageHeight} px tall, header ${Math.round(shot.headerHeight)} px`);
    }
    if (taken.pageErrors.length > 0) {
      console.error(`The pages logged errors:\n${taken.pageErrors.join("\n")}`);
      process.exitCode = 1;
    }
  } finally {
    await browser.close();
  }
}
