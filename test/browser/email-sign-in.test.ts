// PL-2 in a real browser: Debian's Chromium, driven by playwright-core, two contexts (two
// browsers as far as cookies go) against one Express app with email sign-in by link. The first
// context asks for the link (the answer sets the binding cookie); the link opened in the second
// context, as a forwarded message would be, is refused, since the link carries only its token
// and the binding stays with the browser that asked. The same link in the first context signs in.
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Auth, type EmailMessage, createAuth, emailDeliveriesSettled, memoryStorage } from "@portcullis/core";
import { authRouter } from "@portcullis/express";
import express from "express";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createBrowserTestUser } from "./apps.js";
import { type Envelope, describeInBrowser, useChromium } from "./page.js";

const newContext = useChromium();

/** The front end's sign-in page: it reads the link's `#token=`, takes it out of the address bar, and finishes the sign-in. */
const signInPage = `<!doctype html><title>Sign in</title>
<pre id="result">waiting</pre>
<script>
const token = new URLSearchParams(location.hash.slice(1)).get("token");
history.replaceState(null, "", location.pathname);
if (token) fetch("/api/v1/auth/email-sign-in/finish", {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ token }),
}).then((response) => response.text()).then((text) => { document.getElementById("result").textContent = text; });
</script>`;

describeInBrowser("PL-2: an email sign-in link works only in the browser that asked for it", () => {
  let server: Server;
  let auth: Auth;
  let origin = "";
  const outbox: EmailMessage[] = [];

  beforeAll(async () => {
    const app = express();
    server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    auth = createAuth({
      storage: memoryStorage(),
      issuer: origin,
      audience: "browser-test",
      secrets: {
        signing: "email-sign-in-browser-signing-secret-0123456789",
        encryption: Buffer.alloc(32, 7).toString("base64url"),
      },
      email: {
        send: (message) => {
          outbox.push(message);
        },
        resetUrl: `${origin}/reset-password`,
        verifyUrl: `${origin}/verify-email`,
        signInUrl: `${origin}/email-sign-in`,
      },
      emailSignIn: { enabled: true, method: "link" },
    });
    app.get("/email-sign-in", (_req, res) => {
      res.type("html").send(signInPage);
    });
    app.use(authRouter(auth));
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
  });

  it("PL-2: a link opened in another browser context is refused (40001 with no binding, 40100 with a guessed one); in the asking context it signs in, once", async () => {
    const user = await createBrowserTestUser(auth, "linked");
    await auth.storage.users.setEmail(user.id, { email: "linked@example.com", verified: true }, auth.now());
    const asker = await newContext();
    const other = await newContext();
    try {
      const askerPage = await asker.newPage();
      await askerPage.goto(`${origin}/email-sign-in`);
      const begun = await askerPage.evaluate(async (): Promise<Envelope> => {
        const response = await fetch("/api/v1/auth/email-sign-in/begin", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ email: "linked@example.com" }),
        });
        return (await response.json()) as Envelope;
      });
      expect(begun.code).toBe(0);
      const cookies = await asker.cookies();
      expect(cookies.map(({ name, httpOnly, sameSite, path }) => ({ name, httpOnly, sameSite, path }))).toEqual([
        { name: "portcullis_email_sign_in", httpOnly: true, sameSite: "Lax", path: "/api/v1/auth/email-sign-in" },
      ]);
      await emailDeliveriesSettled(auth);
      const link = outbox.at(-1)?.link as string;
      expect(link).toMatch(new RegExp(`^${origin}/email-sign-in#token=[A-Za-z0-9_-]{43}$`));

      const otherPage = await other.newPage();
      await otherPage.goto(link);
      await expect.poll(() => otherPage.locator("#result").textContent()).not.toBe("waiting");
      const refused = JSON.parse((await otherPage.locator("#result").textContent()) as string) as Envelope;
      expect(refused.code).toBe(40001);
      expect(await other.cookies()).toEqual([]);

      // The forwarded link's receiver guessing a binding of their own fares no better.
      const guessed = await otherPage.evaluate(
        async (token): Promise<Envelope> => {
          const response = await fetch("/api/v1/auth/email-sign-in/finish", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ token, binding: "guessed-binding" }),
          });
          return (await response.json()) as Envelope;
        },
        new URL(link).hash.replace("#token=", ""),
      );
      expect(guessed.code).toBe(40100);

      // As a mail client would, the link opens in a new tab of the browser that asked.
      const linkPage = await asker.newPage();
      await linkPage.goto(link);
      await expect.poll(() => linkPage.locator("#result").textContent()).not.toBe("waiting");
      const signedIn = JSON.parse((await linkPage.locator("#result").textContent()) as string) as Envelope;
      expect(signedIn.code).toBe(0);
      expect(signedIn.data.user.id).toBe(user.id);
      expect(linkPage.url()).toBe(`${origin}/email-sign-in`);
      // The binding cookie is cleared with the success, and the link is spent.
      expect((await asker.cookies()).map(({ name }) => name)).not.toContain("portcullis_email_sign_in");
      const again = await askerPage.evaluate(
        async (token) => {
          const response = await fetch("/api/v1/auth/email-sign-in/finish", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ token }),
          });
          return (await response.json()) as Envelope;
        },
        new URL(link).hash.replace("#token=", ""),
      );
      expect(again.code).toBe(40001);
    } finally {
      await asker.close();
      await other.close();
    }
  });
});
