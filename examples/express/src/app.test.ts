import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createUser } from "@portcullis/core";
import * as OTPAuth from "otpauth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DemoApp, createDemoApp, randomSecret } from "./app.js";

interface Envelope {
  code: number;
  message: string;
  // biome-ignore lint/suspicious/noExplicitAny: the test reads whatever data a route returns
  data?: any;
}

let demo: DemoApp;
let server: Server;
let base: string;

beforeAll(async () => {
  demo = await createDemoApp();
  server = demo.app.listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function call(
  method: string,
  path: string,
  body?: unknown,
  token?: string,
): Promise<{ status: number; envelope: Envelope }> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, envelope: (await response.json()) as Envelope };
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
    expect(html).toContain('src="app.js"');

    const script = await fetch(`${base}/app.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toMatch(/javascript/);
    const source = await script.text();
    expect(source).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|localStorage|sessionStorage|document\.cookie/);
  });

  it("serves @simplewebauthn/browser from node_modules: every module the page imports loads as JavaScript", async () => {
    const script = await (await fetch(`${base}/app.js`)).text();
    const vendored = [...script.matchAll(/from "\.\/(vendor\/[^"]+)"/g)].map((match) => new URL(match[1]!, `${base}/`).href);
    expect(vendored).toEqual([`${base}/vendor/simplewebauthn-browser/index.js`]);

    // Walks the module graph from index.js, as the browser does.
    const loaded = new Set<string>();
    const pending = [...vendored];
    while (pending.length > 0) {
      const url = pending.pop()!;
      if (loaded.has(url)) continue;
      loaded.add(url);
      const response = await fetch(url);
      expect(response.status, url).toBe(200);
      expect(response.headers.get("content-type"), url).toMatch(/^(text|application)\/javascript/);
      const source = await response.text();
      for (const match of source.matchAll(/(?:from|import)\s*['"](\.{1,2}\/[^'"]+)['"]/g))
        pending.push(new URL(match[1]!, url).href);
    }
    expect(loaded.size).toBeGreaterThan(10);
    expect(loaded).toContain(`${base}/vendor/simplewebauthn-browser/methods/startAuthentication.js`);

    // Only the package's JavaScript is served: not its package.json, types or source maps.
    for (const other of ["package.json", "index.d.ts", "index.d.ts.map", "", "nothing.js"]) {
      const response = await fetch(`${base}/vendor/simplewebauthn-browser/${other}`);
      expect(response.status, other).toBe(404);
      expect(((await response.json()) as Envelope).code).toBe(40400);
    }
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

    const enable = await call("POST", "/api/v1/auth/2fa/enable", { code: totpCode(secret) }, firstToken);
    expect(enable.envelope.code).toBe(0);
    expect(enable.envelope.data.enabled).toBe(true);
    const recoveryCodes: string[] = enable.envelope.data.recoveryCodes;
    expect(recoveryCodes).toHaveLength(10);
    for (const code of recoveryCodes) expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$/);

    // Enabling raised the token version: the token from before is refused.
    const stale = await call("GET", "/api/v1/auth/me", undefined, firstToken);
    expect(stale.envelope.code).toBe(40101);

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
