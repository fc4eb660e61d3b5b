// Runs docs/examples/client-quick-start.ts, which README.md and docs/client.md show, against the
// Express quick start of the same folder on loopback: a password sign-in, one with TOTP, and the
// refresh the client makes on its own when the access token has expired.
import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createUser, signOutEverywhere } from "@portcullis/core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTotpUser, totpCodeAt } from "../../test/fixtures/auth.js";
import { createClient, signInAndLoad } from "./client-quick-start.js";
import { createApp } from "./express-quick-start.js";

const saved = { signing: process.env.AUTH_SIGNING_SECRET, encryption: process.env.AUTH_ENCRYPTION_KEY };
let server: Server;
let baseUrl: string;
let app: Awaited<ReturnType<typeof createApp>>;

beforeAll(async () => {
  process.env.AUTH_SIGNING_SECRET = randomBytes(32).toString("base64url");
  process.env.AUTH_ENCRYPTION_KEY = randomBytes(32).toString("base64url");
  app = await createApp("memory://");
  server = app.app.listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
}); // PGlite starts in seconds on a busy machine

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await app.storage.close();
  for (const [name, value] of Object.entries({ AUTH_SIGNING_SECRET: saved.signing, AUTH_ENCRYPTION_KEY: saved.encryption })) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe("docs/examples/client-quick-start.ts", () => {
  it("signs in with a password and loads the app's route with the bearer token", async () => {
    const password = randomBytes(16).toString("base64url");
    const user = await createUser(app.auth, { username: "carol", password, roles: ["user"] });
    const askForCode = vi.fn(async () => "000000");
    const client = createClient(() => {}, baseUrl);
    expect(await signInAndLoad(client, { username: "carol", password }, askForCode)).toEqual({ owner: user.id });
    expect(askForCode).not.toHaveBeenCalled();
  });

  it("asks for the TOTP code when the account has the second factor on", async () => {
    const totpUser = await createTotpUser(app.auth, "dave");
    const client = createClient(() => {}, baseUrl);
    const loaded = await signInAndLoad(client, { username: "dave", password: totpUser.password }, () =>
      totpCodeAt(app.auth, totpUser.secret),
    );
    expect(loaded).toEqual({ owner: totpUser.id });
    expect((await client.currentUser())?.totpEnabled).toBe(true);
  });

  it("shows the sign-in form when the server ends the session, and after a logout", async () => {
    const password = randomBytes(16).toString("base64url");
    const user = await createUser(app.auth, { username: "erin", password, roles: ["user"] });
    const showSignInForm = vi.fn();
    const client = createClient(showSignInForm, baseUrl);
    await signInAndLoad(client, { username: "erin", password }, async () => "");
    await signOutEverywhere(app.auth, { userId: user.id });
    await expect(client.fetch("/api/v1/things")).rejects.toMatchObject({ name: "AuthClientError", code: 40101 });
    expect(showSignInForm).toHaveBeenCalledWith("Your session has ended.");
    await signInAndLoad(client, { username: "erin", password }, async () => "");
    await client.logout();
    expect(showSignInForm).toHaveBeenLastCalledWith("");
  });
});
