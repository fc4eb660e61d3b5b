// Passkey autofill (issue 42 item 2) end to end in Chromium with the CDP virtual authenticator,
// against the Express demo: the username field (autocomplete="username webauthn") offers passkeys
// through a conditional request that the page begins on load and after sign-out.
//
// How Chromium's virtual authenticator meets conditional mediation (found by trying, Chromium 156):
// with the WebAuthn domain's UI off it answers a conditional request at once with its discoverable
// credential for the site, without the autofill dropdown and without the field being focused; with
// no credential for the site it refuses at once (NotAllowedError); with the simulated touch off the
// request waits, and turning the touch on does not answer a request already waiting. So the test
// turns the touch off to keep a request waiting, and on before the page load whose request is to
// sign in; nothing has to be picked from a dropdown.
import type { MemoryStorage } from "@portcullis/core";
import type { Page, Request } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ExpressDemo, startExpressDemo } from "./apps.js";
import {
  type Envelope,
  describeInBrowser,
  expectStatus,
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

const beginPath = "/api/v1/auth/public-key/login/begin";
const finishPath = "/api/v1/auth/public-key/login/finish";

function accessTokenClaims(accessToken: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(accessToken.split(".")[1] as string, "base64url").toString("utf8"));
}

/** The page's next login/begin request. */
const nextBegin = (page: Page): Promise<Request> => page.waitForRequest((request) => request.url().endsWith(beginPath));

describeInBrowser("passkey autofill in Chromium, on the Express demo", () => {
  let app: ExpressDemo;

  beforeAll(async () => {
    app = await startExpressDemo();
  });

  afterAll(async () => {
    await app?.close();
  });

  /** The challenges the demo's storage holds now. */
  const challenges = () => (app.auth.storage as MemoryStorage).sizes().challenges;

  /** Opens the page with autofill, signs in with the password and registers a passkey: the page, signed in. */
  async function withRegisteredPasskey() {
    const opened = await openPage(newContext, app, undefined, { autofill: true });
    const { page } = opened;
    expect(await page.locator('#sign-in-form input[name="username"]').getAttribute("autocomplete")).toBe("username webauthn");
    await signInWithPassword(page, app.username, app.password);
    await expectStatus(page, /^Signed in\.$/);
    await registerPasskey(page, "Autofill laptop");
    await expectStatus(page, /^Passkey "Autofill laptop" added\./);
    return opened;
  }

  it("PL-11: a passkey picked in the username field's autofill signs in after a reload (amr hwk, user); the begin was a conditional one and stored nothing", async () => {
    const { context, page, authenticator, errors } = await withRegisteredPasskey();
    try {
      const [credential] = await authenticator.credentials();
      // With the touch off, the request the page begins after the sign-out waits.
      await authenticator.setPresence(false);
      const afterSignOut = nextBegin(page);
      await page.click("#logout");
      await expectStatus(page, /^Signed out\.$/);
      expect((await afterSignOut).postDataJSON()).toEqual({ mediation: "conditional" });

      const stored = challenges();
      await authenticator.setPresence(true);
      const begin = nextBegin(page);
      const finish = page.waitForResponse((response) => response.url().endsWith(finishPath));
      await page.reload();
      expect((await begin).postDataJSON()).toEqual({ mediation: "conditional" });
      const finished = (await (await finish).json()) as Envelope;
      expect(finished.code).toBe(0);
      expect(JSON.parse((await finish).request().postData() ?? "{}")).toMatchObject({ id: credential?.id });
      await expectStatus(page, /^Signed in with a passkey\.$/);
      expect(await shownSection(page)).toBe("account");
      expect(await shownUserField(page, "username")).toBe(app.username);
      expect(accessTokenClaims(finished.data.accessToken)).toMatchObject({ sub: app.userId, amr: ["hwk", "user", "mfa"] });
      // The page's session is that one: GET /auth/me answers with its token.
      await reloadMyDetails(page);
      await expectStatus(page, /^GET \/auth\/me answered\.$/);
      expect(challenges()).toBe(stored);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("PL-11: an autofill aborted by a password sign-in, or replaced by a reload, leaves nothing stored and sends no finish", async () => {
    const { context, page, authenticator, errors } = await withRegisteredPasskey();
    try {
      await authenticator.setPresence(false);
      const finishes: string[] = [];
      page.on("request", (request) => {
        if (request.url().endsWith(finishPath)) finishes.push(request.url());
      });
      const afterSignOut = nextBegin(page);
      await page.click("#logout");
      await expectStatus(page, /^Signed out\.$/);
      await afterSignOut;
      const stored = challenges();

      // Replaced: each load begins a new ceremony and drops the last.
      for (let load = 0; load < 3; load += 1) {
        const begin = nextBegin(page);
        await page.reload();
        expect((await begin).postDataJSON()).toEqual({ mediation: "conditional" });
      }
      expect(challenges()).toBe(stored);

      // Aborted: the user signs in with the password while the autofill waits.
      await signInWithPassword(page, app.username, app.password);
      await expectStatus(page, /^Signed in\.$/);
      expect(await shownSection(page)).toBe("account");
      expect(challenges()).toBe(stored);
      expect(finishes).toEqual([]);

      // The page goes on offering passkeys after the next sign-out, and one picked now signs in.
      await authenticator.setPresence(true);
      const finish = page.waitForResponse((response) => response.url().endsWith(finishPath));
      await page.click("#logout");
      expect(((await (await finish).json()) as Envelope).code).toBe(0);
      await expectStatus(page, /^Signed in with a passkey\.$/);
      expect(finishes).toHaveLength(1);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
  it("the passkey button still signs in while the autofill waits: the autofill's request is stopped, one finish is sent, the button's", async () => {
    const { context, page, authenticator, errors } = await withRegisteredPasskey();
    try {
      await authenticator.setPresence(false);
      const finishes: unknown[] = [];
      page.on("request", (request) => {
        if (request.url().endsWith(finishPath)) finishes.push(request.headers()["x-webauthn-ceremony"]);
      });
      const afterSignOut = nextBegin(page);
      await page.click("#logout");
      await expectStatus(page, /^Signed out\.$/);
      await afterSignOut;
      await authenticator.setPresence(true);
      const signedIn = await signInWithPasskey(page);
      expect(signedIn.code).toBe(0);
      await expectStatus(page, /^Signed in with a passkey\.$/);
      expect(finishes).toHaveLength(1);
      expect(finishes[0]).not.toMatch(/^cm\./);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
