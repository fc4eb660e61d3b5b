// The account around the sign-in, through @portcullis/client against real servers: sign-up, the
// password change, and the user's sessions (list, end one, end the others, end all), on Express 5
// and Hono in both status modes.
import type { AuthClient, AuthClientOptions } from "@portcullis/client";
import { describe, expect, it } from "vitest";
import { createTestUser, testPassword } from "../fixtures/auth.js";
import {
  type ClientTestServer,
  clientTargets,
  reauthenticateWith,
  recordEvents,
  rejection,
  servedPerTest,
  signInGrowsOld,
  signedInClient,
  statusIn,
} from "./client-servers.js";

describe.each(clientTargets)("client.register against %s", (_name, start, statusMode) => {
  const serve = servedPerTest(start, statusMode);

  it("SU-1: signs up and in at once (the server's default roles, signedIn emitted), then the new account signs in with its password", async () => {
    const harness = await serve({ signUp: { enabled: true, defaultRoles: ["reader"] } });
    const client = harness.client();
    const events = recordEvents(client);
    const signedUp = await client.register({ username: "newcomer", password: testPassword });
    expect(signedUp).toEqual({
      status: "authenticated",
      offerPasskey: true,
      user: {
        id: expect.any(String),
        username: "newcomer",
        roles: ["reader"],
        totpEnabled: false,
        email: null,
        emailVerified: false,
        createdAt: harness.clock.now,
      },
    });
    if (signedUp.status !== "authenticated") throw new Error(signedUp.status);
    expect(events).toEqual([["signedIn", { user: signedUp.user }]]);
    expect(await client.me()).toEqual(signedUp.user);
    await client.logout();
    expect(await client.login({ username: "newcomer", password: testPassword })).toMatchObject({ status: "authenticated" });
  });

  it("SU-1: a taken username is 40900 and a refused password 42200, with nothing stored; sign-up off is 40400", async () => {
    const harness = await serve({ signUp: { enabled: true } });
    await createTestUser(harness.auth, "taken");
    const client = harness.client();
    expect(await rejection(client.register({ username: "taken", password: testPassword }))).toMatchObject({
      code: 40900,
      status: statusIn(statusMode, 409),
    });
    expect(await rejection(client.register({ username: "short", password: "short" }))).toMatchObject({
      code: 42200,
      status: statusIn(statusMode, 422),
    });
    expect(await client.currentUser()).toBeNull();

    const off = await serve();
    expect(await rejection(off.client().register({ username: "newcomer", password: testPassword }))).toMatchObject({
      code: 40400,
      status: statusIn(statusMode, 404),
    });
  });
});

describe.each(clientTargets)("client.account and client.sessions against %s", (_name, start, statusMode) => {
  const serve = servedPerTest(start, statusMode);

  /** Two clients of one user: `client`, signed in last, and `other`, signed in first. */
  async function twoDevices(harness: ClientTestServer, username: string, options: AuthClientOptions = {}) {
    const { client: other, user } = await signedInClient(harness, username);
    harness.clock.advance(1000);
    const client = harness.client(options);
    await client.login({ username, password: testPassword });
    return { client, other, user, otherEvents: recordEvents(other), events: recordEvents(client) };
  }

  /** Asserts that `client`'s session has ended on the server: its next call is 40101, its refresh refused, and it signed out. */
  async function expectEnded(client: AuthClient, events: ReturnType<typeof recordEvents>) {
    expect(await rejection(client.me())).toMatchObject({ code: 40101 });
    expect(events.at(-1)).toEqual(["signedOut", { reason: "session_ended" }]);
    expect(await client.accessToken()).toBeNull();
  }

  it("SE-4, SE-2: changePassword answers how many other sessions ended; this client goes on, the other's next call and refresh are refused", async () => {
    const harness = await serve();
    const { client, other, events, otherEvents } = await twoDevices(harness, "alice");
    const refreshes = harness.refreshesSent();
    expect(await client.account.changePassword({ currentPassword: testPassword, newPassword: "a new long passphrase" })).toEqual({
      sessionsEnded: 1,
    });
    expect((await client.me()).username).toBe("alice");
    expect(events).toEqual([]);
    await expectEnded(other, otherEvents);
    expect(harness.refreshesSent() - refreshes).toBe(1);
    await client.logout();
    expect(await client.login({ username: "alice", password: "a new long passphrase" })).toMatchObject({
      status: "authenticated",
    });
  });

  it("SE-4: a wrong current password is 40100 and a new one the policy refuses 42200; the password stays and the sessions go on", async () => {
    const harness = await serve();
    const { client, other } = await twoDevices(harness, "bob");
    expect(
      await rejection(client.account.changePassword({ currentPassword: "wrong", newPassword: "a new long passphrase" })),
    ).toMatchObject({
      code: 40100,
      status: statusIn(statusMode, 401),
    });
    expect(await rejection(client.account.changePassword({ currentPassword: testPassword, newPassword: "short" }))).toMatchObject(
      {
        code: 42200,
        status: statusIn(statusMode, 422),
      },
    );
    expect((await client.me()).username).toBe("bob");
    expect((await other.me()).username).toBe("bob");
  });

  it("SE-1: lists the user's sessions newest first, this one current, without tokens; ends the other, whose next call and refresh are refused (SE-3)", async () => {
    const harness = await serve();
    const { client, other, otherEvents } = await twoDevices(harness, "carol");
    const sessions = await client.sessions.list();
    expect(sessions).toEqual([
      expect.objectContaining({
        current: true,
        amr: ["pwd"],
        createdAt: harness.clock.now,
        address: expect.stringMatching(/\/(24|48)$/),
      }),
      expect.objectContaining({ current: false, amr: ["pwd"], createdAt: harness.clock.now - 1000 }),
    ]);
    expect(Object.keys(sessions[0] ?? {}).sort()).toEqual(
      ["address", "amr", "createdAt", "current", "expiresAt", "id", "impersonatedBy", "lastUsedAt", "userAgent"].sort(),
    );
    const tokens = await client.accessToken();
    expect(JSON.stringify(sessions)).not.toContain(tokens);

    await client.sessions.end(sessions[1]?.id as string);
    expect((await client.sessions.list()).map(({ id }) => id)).toEqual([sessions[0]?.id]);
    await expectEnded(other, otherEvents);
  });

  it("SE-1: another user's session id and an unknown one are the same 40400; ending this client's own session signs it out (logout)", async () => {
    const harness = await serve();
    const { client, events } = await twoDevices(harness, "dave");
    const { client: stranger } = await signedInClient(harness, "erin");
    const strangersSession = (await stranger.sessions.list())[0]?.id as string;
    for (const id of [strangersSession, "no-such-session"]) {
      expect(await rejection(client.sessions.end(id))).toMatchObject({ code: 40400, status: statusIn(statusMode, 404) });
    }
    expect((await stranger.me()).username).toBe("erin");

    const own = (await client.sessions.list()).find(({ current }) => current)?.id as string;
    await client.sessions.end(own);
    expect(events).toEqual([["signedOut", { reason: "logout" }]]);
    expect(await client.accessToken()).toBeNull();
  });

  it("SE-2: endOthers ends every other session and keeps this one; after an older sign-in it asks reauthenticate for the password once", async () => {
    const harness = await serve();
    const { reauthenticate, asked } = reauthenticateWith(() => ({ password: testPassword }));
    const { client, other, otherEvents } = await twoDevices(harness, "frank", { reauthenticate });
    const third = harness.client();
    await third.login({ username: "frank", password: testPassword });
    signInGrowsOld(harness);
    expect(await client.sessions.endOthers()).toEqual({ ended: 2 });
    expect(asked).toEqual([{ operation: "sessions.endOthers", accepts: ["password", "totpCode"] }]);
    expect(harness.countSent("POST", "/api/v1/auth/sessions/end-others")).toBe(2);
    expect((await client.me()).username).toBe("frank");
    await expectEnded(other, otherEvents);
    expect(await rejection(third.me())).toMatchObject({ code: 40101 });
  });

  it("endAll signs out everywhere: this client with logout_everywhere, the other at its next call", async () => {
    const harness = await serve();
    const { client, other, events, otherEvents } = await twoDevices(harness, "grace");
    expect(await client.sessions.endAll()).toEqual({ ended: 2 });
    expect(events).toEqual([["signedOut", { reason: "logout_everywhere" }]]);
    expect(await client.accessToken()).toBeNull();
    await expectEnded(other, otherEvents);
  });
});
