// Service accounts and impersonation through @portcullis/client against real servers (issue 41
// items 3/4): an administrator manages an account and its secret (SA-1, SA-2), and begins an
// impersonated session without losing their own, which a client of its own ends (IMP-1, IMP-4); on
// Express 5 and Hono in both status modes.
import { createAuthClient, memoryTokenStore } from "@portcullis/client";
import { describe, expect, it } from "vitest";
import { createTestUser, testPassword } from "../fixtures/auth.js";
import { clientTargets, recordEvents, recordingFetch, rejection, servedPerTest, serverEvents } from "./client-servers.js";

describe.each(clientTargets)("client.serviceAccounts and client.impersonation against %s", (_name, start, statusMode) => {
  const serve = servedPerTest(start, statusMode);

  async function administrator(harness: Awaited<ReturnType<typeof serve>>, roles: string[]) {
    await createTestUser(harness.auth, "root", roles);
    const client = harness.client();
    expect((await client.login({ username: "root", password: testPassword })).status).toBe("authenticated");
    return client;
  }

  it("SA-1, SA-2: an administrator makes an account, adds a secret shown once, changes, lists and deletes it", async () => {
    const harness = await serve({ serviceAccounts: { enabled: true } });
    const client = await administrator(harness, ["admin"]);
    const account = await client.serviceAccounts.create({ name: "billing", scopes: ["invoices:read"] });
    expect(account).toMatchObject({ clientId: account.id, name: "billing", scopes: ["invoices:read"], disabled: false });
    const secret = await client.serviceAccounts.addSecret(account.id, { expiresIn: "90d" });
    expect(secret.clientSecret).toMatch(/^pcs_live_/);
    const details = await client.serviceAccounts.get(account.id);
    expect(details.credentials).toEqual([expect.objectContaining({ id: secret.id, kind: "secret" })]);
    expect(JSON.stringify(details)).not.toContain(secret.clientSecret);
    expect(await client.serviceAccounts.update(account.id, { disabled: true })).toMatchObject({ disabled: true });
    expect((await client.serviceAccounts.list()).map(({ id }) => id)).toEqual([account.id]);
    await client.serviceAccounts.removeCredential(account.id, secret.id);
    await client.serviceAccounts.remove(account.id);
    expect(await rejection(client.serviceAccounts.get(account.id))).toMatchObject({ code: 40400 });
  });

  it("IMP-1, IMP-4: start answers the user's impersonated tokens and keeps the administrator's session; a client holding them ends it", async () => {
    const harness = await serve({ impersonation: { enabled: true } });
    const admin = await administrator(harness, ["admin", "impersonator"]);
    const user = await createTestUser(harness.auth, "ada");
    const adminEvents = recordEvents(admin);
    const ended = serverEvents(harness.auth, "impersonation.ended");
    const tokens = await admin.impersonation.start(user.id);
    expect(tokens.user.id).toBe(user.id);
    expect(tokens.impersonation.by).toBe((await admin.currentUser())?.id);
    expect((await admin.me()).username).toBe("root");
    expect(adminEvents).toEqual([]);

    const store = memoryTokenStore();
    await store.save({ ...tokens, expiresAt: harness.clock.now + tokens.expiresIn * 1000 });
    const asUser = createAuthClient({ baseUrl: harness.baseUrl, store, now: () => harness.clock.now, fetch: recordingFetch([]) });
    expect((await asUser.me()).username).toBe("ada");
    const events = recordEvents(asUser);
    await asUser.impersonation.end();
    expect(events).toEqual([["signedOut", { reason: "logout" }]]);
    expect(await asUser.currentUser()).toBeNull();
    expect(ended).toEqual([expect.objectContaining({ userId: user.id })]);
    expect((await admin.me()).username).toBe("root");
    // The administrator's own session is no impersonated one: its end is 40300, and nothing is forgotten.
    expect(await rejection(admin.impersonation.end())).toMatchObject({ code: 40300 });
    expect(await admin.currentUser()).not.toBeNull();
  });
});
