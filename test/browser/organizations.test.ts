// Organizations on the demo page in a real browser: Debian's Chromium, driven by playwright-core, on
// the Express demo with its own SMTP server. User A creates an organization and invites B's
// address; B, in a browser context of their own, opens the invitation from the outbox, signs in
// (a new page holds no tokens), accepts it with a click, and makes the organization active: the
// page and the access token's claims say so. A then sees B among the members.

import { createOrganization, createUser, updateOrganization } from "@portcullis/core";
import type { Locator, Page } from "playwright-core";
import { expect, it } from "vitest";
import { browserTestPassword, startExpressDemo } from "./apps.js";
import {
  describeInBrowser,
  expectError,
  expectStatus,
  openAccountSection,
  openPage,
  shownSection,
  signInWithPassword,
  useChromium,
  usePageApp,
} from "./page.js";

const newContext = useChromium();

/** What the page's client (`window.portcullis`) is, as far as these tests call it. */
interface PageGlobals {
  portcullis: {
    orgs: {
      active(): Promise<{ id: string; roles: string[] } | null>;
      list(): Promise<{ id: string; name: string; active: boolean }[]>;
    };
  };
}

/** Reloads the outbox page until `message` is on it: the server sends the invitation after its answer. */
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

/** The row of the organization named `name` in the page's list of the user's organizations. */
const organizationRow = (page: Page, name: string) =>
  page.locator("#organization-list > li").filter({ has: page.locator(".organization-name", { hasText: name }) });

describeInBrowser("organizations in Chromium, on the Express demo", () => {
  const app = usePageApp(startExpressDemo);

  it("OR-5, OR-7: A creates an organization and invites B; B accepts the link from the outbox, switches to it and has it active; A sees B among the members", async () => {
    const demo = app();
    const [addressA, addressB] = ["org-a@example.test", "org-b@example.test"];
    await createUser(demo.auth, { username: "org-a", password: browserTestPassword, email: addressA, emailVerified: true });
    await createUser(demo.auth, { username: "org-b", password: browserTestPassword, email: addressB, emailVerified: true });
    const a = await openPage(newContext, demo);
    const b = await openPage(newContext, demo);
    try {
      // A: signs in, creates the organization (its owner), and invites B's address.
      await signInWithPassword(a.page, "org-a", browserTestPassword);
      await expectStatus(a.page, /^Signed in\.$/);
      await openAccountSection(a.page, "organizations");
      await a.page.locator("#organizations").waitFor();
      expect(await a.page.locator("#organization-none").isVisible()).toBe(true);
      await a.page.fill('#organization-create-form input[name="name"]', "Acme Browser");
      await a.page.click('#organization-create-form button[type="submit"]');
      await expectStatus(a.page, /^Acme Browser is created; you are its owner\./);
      await organizationRow(a.page, "Acme Browser").waitFor();
      expect(await a.page.locator("#organization-manage-name").textContent()).toBe("Acme Browser");
      expect(await a.page.locator("#member-list .member-name").allTextContents()).toEqual(["org-a"]);
      await a.page.fill('#invite-form input[name="email"]', addressB);
      await a.page.click('#invite-form button[type="submit"]');
      await expectStatus(a.page, /^An invitation to Acme Browser is on its way to org-b@example\.test/);
      await a.page.locator("#invitation-list .invitation-email", { hasText: addressB }).waitFor();

      // B: the invitation in the outbox; its link opens the invitation's page, which asks for the sign-in first.
      await b.page.goto(`${demo.origin}/outbox`);
      const message = b.page.locator(".message").filter({ has: b.page.locator(".message-to", { hasText: addressB }) });
      await reloadUntilShown(b.page, message);
      await message.first().locator('.message-text a[href*="/accept-invitation#token="]').click();
      await b.page.waitForURL((url) => url.pathname === "/accept-invitation");
      await expectStatus(b.page, /^Sign in with the invited account to accept the invitation\.$/, "info");
      expect(await shownSection(b.page)).toBe("sign-in");
      // The page took the token out of the address bar (and so out of the history).
      expect(new URL(b.page.url()).hash).toBe("");
      await signInWithPassword(b.page, "org-b", browserTestPassword);
      await b.page.locator("#accept-invitation-button").waitFor();
      expect(await shownSection(b.page)).toBe("accept-invitation");
      await b.page.click("#accept-invitation-button");
      await expectStatus(b.page, /^You joined Acme Browser\./);
      expect(await shownSection(b.page)).toBe("account");
      expect(new URL(b.page.url()).pathname).toBe("/");

      // B: the organization is listed, not active yet; "Make active" switches the session to it.
      const rowB = organizationRow(b.page, "Acme Browser");
      await rowB.waitFor();
      expect(await rowB.locator(".organization-active").count()).toBe(0);
      expect(await b.page.evaluate(() => (globalThis as unknown as PageGlobals).portcullis.orgs.active())).toBeNull();
      await rowB.locator(".organization-switch").click();
      await expectStatus(b.page, /^Acme Browser is now your active organization\.$/);
      await rowB.locator(".organization-active", { hasText: "Active" }).waitFor();
      expect(await b.page.locator("#active-organization").textContent()).toBe("Your active organization: Acme Browser (member).");
      const { active, listed } = await b.page.evaluate(async () => {
        const { portcullis } = globalThis as unknown as PageGlobals;
        return { active: await portcullis.orgs.active(), listed: await portcullis.orgs.list() };
      });
      const acme = listed.find((organization) => organization.name === "Acme Browser");
      // The access token's claims carry it, and the server, checking them at this request, agrees.
      expect(active).toEqual({ id: acme?.id, roles: ["member"] });
      expect(acme?.active).toBe(true);

      // A: B is among the members now, and the invitation is no longer pending.
      await a.page.click("#reload-members");
      await expectStatus(a.page, /^The members of Acme Browser are up to date\.$/);
      expect((await a.page.locator("#member-list .member-name").allTextContents()).sort()).toEqual(["org-a", "org-b"]);
      await a.page.locator("#invitation-none").waitFor();
      expect(await a.page.locator("#invitation-list > li").count()).toBe(0);
      expect([a.errors, b.errors]).toEqual([[], []]);
    } finally {
      await a.context.close();
      await b.context.close();
    }
  });

  it("OR-9: an organization that requires a second factor is not made active for a session without one; the page says to turn two-factor sign-in on first", async () => {
    const demo = app();
    const user = await createUser(demo.auth, { username: "org-c", password: browserTestPassword });
    const strong = await createOrganization(demo.auth, { userId: user.id, name: "Strong Org" });
    await updateOrganization(demo.auth, { userId: user.id, orgId: strong.id, rules: { requireSecondFactor: true } });
    const { context, page, errors } = await openPage(newContext, demo);
    try {
      await signInWithPassword(page, "org-c", browserTestPassword);
      await expectStatus(page, /^Signed in\.$/);
      await openAccountSection(page, "organizations");
      const row = organizationRow(page, "Strong Org");
      await row.locator(".organization-switch").click();
      await expectError(page, "#organization-list", /^Strong Org requires a second factor: turn on two-step sign-in first/);
      expect(await row.locator(".organization-active").count()).toBe(0);
      expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).portcullis.orgs.active())).toBeNull();
      expect(await page.locator("#active-organization").textContent()).toBe(
        "No active organization: your access token carries none.",
      );
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
