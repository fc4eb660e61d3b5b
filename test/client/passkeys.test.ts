import type { PasskeyCeremonies } from "@portcullis/client";
import type { SoftwareAuthenticator } from "@portcullis/testing";
import { describe, expect, it } from "vitest";
import {
  createTestUser,
  createTotpUser,
  makeTestAuthenticator,
  nextTotpCode,
  removePassword,
  testPassword,
} from "../fixtures/auth.js";
import {
  clientTargets,
  reauthenticateWith,
  recordEvents,
  rejection,
  servedPerTest,
  signInGrowsOld,
  signedInClient,
  statusIn,
} from "./client-servers.js";

const publicKeyPaths = {
  registerBegin: "/api/v1/auth/public-key/register/begin",
  registerFinish: "/api/v1/auth/public-key/register/finish",
  loginBegin: "/api/v1/auth/public-key/login/begin",
  loginFinish: "/api/v1/auth/public-key/login/finish",
} as const;

/** The client's WebAuthn ceremonies, run by a software authenticator at the test origin instead of a browser prompt. */
function softwareCeremonies(authenticator: SoftwareAuthenticator): PasskeyCeremonies {
  return {
    startAuthentication: async ({ optionsJSON }) => authenticator.authenticate(optionsJSON),
    startRegistration: async ({ optionsJSON }) => authenticator.register(optionsJSON),
  };
}

/** Ceremonies whose prompt the user dismisses, as a browser reports it. */
const dismissedCeremonies: PasskeyCeremonies = {
  startAuthentication: async () => {
    throw new DOMException("The operation either timed out or was not allowed.", "NotAllowedError");
  },
  startRegistration: async () => {
    throw new DOMException("The operation either timed out or was not allowed.", "NotAllowedError");
  },
};

describe.each(clientTargets)("client.passkeys against %s", (_name, start, statusMode) => {
  const serve = servedPerTest(start, statusMode);

  it("WA-6/SE-2: registers right after a sign-in (staying signed in, the other session ended), signs in with it, discoverable or by username, lists, renames and revokes it", async () => {
    const harness = await serve();
    const authenticator = makeTestAuthenticator();
    const { client, user } = await signedInClient(harness, "alice", { passkeyCeremonies: softwareCeremonies(authenticator) });
    const other = harness.client();
    await other.login({ username: "alice", password: testPassword });
    const events = recordEvents(client);
    expect(await client.passkeys.enabled()).toBe(true);

    const passkey = await client.passkeys.register({ label: "Laptop" });
    expect(passkey).toEqual({
      id: authenticator.credentials()[0]?.id,
      label: "Laptop",
      transports: ["internal"],
      createdAt: harness.clock.now,
      lastUsedAt: null,
      backupEligible: false,
      backupState: false,
    });
    expect(events).toEqual([]);
    expect((await client.me()).id).toBe(user.id);
    expect(await rejection(other.me())).toMatchObject({ code: 40101 });

    expect(await client.passkeys.signIn()).toEqual({
      status: "authenticated",
      offerPasskey: false,
      user: {
        id: user.id,
        username: "alice",
        roles: ["user"],
        totpEnabled: false,
        email: null,
        emailVerified: false,
        createdAt: user.createdAt,
      },
    });
    expect(await client.passkeys.list()).toEqual([{ ...passkey, lastUsedAt: harness.clock.now }]);
    await client.passkeys.rename(passkey.id, "  Work laptop ");
    expect((await client.passkeys.list()).map(({ label }) => label)).toEqual(["Work laptop"]);
    await client.logout();

    harness.clock.advance(1000);
    expect(await client.passkeys.signIn({ username: "alice" })).toMatchObject({ status: "authenticated" });
    expect((await client.passkeys.list())[0]?.lastUsedAt).toBe(harness.clock.now);
    await client.passkeys.revoke(passkey.id);
    expect((await client.me()).id).toBe(user.id);
    expect(events.map(([name]) => name)).toEqual(["signedIn", "signedOut", "signedIn"]);
    expect(await rejection(client.passkeys.signIn())).toMatchObject({
      kind: "server",
      code: 40100,
      status: statusIn(statusMode, 401),
    });
    expect(harness.countSent("POST", publicKeyPaths.loginFinish)).toBe(3);
  });

  it("WA-6, STUP-3: after an older sign-in, register asks reauthenticate once (the password, and a TOTP code too when TOTP is on) and begins again once", async () => {
    const harness = await serve();
    const password = reauthenticateWith(() => ({ password: testPassword }));
    const { client } = await signedInClient(harness, "bob", {
      passkeyCeremonies: softwareCeremonies(makeTestAuthenticator()),
      reauthenticate: password.reauthenticate,
    });
    signInGrowsOld(harness);
    expect((await client.passkeys.register({ label: "Phone" })).label).toBe("Phone");
    expect(password.asked).toEqual([
      { operation: "passkeys.register", accepts: ["password", "totpCode"], reauthenticateWith: ["password"] },
    ]);
    expect(harness.countSent("POST", publicKeyPaths.registerBegin)).toBe(2);
    expect(harness.countSent("POST", publicKeyPaths.registerFinish)).toBe(1);

    const carol = await createTotpUser(harness.auth, "carol");
    const code = reauthenticateWith(async () => ({
      password: testPassword,
      totpCode: await nextTotpCode(harness, carol.secret),
    }));
    const totpClient = harness.client({
      passkeyCeremonies: softwareCeremonies(makeTestAuthenticator()),
      reauthenticate: code.reauthenticate,
    });
    const step = await totpClient.login({ username: "carol", password: testPassword });
    if (step.status !== "totp_required") throw new Error("expected the second factor");
    await step.verifyTotp(await nextTotpCode(harness, carol.secret));
    signInGrowsOld(harness);
    expect((await totpClient.passkeys.register({ label: "Key" })).label).toBe("Key");
    expect(code.asked).toHaveLength(1);
    expect(harness.countSent("POST", publicKeyPaths.registerBegin)).toBe(4);
  });

  it("a dismissed prompt is a passkey_ceremony error naming the DOMException, kept as cause; nothing is sent to finish and the session stays", async () => {
    const harness = await serve();
    const { client } = await signedInClient(harness, "dave", { passkeyCeremonies: dismissedCeremonies });
    const events = recordEvents(client);

    for (const dismissed of [() => client.passkeys.register({ label: "Laptop" }), () => client.passkeys.signIn()]) {
      const error = await rejection(dismissed());
      expect(error).toMatchObject({ kind: "passkey_ceremony", code: null, status: 0 });
      expect(error.message).toBe("The passkey ceremony did not complete (NotAllowedError)");
      expect(error.cause).toBeInstanceOf(DOMException);
    }
    expect(harness.countSent("POST", publicKeyPaths.registerBegin)).toBe(1);
    expect(harness.countSent("POST", publicKeyPaths.loginBegin)).toBe(1);
    expect(harness.countSent("POST", publicKeyPaths.registerFinish) + harness.countSent("POST", publicKeyPaths.loginFinish)).toBe(
      0,
    );
    expect(events).toEqual([]);
    expect((await client.me()).username).toBe("dave");
  });

  it("management refusals keep the session: an unknown passkey is 40400, a bad label 42200, the account's last way to sign in 40900", async () => {
    const harness = await serve();
    const authenticator = makeTestAuthenticator();
    const erin = await createTestUser(harness.auth, "erin");
    const client = harness.client({ passkeyCeremonies: softwareCeremonies(authenticator) });
    await client.login({ username: "erin", password: testPassword });
    const passkey = await client.passkeys.register({ label: "Only key" });
    await removePassword(harness.auth, erin.id);
    await client.passkeys.signIn();
    const events = recordEvents(client);

    expect(await rejection(client.passkeys.rename("AAAA", "Other"))).toMatchObject({
      code: 40400,
      status: statusIn(statusMode, 404),
    });
    expect(await rejection(client.passkeys.rename(passkey.id, "x".repeat(65)))).toMatchObject({
      code: 42200,
      status: statusIn(statusMode, 422),
    });
    expect(await rejection(client.passkeys.revoke(passkey.id))).toMatchObject({ code: 40900, status: statusIn(statusMode, 409) });
    expect(events).toEqual([]);
    expect(await client.passkeys.list()).toEqual([expect.objectContaining({ id: passkey.id, label: "Only key" })]);
  });

  it("PL-15: a passkey-only account whose sign-in grew old re-authenticates with its passkey when the app answers { passkey: true }, and registers a second one", async () => {
    const harness = await serve();
    const phone = makeTestAuthenticator();
    const laptop = makeTestAuthenticator();
    let registering = phone;
    const fay = await createTestUser(harness.auth, "fay");
    const asked: unknown[] = [];
    const client = harness.client({
      passkeyCeremonies: {
        startAuthentication: async ({ optionsJSON }) => phone.authenticate(optionsJSON),
        startRegistration: async ({ optionsJSON }) => registering.register(optionsJSON),
      },
      reauthenticate: (request) => {
        asked.push(request);
        return request.reauthenticateWith?.includes("password") ? { password: testPassword } : { passkey: true };
      },
    });
    await client.login({ username: "fay", password: testPassword });
    await client.passkeys.register({ label: "Phone" });
    await removePassword(harness.auth, fay.id);
    await client.passkeys.signIn();
    signInGrowsOld(harness);

    registering = laptop;
    const second = await client.passkeys.register({ label: "Laptop" });
    expect(asked).toEqual([
      { operation: "passkeys.register", accepts: ["password", "totpCode"], reauthenticateWith: ["passkey"] },
    ]);
    expect((await client.passkeys.list()).map((passkey) => passkey.label)).toEqual(["Phone", "Laptop"]);
    expect(second.label).toBe("Laptop");
    expect(await client.currentUser()).toMatchObject({ username: "fay" });
  });

  it("enabled() is false on a server without passkeys, where sign-in begins with 40400", async () => {
    const harness = await serve({ passkeys: undefined });
    const client = harness.client({ passkeyCeremonies: softwareCeremonies(makeTestAuthenticator()) });
    expect(await client.passkeys.enabled()).toBe(false);
    expect(await rejection(client.passkeys.signIn())).toMatchObject({ code: 40400 });
  });

  it("PL-15: registerWithPasskey makes an account whose way in is the passkey and signs in; after logout the passkey signs in, discoverable or by username; a taken name is 40900 before any prompt", async () => {
    const harness = await serve({ signUp: { enabled: true, defaultRoles: ["member"] } });
    const authenticator = makeTestAuthenticator();
    const client = harness.client({ passkeyCeremonies: softwareCeremonies(authenticator) });
    const events = recordEvents(client);
    const step = await client.registerWithPasskey({ username: "newcomer", email: "n@example.com", label: "Laptop" });
    expect(step).toMatchObject({
      status: "authenticated",
      user: { username: "newcomer", roles: ["member"], emailVerified: false },
    });
    const userId = (await client.me()).id;
    expect(await client.passkeys.list()).toEqual([expect.objectContaining({ label: "Laptop" })]);
    expect((await harness.auth.storage.users.findById(userId))?.passwordHash).toBeNull();
    await client.logout();
    for (const username of [undefined, "newcomer"]) {
      expect(await client.passkeys.signIn(username === undefined ? {} : { username })).toMatchObject({
        status: "authenticated",
        user: { id: userId },
      });
    }
    expect(events.map(([name]) => name)).toEqual(["signedIn", "signedOut", "signedIn", "signedIn"]);
    const again = harness.client({ passkeyCeremonies: softwareCeremonies(makeTestAuthenticator()) });
    expect(await rejection(again.registerWithPasskey({ username: "NEWCOMER" }))).toMatchObject({ code: 40900 });
    expect(authenticator.credentials()).toHaveLength(1);
  });
});
