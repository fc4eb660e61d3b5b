import { readFile } from "node:fs/promises";
import type { Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { createUser } from "@portcullis/core";
import { driveAuthorization } from "@portcullis/testing";
import * as OTPAuth from "otpauth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiReferenceContentSecurityPolicy } from "./api-reference.js";
import {
  type DemoApp,
  type DemoProvider,
  contentSecurityPolicy,
  createDemoApp,
  oauthCallbackUri,
  randomSecret,
  startDemoProvider,
} from "./app.js";
import { type DemoMailServer, startDemoMailServer } from "./mail.js";
import { messageHtmlContentSecurityPolicy } from "./outbox.js";
import { bundlePageClient } from "./page-client-bundle.js";

interface Envelope {
  code: number;
  message: string;
  // biome-ignore lint/suspicious/noExplicitAny: the test reads whatever data a route returns
  data?: any;
}

/** The origin the page would be opened at; the tests reach the same server at 127.0.0.1. */
const origin = "http://localhost:3000";
let local: DemoProvider;
let mail: DemoMailServer;
let demo: DemoApp;
let server: Server;
let base: string;

/** Serves `app` on an ephemeral port of 127.0.0.1 and returns its base URL. */
async function listen(app: DemoApp["app"]): Promise<{ server: Server; base: string }> {
  const listening = app.listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => listening.once("listening", resolve));
  return { server: listening, base: `http://127.0.0.1:${(listening.address() as AddressInfo).port}` };
}

/** Stops a server started by {@link listen}. */
function close(stopping: Server): Promise<void> {
  return new Promise<void>((resolve) => stopping.close(() => resolve()));
}

beforeAll(async () => {
  // As server.ts wires it: the demo with its local OpenID provider and its local SMTP server.
  local = await startDemoProvider({ origin });
  mail = await startDemoMailServer();
  demo = await createDemoApp({ origin, oauthProvider: local.registration, mailServer: mail });
  ({ server, base } = await listen(demo.app));
});

afterAll(async () => {
  await close(server);
  await local.provider.close();
  await mail.close();
});

async function call(
  method: string,
  path: string,
  body?: unknown,
  token?: string,
  extraHeaders: Record<string, string> = {},
): Promise<{ status: number; envelope: Envelope; headers: Headers }> {
  const headers: Record<string, string> = { ...extraHeaders };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, envelope: (await response.json()) as Envelope, headers: response.headers };
}

/** The TOTP code `offsetSteps` 30-second steps from now. A code's step is accepted once (TOTP-4), so later sign-ins use the next step. */
function totpCode(secret: string, offsetSteps = 0): string {
  return new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate({
    timestamp: Date.now() + offsetSteps * 30_000,
  });
}

describe("the Express demo", () => {
  it("serves the sign-in page and its script", async () => {
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
    const html = await page.text();
    expect(html).toContain('<form id="sign-in-form">');
    expect(html).toContain('src="/app.js"');

    const script = await fetch(`${base}/app.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toMatch(/javascript/);
    const source = await script.text();
    expect(source).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|localStorage|sessionStorage|document\.cookie/);
  });

  it("serves the page's client, bundled: the one module app.js imports, which imports nothing itself", async () => {
    const script = await (await fetch(`${base}/app.js`)).text();
    const imported = [...script.matchAll(/from "([^"]+)"/g)].map((match) => match[1]);
    expect(imported).toEqual(["./vendor/portcullis-client.js"]);

    const response = await fetch(new URL("./vendor/portcullis-client.js", `${base}/app.js`));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect(response.headers.get("content-security-policy")).toBe(contentSecurityPolicy);
    const client = await response.text();
    expect(client).toBe((await bundlePageClient()).javascript);
    expect(client).not.toMatch(/\bimport\s*[("'{*]|\bimport\s+\w+\s+from/);
  });

  it("has passkeys on, for the origin http://localhost:<port>", async () => {
    const config = await call("GET", "/api/v1/auth/public-key/config");
    expect(config.envelope).toEqual({ code: 0, message: "OK", data: { enabled: true } });

    const { username, password } = demo.demoUser;
    const signedIn = await call("POST", "/api/v1/auth/login", { username, password });
    const token: string = signedIn.envelope.data.accessToken;
    const begun = await call("POST", "/api/v1/auth/public-key/register/begin", { label: "Laptop" }, token);
    expect(begun.envelope.code).toBe(0);
    expect(begun.envelope.data.options).toMatchObject({ rp: { id: "localhost", name: "Portcullis demo" } });
    const listed = await call("GET", "/api/v1/auth/public-key/credentials", undefined, token);
    expect(listed.envelope.data).toEqual([]);
  });

  it("walks sign-in, a protected route, TOTP enrolment and a two-factor sign-in", async () => {
    const { username, password } = demo.demoUser;

    const first = await call("POST", "/api/v1/auth/login", { username, password });
    expect(first.status).toBe(200);
    expect(first.envelope.code).toBe(0);
    const firstToken: string = first.envelope.data.accessToken;
    expect(first.envelope.data.user).toMatchObject({ username, totpEnabled: false });

    const things = await call("GET", "/api/v1/things", undefined, firstToken);
    expect(things.envelope.code).toBe(0);
    expect(things.envelope.data.length).toBeGreaterThan(0);
    const anonymous = await call("GET", "/api/v1/things");
    expect(anonymous.status).toBe(401);
    expect(anonymous.envelope.code).toBe(40101);

    const setup = await call("POST", "/api/v1/auth/2fa/setup", {}, firstToken);
    expect(setup.envelope.code).toBe(0);
    const { secret, otpauthUrl } = setup.envelope.data as { secret: string; otpauthUrl: string };
    expect(otpauthUrl).toMatch(/^otpauth:\/\/totp\//);

    const qr = await fetch(`${base}/demo/qr`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${firstToken}` },
      body: JSON.stringify({ text: otpauthUrl }),
    });
    expect(qr.status).toBe(200);
    expect(qr.headers.get("content-type")).toMatch(/^image\/svg\+xml/);
    expect(await qr.text()).toContain("<svg");

    const elsewhere = await call("POST", "/api/v1/auth/login", { username, password });
    const enable = await call("POST", "/api/v1/auth/2fa/enable", { code: totpCode(secret) }, firstToken);
    expect(enable.envelope.code).toBe(0);
    expect(enable.envelope.data.enabled).toBe(true);
    const recoveryCodes: string[] = enable.envelope.data.recoveryCodes;
    expect(recoveryCodes).toHaveLength(10);
    for (const code of recoveryCodes) expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){5}$/);

    // SE-2: enabling kept the session it was made from and ended the other one.
    const kept = await call("GET", "/api/v1/auth/me", undefined, firstToken);
    expect(kept.envelope.data).toMatchObject({ username, totpEnabled: true });
    const ended = await call("GET", "/api/v1/auth/me", undefined, elsewhere.envelope.data.accessToken);
    expect(ended.envelope.code).toBe(40101);

    const second = await call("POST", "/api/v1/auth/login", { username, password });
    expect(second.status).toBe(200);
    expect(second.envelope.code).toBe(40102);
    expect(second.envelope.data).toEqual({ tempToken: expect.any(String) });

    // The enabling code's step is spent; the next step's code is inside the ±1 window.
    const verified = await call("POST", "/api/v1/auth/2fa/verify", {
      tempToken: second.envelope.data.tempToken,
      code: totpCode(secret, 1),
    });
    expect(verified.envelope.code).toBe(0);
    const token: string = verified.envelope.data.accessToken;

    const me = await call("GET", "/api/v1/auth/me", undefined, token);
    expect(me.envelope.code).toBe(0);
    expect(me.envelope.data).toMatchObject({ username, totpEnabled: true });

    // A recovery code completes a sign-in once.
    const third = await call("POST", "/api/v1/auth/login", { username, password });
    expect(third.envelope.code).toBe(40102);
    const recovery = { tempToken: third.envelope.data.tempToken, recoveryCode: recoveryCodes[0] };
    expect((await call("POST", "/api/v1/auth/2fa/recovery", recovery)).envelope.code).toBe(0);
    const fourth = await call("POST", "/api/v1/auth/login", { username, password });
    const reused = await call("POST", "/api/v1/auth/2fa/recovery", { ...recovery, tempToken: fourth.envelope.data.tempToken });
    expect(reused.envelope.code).toBe(40103);

    // The demo user is an admin: the admin-only route answers.
    const deleted = await call("DELETE", "/api/v1/things/1", undefined, token);
    expect(deleted.envelope.code).toBe(0);
  });

  it("refuses the admin-only route to a user without the admin role", async () => {
    const password = randomSecret(18);
    await createUser(demo.auth, { username: "viewer", password });
    const signedIn = await call("POST", "/api/v1/auth/login", { username: "viewer", password });
    expect(signedIn.envelope.code).toBe(0);
    const token: string = signedIn.envelope.data.accessToken;

    expect((await call("GET", "/api/v1/things", undefined, token)).envelope.code).toBe(0);
    const denied = await call("DELETE", "/api/v1/things/2", undefined, token);
    expect(denied.status).toBe(403);
    expect(denied.envelope.code).toBe(40300);
  });

  it("draws QR codes only for a signed-in user and only for otpauth URLs", async () => {
    const anonymous = await fetch(`${base}/demo/qr`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: "otpauth://totp/x?secret=AAAA" }),
    });
    expect(anonymous.status).toBe(401);

    const viewerPassword = randomSecret(18);
    await createUser(demo.auth, { username: "qr-viewer", password: viewerPassword });
    const signedIn = await call("POST", "/api/v1/auth/login", { username: "qr-viewer", password: viewerPassword });
    const token: string = signedIn.envelope.data.accessToken;
    const other = await call("POST", "/demo/qr", { text: "https://example.com/" }, token);
    expect(other.status).toBe(400);
    expect(other.envelope.code).toBe(40002);

    const malformed = await fetch(`${base}/demo/qr`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: "{not json",
    });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as Envelope).code).toBe(40002);
  });
});

describe("the Express demo's account page", () => {
  /** Creates a user with a random password and signs it in `times` times, each with its own User-Agent. */
  async function signedInTwice(username: string, roles: string[] = []) {
    const password = randomSecret(18);
    await createUser(demo.auth, { username, password, roles });
    const tokens: string[] = [];
    for (const userAgent of ["first browser", "second browser"]) {
      const signedIn = await call("POST", "/api/v1/auth/login", { username, password }, undefined, { "user-agent": userAgent });
      tokens.push(signedIn.envelope.data.accessToken);
    }
    return { password, first: tokens[0] as string, second: tokens[1] as string };
  }

  it("the page has the account's parts: password, sessions, and the user list hidden until an administrator signs in", async () => {
    const html = await (await fetch(`${base}/`)).text();
    for (const part of [
      '<form id="password-form">',
      '<ul id="session-list">',
      '<form id="end-others-form">',
      '<section id="admin" class="panel" role="tabpanel" aria-labelledby="tab-administration" hidden>',
    ]) {
      expect(html).toContain(part);
    }
    expect(html).toMatch(/<button type="button" role="tab" id="tab-administration"[^>]* hidden>/);
    expect(html).not.toMatch(/signs you out everywhere|token version rises/);
  });

  it("SE-1, SE-2, SE-4: lists the user's sessions (this one current), ends the other, and a password change keeps this one", async () => {
    const { password, first, second } = await signedInTwice("account-user");
    const listed = await call("GET", "/api/v1/auth/sessions", undefined, second);
    expect(
      listed.envelope.data.map((session: { current: boolean; userAgent: string }) => [session.current, session.userAgent]),
    ).toEqual([
      [true, "second browser"],
      [false, "first browser"],
    ]);
    const otherId: string = listed.envelope.data[1].id;
    expect((await call("DELETE", `/api/v1/auth/sessions/${otherId}`, undefined, second)).envelope).toMatchObject({
      code: 0,
      data: { ended: true },
    });
    expect((await call("GET", "/api/v1/auth/me", undefined, first)).envelope.code).toBe(40101);

    const changed = await call(
      "POST",
      "/api/v1/auth/password",
      { currentPassword: password, newPassword: randomSecret(18) },
      second,
    );
    expect(changed.envelope).toMatchObject({ code: 0, data: { changed: true, sessionsEnded: 0 } });
    expect((await call("GET", "/api/v1/auth/sessions", undefined, second)).envelope.data).toHaveLength(1);
  });

  it("AD-1: the user list the page shows answers an administrator, and 40300 to a user without the role", async () => {
    const admin = await signedInTwice("account-admin", ["admin"]);
    const listed = await call("GET", "/api/v1/auth/admin/users?limit=100", undefined, admin.second);
    expect(listed.envelope.code).toBe(0);
    expect(listed.envelope.data.users.map((user: { username: string }) => user.username)).toContain("account-admin");

    const viewer = await signedInTwice("account-viewer");
    const denied = await call("GET", "/api/v1/auth/admin/users", undefined, viewer.second);
    expect({ status: denied.status, code: denied.envelope.code }).toEqual({ status: 403, code: 40300 });
  });
});

describe("the Express demo's email, through its own SMTP server and outbox", () => {
  /** A user with a password and a verified address, signed in: its access token. */
  async function userWithAddress(username: string) {
    const password = randomSecret(18);
    await createUser(demo.auth, { username, password, email: `${username}@example.test`, emailVerified: true });
    const signedIn = await call("POST", "/api/v1/auth/login", { username, password });
    return { password, token: signedIn.envelope.data.accessToken as string, email: `${username}@example.test` };
  }

  /** The token of a link in a message's text: what the page reads from `location.hash`. */
  function tokenIn(text: string, page: string): string {
    const link = new RegExp(`${origin}${page}#token=([\\w-]+)`).exec(text);
    if (!link) throw new Error(`no link to ${page} in ${JSON.stringify(text)}`);
    return link[1] as string;
  }

  it("the demo user holds a verified address, so a reset works out of the box", async () => {
    expect(demo.demoUser.email).toBe("demo@example.test");
    // The walk above turned TOTP on for the demo user: its record, not a sign-in, shows the address.
    const stored = await demo.auth.storage.users.findById(demo.demoUser.id);
    expect(stored).toMatchObject({ email: "demo@example.test", emailVerified: true });
  });

  it("PR-1, PR-2: Forgot password sends the link through nodemailer to the SMTP server; the outbox page shows it, newest first, its link clickable; the token resets the password", async () => {
    const user = await userWithAddress("mail-reset");
    const answered = await call("POST", "/api/v1/auth/password/forgot", { username: "mail-reset" });
    expect(answered.envelope).toEqual({ code: 0, message: "OK", data: {} });
    const message = await mail.waitFor((received) => received.to === user.email);
    expect(message).toMatchObject({
      from: "Portcullis demo <no-reply@example.test>",
      subject: "Reset your Portcullis demo password",
      envelopeTo: [user.email],
    });
    const token = tokenIn(message.text, "/reset-password");
    expect(message.html).toContain(`${origin}/reset-password#token=${token}`);

    await call("POST", "/api/v1/auth/password/forgot", { email: "nobody@example.test" });
    await call("POST", "/api/v1/auth/email", { email: "mail-reset-new@example.test" }, user.token);
    const newer = await mail.waitFor((received) => received.to === "mail-reset-new@example.test");

    const page = await fetch(`${base}/outbox`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("cache-control")).toBe("no-store");
    expect(page.headers.get("content-security-policy")).toBe(contentSecurityPolicy);
    const html = await page.text();
    expect(html).toContain("demo only");
    expect(html).toMatch(/A demo aid, not part of Portcullis/);
    expect(html).toContain(`<a href="${origin}/reset-password#token=${token}">`);
    expect(html).toContain('<span class="message-to">mail-reset@example.test</span>');
    expect(html.indexOf(`id="message-${newer.id}"`)).toBeLessThan(html.indexOf(`id="message-${message.id}"`));
    expect(html).not.toContain("nobody@example.test");
    expect(html).not.toMatch(/<script/);

    const htmlPart = await fetch(`${base}/outbox/${message.id}.html`);
    expect(htmlPart.status).toBe(200);
    expect(htmlPart.headers.get("content-security-policy")).toBe(messageHtmlContentSecurityPolicy);
    expect(await htmlPart.text()).toBe(message.html);
    expect((await fetch(`${base}/outbox/999999.html`)).status).toBe(404);

    const newPassword = randomSecret(18);
    const reset = await call("POST", "/api/v1/auth/password/reset", { token, newPassword });
    expect(reset.envelope).toEqual({ code: 0, message: "OK", data: { reset: true } });
    expect((await call("POST", "/api/v1/auth/login", { username: "mail-reset", password: newPassword })).envelope.code).toBe(0);
    expect((await call("POST", "/api/v1/auth/password/reset", { token, newPassword })).envelope.code).toBe(40101);
  });

  it("EV-1: a new address gets a link to the verify page; its token verifies the address", async () => {
    const user = await userWithAddress("mail-change");
    const changed = await call(
      "POST",
      "/api/v1/auth/email",
      { email: "mail-changed@example.test", password: user.password },
      user.token,
    );
    expect(changed.envelope).toEqual({ code: 0, message: "OK", data: { pending: true } });
    const link = await mail.waitFor((received) => received.to === "mail-changed@example.test");
    const token = tokenIn(link.text, "/verify-email");
    const notice = await mail.waitFor((received) => received.to === user.email);
    expect(notice.text).not.toContain("#token=");

    expect((await call("POST", "/api/v1/auth/email/verify", { token })).envelope.data).toEqual({ verified: true });
    const me = await call("GET", "/api/v1/auth/me", undefined, user.token);
    expect(me.envelope.data).toMatchObject({ email: "mail-changed@example.test", emailVerified: true });
  });

  it("OR-5: organizations are on; an invitation goes to the outbox with a link to /accept-invitation, whose token the invited user accepts", async () => {
    const owner = await userWithAddress("org-owner");
    const invited = await userWithAddress("org-invited");
    const created = await call("POST", "/api/v1/auth/orgs", { name: "Demo Org" }, owner.token);
    expect(created.envelope.data).toMatchObject({ name: "Demo Org", slug: "demo-org", roles: ["owner"] });
    const orgId = created.envelope.data.id as string;
    const invitation = await call("POST", `/api/v1/auth/orgs/${orgId}/invitations`, { email: invited.email }, owner.token);
    expect(invitation.envelope.data).toMatchObject({ email: invited.email, roles: ["member"] });
    const message = await mail.waitFor((received) => received.to === invited.email);
    const token = tokenIn(message.text, "/accept-invitation");

    const page = await fetch(`${base}/accept-invitation`);
    expect(page.headers.get("cache-control")).toBe("no-store");
    expect(await page.text()).toContain('id="accept-invitation-button"');

    const accepted = await call("POST", "/api/v1/auth/orgs/invitations/accept", { token }, invited.token);
    expect(accepted.envelope.data).toMatchObject({ id: orgId, roles: ["member"] });
    const members = await call("GET", `/api/v1/auth/orgs/${orgId}/members`, undefined, owner.token);
    expect(members.envelope.data.members.map((member: { username: string }) => member.username).sort()).toEqual([
      "org-invited",
      "org-owner",
    ]);
  });

  it("serves the page at the links' paths, never cached; the page has the forgot, reset and verify parts and the address form", async () => {
    const home = await (await fetch(`${base}/`)).text();
    for (const path of ["/reset-password", "/verify-email"]) {
      const page = await fetch(`${base}${path}`);
      expect(page.status).toBe(200);
      expect(page.headers.get("cache-control")).toBe("no-store");
      expect(page.headers.get("content-security-policy")).toBe(contentSecurityPolicy);
      expect(await page.text()).toBe(home);
    }
    for (const part of [
      'id="forgot-link"',
      '<form id="forgot-form">',
      '<form id="reset-form">',
      'id="verify-button"',
      '<form id="email-form">',
    ]) {
      expect(home).toContain(part);
    }
  });

  it("without a mail server, the email routes are 40400 and there is no outbox", async () => {
    const plain = await createDemoApp({ origin });
    const { server: plainServer, base: plainBase } = await listen(plain.app);
    try {
      const forgot = await fetch(`${plainBase}/api/v1/auth/password/forgot`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: "demo" }),
      });
      expect(((await forgot.json()) as Envelope).code).toBe(40400);
      expect((await fetch(`${plainBase}/outbox`)).status).toBe(404);
    } finally {
      await close(plainServer);
    }
  });
});

describe("the Express demo's sign-in with its local provider", () => {
  it("OA-1, OA-5: lists the local provider, sends the person to it, and signs them in from the callback page's query with the binding cookie, once", async () => {
    const listed = await call("GET", "/api/v1/auth/oauth/providers");
    expect(listed.envelope).toEqual({ code: 0, message: "OK", data: [{ name: "local", displayName: "the local provider" }] });

    const begun = await call("GET", "/api/v1/auth/oauth/local/authorize?redirect=%2F");
    expect(begun.envelope.code).toBe(0);
    const authUrl = new URL(begun.envelope.data.authUrl);
    expect(authUrl.origin).toBe(local.provider.issuer);
    expect(authUrl.searchParams.get("redirect_uri")).toBe(`${origin}/oauth/local/callback`);
    const cookie = (begun.headers.get("set-cookie") ?? "").split(";", 1)[0] as string;
    expect(cookie).toMatch(/^portcullis_oauth=/);

    const { username, password } = local.account;
    const callback = await driveAuthorization(authUrl, { username, password });
    expect(callback.origin + callback.pathname).toBe(oauthCallbackUri(origin));
    expect(callback.searchParams.get("iss")).toBe(local.provider.issuer);

    // The redirect URI is the sign-in page itself, under the same headers, never cached.
    const page = await fetch(`${base}${callback.pathname}${callback.search}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("cache-control")).toBe("no-store");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(await page.text()).toBe(await (await fetch(`${base}/`)).text());

    // What the page sends: the query unchanged, with the cookie.
    const relayed = `/api/v1/auth/oauth/local/callback${callback.search}`;
    const signedIn = await call("GET", relayed, undefined, undefined, { cookie });
    expect(signedIn.envelope.code).toBe(0);
    expect(signedIn.envelope.data).toMatchObject({ returnPath: "/", user: { username: "ada", totpEnabled: false } });
    const me = await call("GET", "/api/v1/auth/me", undefined, signedIn.envelope.data.accessToken);
    // An account the provider made has no password: the user object says so, and the page shows no password field.
    expect(me.envelope.data).toMatchObject({ id: signedIn.envelope.data.user.id, username: "ada", hasPassword: false });

    expect((await call("GET", relayed, undefined, undefined, { cookie })).envelope.code).toBe(40100);
  });

  it("without oauthProvider, lists no provider and serves no callback page", async () => {
    const plain = await createDemoApp({ origin });
    const { server: plainServer, base: plainBase } = await listen(plain.app);
    try {
      const listed = (await (await fetch(`${plainBase}/api/v1/auth/oauth/providers`)).json()) as Envelope;
      expect(listed).toEqual({ code: 0, message: "OK", data: [] });
      expect((await fetch(`${plainBase}/oauth/local/callback?code=x&state=y`)).status).toBe(404);
    } finally {
      await close(plainServer);
    }
  });
});

describe("the Express demo's API reference", () => {
  it("serves the viewer page, and Swagger UI's files from the installed swagger-ui-dist package, with no third-party address", async () => {
    const page = await fetch(`${base}/api-docs/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toBe(apiReferenceContentSecurityPolicy);
    expect(await page.text()).not.toMatch(/https?:\/\//);
    const swaggerUi = createRequire(import.meta.url)
      .resolve("swagger-ui-dist/package.json")
      .replace(/package\.json$/, "");
    for (const file of ["swagger-ui-bundle.js", "swagger-ui.css"]) {
      const served = await fetch(`${base}/api-docs/${file}`);
      expect(served.status).toBe(200);
      expect(Buffer.from(await served.arrayBuffer()).equals(await readFile(`${swaggerUi}${file}`))).toBe(true);
    }
    const viewer = await (await fetch(`${base}/api-docs/viewer.js`)).text();
    expect(viewer).toContain('url: "/api/v1/auth/openapi.json"');
    // Swagger UI's validator badge would send the document to a third party.
    expect(viewer).toContain("validatorUrl: null");
  });

  it("its document lists the routes of the features the demo turns on: passkeys, the provider's when it has one, no sign-up", async () => {
    const pathsOf = async (at: string) =>
      Object.keys(((await (await fetch(`${at}/api/v1/auth/openapi.json`)).json()) as { paths: object }).paths);
    const paths = await pathsOf(base);
    expect(paths).toContain("/api/v1/auth/login");
    expect(paths).toContain("/api/v1/auth/public-key/login/begin");
    expect(paths).toContain("/api/v1/auth/oauth/{provider}/authorize");
    expect(paths).not.toContain("/api/v1/auth/register");

    expect(paths).toContain("/api/v1/auth/password/forgot");
    const plain = await createDemoApp({ origin, mailServer: mail });
    const { server: plainServer, base: plainBase } = await listen(plain.app);
    try {
      const withoutProvider = await pathsOf(plainBase);
      expect(withoutProvider).not.toContain("/api/v1/auth/oauth/{provider}/authorize");
      expect(withoutProvider).not.toContain("/api/v1/auth/oauth/{provider}/callback");
      expect(paths.filter((path) => !withoutProvider.includes(path)).sort()).toEqual([
        "/api/v1/auth/oauth/{provider}/authorize",
        "/api/v1/auth/oauth/{provider}/callback",
        "/api/v1/auth/oauth/{provider}/reauthenticate",
      ]);
    } finally {
      await close(plainServer);
    }
  });

  it("the user object says whether the account has a password (the demo's publicUser hook)", async () => {
    const [username, password] = ["with-password", randomSecret(18)];
    await createUser(demo.auth, { username, password });
    const signedIn = await call("POST", "/api/v1/auth/login", { username, password });
    expect(signedIn.envelope.data.user).toMatchObject({ username, hasPassword: true });
    const me = await call("GET", "/api/v1/auth/me", undefined, signedIn.envelope.data.accessToken);
    expect(me.envelope.data).toMatchObject({ username, hasPassword: true });
  });
});
