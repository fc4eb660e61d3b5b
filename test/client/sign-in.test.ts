import { memoryTokenStore } from "@portcullis/client";
import type { AuthConfig } from "@portcullis/core";
import { afterEach, describe, expect, it } from "vitest";
import { base32Decode, createTestUser, nextTotpCode, testPassword } from "../fixtures/auth.js";
import {
  type ClientTestServer,
  clientTargets,
  envelopeOf,
  recordEvents,
  rejection,
  startClientServer,
} from "./client-servers.js";

const running: ClientTestServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()));
});

describe.each(clientTargets)("@portcullis/client against %s", (_name, start, statusMode) => {
  const serve = async (overrides?: Partial<AuthConfig>) => {
    const server = await startClientServer(start, statusMode, overrides);
    running.push(server);
    return server;
  };
  /** The status an envelope with this code travels with in this mode. */
  const statusOf = (status: number) => (statusMode === "always-200" ? 200 : status);

  it("signs in with a password, reads me, sends the bearer to the app's route, refreshes and logs out, revoking the session", async () => {
    const harness = await serve();
    const alice = await createTestUser(harness.auth, "alice", ["admin"]);
    const store = memoryTokenStore();
    const client = harness.client({ store });
    const events = recordEvents(client);

    const step = await client.login({ username: "alice", password: testPassword });
    expect(step).toEqual({
      status: "authenticated",
      offerPasskey: true,
      user: {
        id: alice.id,
        username: "alice",
        roles: ["admin"],
        totpEnabled: false,
        email: null,
        emailVerified: false,
        createdAt: alice.createdAt,
      },
    });
    expect(events).toEqual([["signedIn", { user: step.status === "authenticated" ? step.user : null }]]);
    expect(await client.me()).toMatchObject({ id: alice.id, username: "alice" });
    expect(await client.currentUser()).toMatchObject({ username: "alice" });

    const things = await client.fetch("/api/v1/things");
    expect(things.status).toBe(200);
    expect(await envelopeOf(things)).toEqual({ code: 0, message: "OK", data: { userId: alice.id, roles: ["admin"] } });
    const deleted = await client.fetch(`${harness.baseUrl}/things/42`, { method: "DELETE" });
    expect((await envelopeOf(deleted)).data).toEqual({ deleted: "42", userId: alice.id });

    const before = await store.load();
    expect((await client.refresh()).username).toBe("alice");
    const after = await store.load();
    expect(after?.refreshToken).not.toBe(before?.refreshToken);
    expect(after?.accessToken).not.toBe(before?.accessToken);
    expect(harness.refreshesSent()).toBe(1);

    await client.logout();
    expect(events.at(-1)).toEqual(["signedOut", { reason: "logout" }]);
    expect(await store.load()).toBeNull();
    expect(await client.accessToken()).toBeNull();
    const notSignedIn = await rejection(client.me());
    expect(notSignedIn).toMatchObject({ kind: "not_signed_in", code: 40101, status: 0 });
    const unauthenticated = await client.fetch("/api/v1/things");
    expect(unauthenticated.status).toBe(statusOf(401));
    expect((await envelopeOf(unauthenticated)).code).toBe(40101);
    expect(harness.refreshesSent()).toBe(1);

    // The server revoked the session: its last refresh token no longer works.
    const revoked = await fetch(`${harness.baseUrl}/auth/refresh`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ refreshToken: after?.refreshToken }),
    });
    expect((await envelopeOf(revoked)).code).toBe(40101);
  });

  it("HTTP-6: a refusal is one AuthClientError with the code, the status of the mode, and no password in it", async () => {
    const harness = await serve();
    await createTestUser(harness.auth, "bob");
    const client = harness.client();
    const secret = "not bob's password at all";
    const refused = await rejection(client.login({ username: "bob", password: secret }));
    expect(refused).toMatchObject({ name: "AuthClientError", kind: "server", code: 40100, status: statusOf(401) });
    expect(`${refused.message} ${refused.stack} ${JSON.stringify(refused)}`).not.toContain(secret);
    expect(await client.currentUser()).toBeNull();

    const malformed = await rejection(client.login({ username: "bob", password: 42 as unknown as string }));
    expect(malformed).toMatchObject({ code: 40002, status: statusOf(400) });
  });

  it("RL-5: a client that signed in before gets in with the right password after a stranger's failures lock the account", async () => {
    const harness = await serve({ throttle: { account: [{ limit: 3, window: "15m" }], ip: [{ limit: 1000, window: "15m" }] } });
    await createTestUser(harness.auth, "dana");
    const owner = harness.client();
    await owner.login({ username: "dana", password: testPassword });
    await owner.logout();
    const stranger = harness.client();
    for (let attempt = 0; attempt < 4; attempt += 1)
      await rejection(stranger.login({ username: "dana", password: `guess ${attempt}` }));
    expect((await rejection(stranger.login({ username: "dana", password: testPassword }))).code).toBe(42900);
    expect(await owner.login({ username: "dana", password: testPassword })).toMatchObject({ status: "authenticated" });
  });

  it("42900 carries retryAfter from Retry-After in both modes", async () => {
    const harness = await serve({ throttle: { account: [{ limit: 1, window: "15m" }], ip: [{ limit: 1000, window: "15m" }] } });
    await createTestUser(harness.auth, "carol");
    const client = harness.client();
    expect((await rejection(client.login({ username: "carol", password: "wrong password one" }))).code).toBe(40100);
    const throttled = await rejection(client.login({ username: "carol", password: "wrong password two" }));
    expect(throttled).toMatchObject({ kind: "server", code: 42900, status: statusOf(429) });
    expect(throttled.retryAfter).toBeGreaterThan(0);
  });

  it("an answer that is not the envelope is invalid_response with its status; no answer at all is a network error", async () => {
    const harness = await serve();
    const elsewhere = harness.client({ baseUrl: `${harness.server.baseUrl}/not-portcullis` });
    const invalid = await rejection(elsewhere.login({ username: "dave", password: testPassword }));
    expect(invalid).toMatchObject({ kind: "invalid_response", code: null, status: 404 });

    const closed = await startClientServer(start, statusMode);
    await closed.close();
    const unreachable = await rejection(closed.client().login({ username: "dave", password: testPassword }));
    expect(unreachable).toMatchObject({ kind: "network", code: null, status: 0 });
    expect(unreachable.message).toBe("The server could not be reached");
    expect(unreachable.cause).toBeInstanceOf(Error);
  });

  it("TOTP-5/SE-2: enrols TOTP (setup, enable, still signed in), then signs in with a code or a recovery code, regenerates the codes and disables", async () => {
    const harness = await serve();
    await createTestUser(harness.auth, "erin");
    const client = harness.client();
    const events = recordEvents(client);
    await client.login({ username: "erin", password: testPassword });

    const setup = await client.totp.setup();
    expect(setup.otpauthUrl).toMatch(/^otpauth:\/\/totp\//);
    const secret = base32Decode(setup.secret);
    const { recoveryCodes } = await client.totp.enable({ code: await nextTotpCode(harness, secret) });
    expect(recoveryCodes).toHaveLength(10);
    expect(events.map(([name]) => name)).toEqual(["signedIn"]);
    expect(await client.me()).toMatchObject({ username: "erin", totpEnabled: true });
    await client.logout();

    const step = await client.login({ username: "erin", password: testPassword });
    expect(step.status).toBe("totp_required");
    if (step.status !== "totp_required") return;
    expect(Object.keys(step).sort()).toEqual(["status", "useRecoveryCode", "verifyTotp"]);
    expect(await client.currentUser()).toBeNull();
    const wrong = await rejection(step.verifyTotp("000000"));
    expect(wrong).toMatchObject({ code: 40103, status: statusOf(401) });
    const signedIn = await step.verifyTotp(await nextTotpCode(harness, secret));
    expect(signedIn).toMatchObject({ status: "authenticated", user: { username: "erin", totpEnabled: true } });

    const regenerated = await client.totp.regenerateRecoveryCodes({ code: await nextTotpCode(harness, secret) });
    expect(regenerated.recoveryCodes).toHaveLength(10);
    expect(regenerated.recoveryCodes).not.toEqual(recoveryCodes);
    expect((await client.me()).username).toBe("erin");
    await client.logout();

    const again = await client.login({ username: "erin", password: testPassword });
    if (again.status !== "totp_required") throw new Error("expected the second factor");
    expect((await rejection(again.useRecoveryCode(recoveryCodes[0] as string))).code).toBe(40103);
    expect((await again.useRecoveryCode(regenerated.recoveryCodes[0] as string)).user.username).toBe("erin");

    await client.totp.disable({ password: testPassword });
    expect(await client.me()).toMatchObject({ username: "erin", totpEnabled: false });
    await client.logout();
    expect(await client.login({ username: "erin", password: testPassword })).toMatchObject({ status: "authenticated" });
  });

  it("TOTP-5: after an older sign-in the server asks for the password: reauthenticate is asked once per call and the call succeeds", async () => {
    const harness = await serve();
    await createTestUser(harness.auth, "frank");
    for (const declining of [harness.client(), harness.client({ reauthenticate: () => null })]) {
      await declining.login({ username: "frank", password: testPassword });
      harness.clock.advance(6 * 60_000);
      expect(await rejection(declining.totp.setup())).toMatchObject({ code: 40001 });
    }

    const asked: unknown[] = [];
    const client = harness.client({
      reauthenticate: (request) => {
        asked.push(request);
        return { password: testPassword, totpCode: "ignored for TOTP setup" };
      },
    });
    await client.login({ username: "frank", password: testPassword });
    harness.clock.advance(6 * 60_000);
    const setup = await client.totp.setup();
    expect(asked).toEqual([{ operation: "totp.setup", accepts: ["password"] }]);
    await client.totp.enable({ code: await nextTotpCode(harness, base32Decode(setup.secret)) });
    expect(asked).toEqual([
      { operation: "totp.setup", accepts: ["password"] },
      { operation: "totp.enable", accepts: ["password"] },
    ]);
    expect(await client.currentUser()).toMatchObject({ username: "frank", totpEnabled: true });
    expect((await client.login({ username: "frank", password: testPassword })).status).toBe("totp_required");
  });
});
