// The demo's account page in a real browser: Debian's Chromium, driven by playwright-core, with
// the CDP WebAuthn virtual authenticator, on the Express demo. Two browser contexts are two
// devices of one user: the user's own security changes keep the page signed in (SE-2), the page
// lists both sessions with this one marked, and ending the other from it ends that device's
// session at its next call and refresh (SE-1, SE-3); once TOTP is on, ending it takes the code
// too, which the page asks for (STUP-3). The user list is shown to administrators only.
import { createUser } from "@portcullis/core";
import type { Page, Response } from "playwright-core";
import { expect, it } from "vitest";
import { deviceName } from "../../examples/express/src/device-names.js";
import { base32Decode, totpCodeAt } from "../fixtures/auth.js";
import { browserTestPassword, createBrowserTestUser, startExpressDemo } from "./apps.js";
import {
  type Envelope,
  describeInBrowser,
  expectStatus,
  openAccountSection,
  openPage,
  registerPasskey,
  reloadMyDetails,
  shownSection,
  shownUserField,
  signInWithPassword,
  useChromium,
  usePageApp,
} from "./page.js";

const newContext = useChromium();

/** Clicks "GET /auth/me" and waits for the page to say it answered: the next call of the page's client succeeded. */
async function nextCallSucceeds(page: Page): Promise<void> {
  await reloadMyDetails(page);
  await expectStatus(page, /^GET \/auth\/me answered\.$/);
}

/** The envelope of the next answer of the API route `/api/v1<path>`; call it before the action that sends the request. */
function nextAnswer(page: Page, path: string): Promise<Envelope> {
  const response: Promise<Response> = page.waitForResponse((answer) => new URL(answer.url()).pathname === `/api/v1${path}`);
  return response.then(async (answer) => (await answer.json()) as Envelope);
}

describeInBrowser("the account page in Chromium, on the Express demo", () => {
  const app = usePageApp(startExpressDemo);

  it("SE-2, SE-1, SE-3, STUP-3: registers a passkey and turns on TOTP staying signed in; sees a second browser's session, ends it with the code the page asks for, and that browser's next call gets 40101 and its refresh fails", async () => {
    const demo = app();
    const first = await openPage(newContext, demo);
    const second = await openPage(newContext, demo);
    try {
      await signInWithPassword(first.page, demo.username, demo.password);
      await expectStatus(first.page, /^Signed in\.$/);

      // A passkey, registered from the account page: the page stays signed in.
      await registerPasskey(first.page, "Laptop");
      await expectStatus(first.page, /^Passkey "Laptop" added\. Your other devices were signed out; this one stays signed in\.$/);
      expect(await shownSection(first.page)).toBe("account");
      expect(await first.authenticator.credentials()).toHaveLength(1);
      await nextCallSucceeds(first.page);

      // TOTP turned on from the account page: the recovery codes, then the account again, signed in.
      await openAccountSection(first.page, "security");
      await first.page.click('#setup-form button[type="submit"]');
      await expectStatus(first.page, /^Scan the QR code/, "info");
      const secret = base32Decode((await first.page.locator("#secret").textContent()) ?? "");
      await first.page.fill('#enable-form input[name="code"]', await totpCodeAt(demo.auth, secret));
      await first.page.click('#enable-form button[type="submit"]');
      await expectStatus(first.page, /^Two-step sign-in is on\. Your other devices were signed out; this one stays signed in\.$/);
      expect(await first.page.locator("#recovery-code-list li").count()).toBe(10);
      await first.page.click("#recovery-codes-done");
      await first.page.locator("#totp-on").waitFor();
      expect(await shownSection(first.page)).toBe("account");
      expect(await shownUserField(first.page, "totpEnabled")).toBe("on");
      await nextCallSucceeds(first.page);

      // A second browser signs in: password, then the code of the next step (the enabling one is spent).
      await signInWithPassword(second.page, demo.username, demo.password);
      await expectStatus(second.page, /^Password accepted; a second factor is required\.$/, "info");
      await second.page.fill('#second-factor-form input[name="code"]', await totpCodeAt(demo.auth, secret, 1));
      await second.page.click('#second-factor-form button[type="submit"]');
      await expectStatus(second.page, /^Signed in with two factors\.$/);

      // The first sees two sessions, its own marked, each device named as people name it (from
      // the User-Agent, which is the row's tooltip), on this computer (loopback).
      await openAccountSection(first.page, "sessions");
      await first.page.click("#reload-sessions");
      await expectStatus(first.page, /^2 sessions signed in\.$/);
      const sessions = first.page.locator("#session-list li");
      const mine = sessions.filter({ has: first.page.locator(".session-current") });
      const other = sessions.filter({ hasNot: first.page.locator(".session-current") });
      expect([await mine.count(), await other.count()]).toEqual([1, 1]);
      const userAgent = await second.page.evaluate(
        () => (globalThis as unknown as { navigator: { userAgent: string } }).navigator.userAgent,
      );
      expect(deviceName(userAgent)).toBe("Chrome on Linux");
      expect(await other.locator(".session-device").textContent()).toBe("Chrome on Linux");
      expect(await other.locator(".row-main").getAttribute("title")).toBe(userAgent);
      expect(await other.locator(".hint").textContent()).toMatch(
        /^on this computer · last active just now · signed in just now with a password and an app code$/,
      );
      expect(await mine.locator(".hint").textContent()).toMatch(
        /^on this computer · active now · signed in just now with a password$/,
      );
      const otherId = await other.getAttribute("data-session-id");
      expect(await mine.getAttribute("data-session-id")).not.toBe(otherId);

      // The first ends the second's session. TOTP went on after this session's password sign-in,
      // which stands for the password only: ending a session needs the code as well (STUP-3), so
      // the page asks for every factor in its dialog. The code is of a step after the two spent
      // above (TOTP-4): the server's clock moves one step on.
      await other.locator(".session-end").click();
      const dialog = first.page.locator("#reauthenticate-dialog");
      await dialog.waitFor();
      expect(await dialog.locator("#reauthenticate-purpose").textContent()).toBe(
        "To sign out a device, enter your password and a code from your authenticator app.",
      );
      demo.advanceClock(30_000);
      await dialog.locator('input[name="password"]').fill(demo.password);
      await dialog.locator('input[name="totpCode"]').fill(await totpCodeAt(demo.auth, secret, 1));
      await dialog.locator('button[type="submit"]').click();
      await expectStatus(first.page, /^Signed out Chrome on Linux\.$/);
      expect(await dialog.isHidden()).toBe(true);
      await expect.poll(() => sessions.count()).toBe(1);
      expect(await mine.count()).toBe(1);
      expect((await demo.auth.storage.sessions.findSession(otherId ?? ""))?.revokedAt).not.toBeNull();

      // The second's next call is refused (40101), its one refresh too, and the page is signed out.
      const refused = nextAnswer(second.page, "/auth/me");
      const refreshed = nextAnswer(second.page, "/auth/refresh");
      await reloadMyDetails(second.page);
      expect((await refused).code).toBe(40101);
      expect((await refreshed).code).toBe(40101);
      await expectStatus(second.page, /^Your session has ended; sign in again\.$/, "info");
      expect(await shownSection(second.page)).toBe("sign-in");

      // The first goes on.
      await nextCallSucceeds(first.page);
      expect([...first.errors, ...second.errors]).toEqual([]);
    } finally {
      await first.context.close();
      await second.context.close();
    }
  });

  it("AD-1: the user list is shown to an administrator only; disabling a user there ends that user's session, enabling lets them back in", async () => {
    const demo = app();
    const viewer = await createBrowserTestUser(demo.auth, "viewer");
    // An administrator of its own: the demo user has TOTP on after the test above.
    const administrator = await createUser(demo.auth, {
      username: "administrator",
      password: browserTestPassword,
      roles: ["admin"],
    });
    const admin = await openPage(newContext, demo);
    const user = await openPage(newContext, demo);
    try {
      await signInWithPassword(user.page, viewer.username, browserTestPassword);
      await expectStatus(user.page, /^Signed in\.$/);
      expect(await user.page.locator("#admin").isHidden()).toBe(true);
      expect(await user.page.locator("#tab-administration").isHidden()).toBe(true);
      // The things list offers Delete (an admin-only route) to administrators only.
      await user.page.click("#load-things");
      await user.page.locator("#things li").first().waitFor();
      expect(await user.page.locator("#things .thing-delete").count()).toBe(0);

      await signInWithPassword(admin.page, administrator.username, browserTestPassword);
      await expectStatus(admin.page, /^Signed in\.$/);
      await admin.page.click("#load-things");
      await admin.page.locator("#things .thing-delete").first().waitFor();
      await openAccountSection(admin.page, "administration");
      const row = admin.page.locator(`#user-list li[data-user-id="${viewer.id}"]`);
      await row.waitFor();
      expect(await admin.page.locator(`#user-list li[data-user-id="${administrator.id}"] .user-toggle`).count()).toBe(0);

      await row.locator(".user-toggle", { hasText: /^Disable$/ }).click();
      await expectStatus(admin.page, /^viewer is disabled; their sessions have ended\.$/);
      await row.locator(".user-toggle", { hasText: /^Enable$/ }).waitFor();
      const refused = nextAnswer(user.page, "/auth/me");
      await reloadMyDetails(user.page);
      expect((await refused).code).toBe(40101);
      await expectStatus(user.page, /^Your session has ended; sign in again\.$/, "info");

      await row.locator(".user-toggle").click();
      await expectStatus(admin.page, /^viewer is enabled\.$/);
      await signInWithPassword(user.page, viewer.username, browserTestPassword);
      await expectStatus(user.page, /^Signed in\.$/);
      expect([...admin.errors, ...user.errors]).toEqual([]);
    } finally {
      await admin.context.close();
      await user.context.close();
    }
  });
  it("STUP-2: a route that wants a sign-in under 5 minutes old opens the dialog only then; a wrong password keeps it open, the right one sends the request again; a cancel changes nothing; no password field stands on the page", async () => {
    const demo = app();
    const keeper = await createUser(demo.auth, { username: "keeper", password: browserTestPassword, roles: ["admin"] });
    const { context, page, errors } = await openPage(newContext, demo);
    try {
      await signInWithPassword(page, keeper.username, browserTestPassword);
      await expectStatus(page, /^Signed in\.$/);
      // The only password fields outside the dialog are the password change's own.
      const standing = page.locator('#account input[type="password"]');
      expect(
        await standing.evaluateAll((inputs) =>
          inputs.map((input) => (input as unknown as { form: { id: string } | null }).form?.id),
        ),
      ).toEqual(["password-form", "password-form"]);

      await page.click("#load-things");
      const rows = page.locator("#things li");
      await rows.first().waitFor();
      const count = await rows.count();
      const dialog = page.locator("#reauthenticate-dialog");
      const deleteFirst = async () => {
        const button = rows.first().locator(".thing-delete");
        await button.click();
        await button.click();
      };

      // Signed in just now: deleting needs no dialog.
      const firstName = await rows.first().locator(".row-main").textContent();
      await deleteFirst();
      await expectStatus(page, new RegExp(`^Deleted "${firstName}"\\.$`));
      expect(await dialog.isVisible()).toBe(false);
      await expect.poll(() => rows.count()).toBe(count - 1);

      // Six minutes on: the server answers 40104 and the page asks.
      demo.advanceClock(6 * 60_000);
      await deleteFirst();
      await page.locator("#reauthenticate-dialog[open]").waitFor();
      expect(await dialog.locator("#reauthenticate-purpose").textContent()).toBe(
        "This needs a sign-in from the last 5 minutes: enter your password.",
      );
      expect(await dialog.locator('input[name="totpCode"]').isVisible()).toBe(false);
      await dialog.locator("#reauthenticate-cancel").click();
      await expectStatus(page, /^Cancelled: nothing was changed\.$/, "info");
      expect(await rows.count()).toBe(count - 1);

      // The Delete button stays armed after the cancel: one click sends it again.
      const armed = rows.first().locator(".thing-delete");
      expect(await armed.textContent()).toBe("Click again to delete");
      const secondName = await rows.first().locator(".row-main").textContent();
      await armed.click();
      await page.locator("#reauthenticate-dialog[open]").waitFor();
      await dialog.locator('input[name="password"]').fill("not the password");
      await dialog.locator('button[type="submit"]').click();
      await dialog.locator("#reauthenticate-error", { hasText: /^The password is not right\.$/ }).waitFor();
      await dialog.locator('input[name="password"]').fill(browserTestPassword);
      await dialog.locator('button[type="submit"]').click();
      await expectStatus(page, new RegExp(`^Deleted "${secondName}"\\.$`));
      expect(await dialog.isVisible()).toBe(false);
      await expect.poll(() => rows.count()).toBe(count - 2);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("the account's sections are tabs: the arrow keys move between them, and only an administrator has Administration", async () => {
    const demo = app();
    const member = await createBrowserTestUser(demo.auth, "tab-user");
    const { context, page, errors } = await openPage(newContext, demo);
    try {
      await signInWithPassword(page, member.username, browserTestPassword);
      await expectStatus(page, /^Signed in\.$/);
      const tabs = page.locator('#account-tabs [role="tab"]:not([hidden])');
      expect((await tabs.allTextContents()).map((text) => text.trim())).toEqual([
        "Profile",
        "Security",
        "Sessions",
        "Organizations",
      ]);
      expect(await page.locator("#profile").isVisible()).toBe(true);
      await page.focus("#tab-profile");
      await page.keyboard.press("ArrowDown");
      expect(await page.locator("#tab-security").getAttribute("aria-selected")).toBe("true");
      expect([await page.locator("#security").isVisible(), await page.locator("#profile").isVisible()]).toEqual([true, false]);
      await page.keyboard.press("End");
      expect(await page.locator("#tab-organizations").getAttribute("aria-selected")).toBe("true");
      await page.keyboard.press("ArrowRight");
      expect(await page.locator("#tab-profile").getAttribute("aria-selected")).toBe("true");
      expect(await page.locator("#account-name").textContent()).toBe("tab-user");
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
