// Sign-up with a passkey end to end in Chromium (PL-15): on the demo page with sign-up on, a
// person types a username and an address, the virtual authenticator creates a discoverable passkey
// under the random user handle the server chose, and the page is signed in to an account without a
// password; after a sign-out the passkey signs in again with no username typed. Without sign-up the
// page does not offer it.
import { expect, it } from "vitest";
import { startExpressDemo } from "./apps.js";
import {
  type Envelope,
  describeInBrowser,
  expectStatus,
  openAccountSection,
  openPage,
  shownSection,
  shownUserField,
  signInWithPasskey,
  useChromium,
  usePageApp,
} from "./page.js";

const newContext = useChromium();

describeInBrowser("sign-up with a passkey in Chromium, on the Express demo with sign-up on", () => {
  const app = usePageApp(() => startExpressDemo({ signUp: true }));

  it("PL-15: signs up with a passkey, no password, signs out and signs in with the passkey, no username typed", async () => {
    const { context, page, authenticator, errors } = await openPage(newContext, app());
    try {
      await page.locator('#passkey-sign-up[data-offered="true"]').waitFor();
      const form = page.locator("#passkey-sign-up-form");
      await form.locator('input[name="username"]').fill("newcomer");
      await form.locator('input[name="email"]').fill("newcomer@example.test");
      const finish = page.waitForResponse((response) => response.url().endsWith("/api/v1/auth/register/public-key/finish"));
      await form.locator('button[type="submit"]').click();
      const signedUp = (await (await finish).json()) as Envelope;
      expect(signedUp.code).toBe(0);
      await expectStatus(page, /^Signed up with a passkey: it is how you sign in\.$/);
      expect(await shownSection(page)).toBe("account");
      expect(await shownUserField(page, "username")).toBe("newcomer");

      const userId: string = signedUp.data.user.id;
      const stored = await app().auth.storage.users.findById(userId);
      expect(stored).toMatchObject({
        username: "newcomer",
        passwordHash: null,
        email: "newcomer@example.test",
        emailVerified: false,
      });
      const [held] = await authenticator.rawCredentials();
      expect(held).toMatchObject({ isResidentCredential: true, rpId: "localhost" });
      const credentialId = Buffer.from(held!.credentialId, "base64").toString("base64url");
      const passkey = await app().auth.storage.passkeys.findById(credentialId);
      expect(passkey).toMatchObject({ userId, label: "Passkey" });
      expect(Buffer.from(held!.userHandle ?? "", "base64").toString("base64url")).toBe(passkey?.userHandle);
      expect(Buffer.from(passkey?.userHandle ?? "", "base64url")).toHaveLength(32);
      await openAccountSection(page, "security");
      await page.locator(`#passkey-list li[data-passkey-id="${credentialId}"]`).waitFor();

      await page.click("#logout");
      await expectStatus(page, /^Signed out\.$/);
      const signedIn = await signInWithPasskey(page);
      expect(signedIn.code).toBe(0);
      expect(signedIn.data.user.id).toBe(userId);
      await expectStatus(page, /^Signed in with a passkey\.$/);
      expect(await shownUserField(page, "username")).toBe("newcomer");
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describeInBrowser("sign-up with a passkey in Chromium, on the Express demo as its tests start it (sign-up off)", () => {
  const app = usePageApp(() => startExpressDemo());

  it("PL-17: the page does not offer it", async () => {
    const { context, page, errors } = await openPage(newContext, app());
    try {
      await page.locator('#passkey-sign-up[data-offered="false"]').waitFor({ state: "attached" });
      expect(await page.locator("#passkey-sign-up").isHidden()).toBe(true);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
