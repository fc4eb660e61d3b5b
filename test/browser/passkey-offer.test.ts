// Issue 42 item 3 in a real browser: Debian's Chromium with the CDP WebAuthn virtual authenticator
// (a platform authenticator that verifies the user), against the Express demo. After a password
// sign-in the page offers a passkey (PL-13); accepting registers one with no password asked again,
// and the next sign-in offers nothing; "Not now" keeps the offer away from that account (PL-14).
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ExpressDemo, browserTestPassword, createBrowserTestUser, startExpressDemo } from "./apps.js";
import {
  type Envelope,
  describeInBrowser,
  expectStatus,
  openPage,
  shownSection,
  signInWithPassword,
  useChromium,
} from "./page.js";

const newContext = useChromium();

/** Signs in with the password through the page and answers the envelope of `POST /auth/login`. */
async function signIn(page: import("playwright-core").Page, username: string): Promise<Envelope> {
  const answer = page.waitForResponse((response) => response.url().endsWith("/api/v1/auth/login"));
  await signInWithPassword(page, username, browserTestPassword);
  const envelope = (await (await answer).json()) as Envelope;
  await expectStatus(page, /^Signed in\.$/);
  return envelope;
}

describeInBrowser("the passkey offer after sign-in, in Chromium on the Express demo", () => {
  let app: ExpressDemo;

  beforeAll(async () => {
    app = await startExpressDemo();
  });

  afterAll(async () => {
    await app?.close();
  });

  it("PL-13: a password sign-in offers a passkey; accepting makes one with no password asked, and the next sign-in offers none", async () => {
    const user = await createBrowserTestUser(app.auth, "offer-accepter");
    const { context, page, authenticator, errors } = await openPage(newContext, app);
    try {
      const first = await signIn(page, user.username);
      expect(first.data.offerPasskey).toBe(true);
      const offer = page.locator("#passkey-offer");
      expect(await offer.isVisible()).toBe(true);

      const registration = page.waitForRequest((request) => request.url().endsWith("/api/v1/auth/public-key/register/begin"));
      await page.click("#passkey-offer-accept");
      await expectStatus(page, /^Passkey created: next time, sign in with it\./);
      expect((await registration).postDataJSON()).toEqual({ label: "This device" });
      expect(await offer.isHidden()).toBe(true);
      expect(await shownSection(page)).toBe("account");
      const [credential] = await authenticator.credentials();
      expect(credential).toMatchObject({ isResidentCredential: true, userHandle: user.id });
      expect(await app.auth.storage.passkeys.findById(credential!.id)).toMatchObject({ userId: user.id, label: "This device" });

      await page.click("#logout");
      await expectStatus(page, /^Signed out\.$/);
      const second = await signIn(page, user.username);
      expect(second.data.offerPasskey).toBe(false);
      expect(await offer.isHidden()).toBe(true);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("PL-14: 'Not now' keeps the offer away from that account at its next sign-ins, and not from another's", async () => {
    const decliner = await createBrowserTestUser(app.auth, "offer-decliner");
    const other = await createBrowserTestUser(app.auth, "offer-other");
    const { context, page, errors } = await openPage(newContext, app);
    try {
      await signIn(page, decliner.username);
      const offer = page.locator("#passkey-offer");
      expect(await offer.isVisible()).toBe(true);
      const declined = page.waitForResponse((response) => response.url().endsWith("/api/v1/auth/public-key/offer/decline"));
      await page.click("#passkey-offer-decline");
      expect(((await (await declined).json()) as Envelope).code).toBe(0);
      await expectStatus(page, /^No passkey for now\./);
      expect(await offer.isHidden()).toBe(true);
      expect(await app.auth.storage.passkeys.listByUser(decliner.id)).toEqual([]);

      await page.click("#logout");
      await expectStatus(page, /^Signed out\.$/);
      expect((await signIn(page, decliner.username)).data.offerPasskey).toBe(false);
      expect(await offer.isHidden()).toBe(true);

      await page.click("#logout");
      await expectStatus(page, /^Signed out\.$/);
      expect((await signIn(page, other.username)).data.offerPasskey).toBe(true);
      expect(await offer.isVisible()).toBe(true);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
