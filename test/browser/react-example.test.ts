// The React example (examples/react) in Chromium: @portcullis/react's hooks driving a real page
// against the example's Hono server. A user with TOTP signs in through the 40102 step, ends another
// of its sessions, registers a passkey with the virtual authenticator, and a route behind
// `maxAge: "1m"` answers 40104 once the sign-in is older: the step-up dialog shows, the password and
// a code complete it, and the waiting request is answered.
import { login, verifyTotp } from "@portcullis/core";
import { expect, it } from "vitest";
import { createTotpUser, totpCodeAt } from "../fixtures/auth.js";
import { startReactExample } from "./apps.js";
import { addVirtualAuthenticator, collectPageErrors, platformAuthenticator } from "./chromium.js";
import { describeInBrowser, useChromium, usePageApp } from "./page.js";

const thirtySeconds = 30_000;

describeInBrowser("the React example in Chromium", () => {
  const newContext = useChromium();
  const app = usePageApp(startReactExample);

  it("signs in with the TOTP step, ends another session, registers a passkey and steps up on a 40104", async () => {
    const { auth, advanceClock } = app();
    const user = await createTotpUser(auth, "react-user");
    // Another session of the same user, for the page to list and end.
    advanceClock(thirtySeconds);
    const first = await login(auth, { username: user.username, password: user.password });
    if (first.status !== "totp_required") throw new Error(`expected the TOTP step, got ${first.status}`);
    await verifyTotp(auth, { tempToken: first.tempToken, code: await totpCodeAt(auth, user.secret) });

    const context = await newContext();
    const page = await context.newPage();
    const errors = collectPageErrors(page);
    const authenticator = await addVirtualAuthenticator(context, page, platformAuthenticator);
    try {
      await page.goto(`${app().origin}/`);
      await page.fill('#sign-in-form input[name="username"]', user.username);
      await page.fill('#sign-in-form input[name="password"]', user.password);
      await page.click('#sign-in-form button[type="submit"]');

      // The 40102 step: a wrong code keeps it, with the error; the right one signs in.
      await page.fill('#totp-form input[name="code"]', "000000");
      await page.click('#totp-form button[type="submit"]');
      await expect.poll(() => page.locator("#totp-form [role=alert]").textContent()).toContain("40103");
      advanceClock(thirtySeconds);
      await page.fill('#totp-form input[name="code"]', await totpCodeAt(auth, user.secret));
      await page.click('#totp-form button[type="submit"]');
      await page.locator("#signed-in-as", { hasText: user.username }).waitFor();

      // The sessions: this one and the other; ending the other leaves this one.
      const sessions = page.locator("#sessions li");
      await expect.poll(() => sessions.count()).toBe(2);
      await page.click('#sessions li[data-current="false"] button');
      await expect.poll(() => sessions.count()).toBe(1);
      expect(await sessions.first().getAttribute("data-current")).toBe("true");

      // A passkey, registered with the virtual authenticator: the list shows it.
      await page.fill('#passkey-register-form input[name="label"]', "Virtual key");
      await page.click('#passkey-register-form button[type="submit"]');
      await page.locator("#passkeys li", { hasText: "Virtual key" }).waitFor();
      expect(await authenticator.credentials()).toHaveLength(1);

      // The sign-in is now older than the route's maxAge: its 40104 waits for the step-up dialog.
      advanceClock(2 * thirtySeconds + 1000);
      const payouts = page.waitForResponse((response) => response.url().endsWith("/api/v1/payouts"));
      await page.click("#payouts button");
      expect(await (await payouts).json()).toMatchObject({ code: 40104, data: { required: { maxAge: 60 } } });
      await page.locator("#step-up", { hasText: "within the last 60 seconds" }).waitFor();
      await page.fill('#step-up input[name="password"]', user.password);
      await page.fill('#step-up input[name="totpCode"]', await totpCodeAt(auth, user.secret));
      await page.click('#step-up button[type="submit"]');
      await page.locator("#payouts-result", { hasText: "Payouts total 1200" }).waitFor();
      expect(await page.locator("#step-up").count()).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
