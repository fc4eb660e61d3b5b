import type { PasskeyCeremonies } from "@portcullis/client";
import type { SoftwareAuthenticator } from "@portcullis/testing";
import { describe, expect, it } from "vitest";
import { base32Decode, createTestUser, makeTestAuthenticator, testPassword, totpCodeAt } from "../fixtures/auth.js";
import { clientTargets, recordEvents, rejection, servedPerTest } from "./client-servers.js";

/** The ceremonies of a software authenticator, as a browser's would run them. */
function softwareCeremonies(authenticator: SoftwareAuthenticator): PasskeyCeremonies {
  return {
    startAuthentication: async ({ optionsJSON }) => authenticator.authenticate(optionsJSON),
    startRegistration: async ({ optionsJSON }) => authenticator.register(optionsJSON),
  };
}

describe.each(clientTargets)("the client's enrolment step (40105) against %s", (_name, start, statusMode) => {
  const serve = servedPerTest(start, statusMode);

  it("STUP-4, ASVS 6.3.3: login answers enrolment_required; enrolling TOTP signs in with the recovery codes, and the next login asks for the code", async () => {
    const harness = await serve({ secondFactor: { required: { roles: ["ops"] } } });
    await createTestUser(harness.auth, "ops-alice", ["ops"]);
    const client = harness.client();
    const events = recordEvents(client);
    const step = await client.login({ username: "ops-alice", password: testPassword });
    if (step.status !== "enrolment_required") throw new Error(step.status);
    expect(await client.accessToken()).toBeNull();
    const secret = base32Decode((await step.setupTotp()).secret);
    const near = await Promise.all([-1, 0, 1].map((offset) => totpCodeAt(harness.auth, secret, offset)));
    const wrong = ["000000", "111111", "222222", "333333"].find((code) => !near.includes(code)) as string;
    expect((await rejection(step.enableTotp(wrong))).code).toBe(40103);
    const signedIn = await step.enableTotp(near[2] as string);
    expect(signedIn).toMatchObject({ status: "authenticated", user: { username: "ops-alice", totpEnabled: true } });
    expect(signedIn.recoveryCodes).toHaveLength(10);
    expect(events).toEqual([["signedIn", { user: signedIn.user }]]);
    expect(await client.me()).toMatchObject({ totpEnabled: true });
    expect((await client.login({ username: "ops-alice", password: testPassword })).status).toBe("totp_required");
  });

  it("STUP-4, ASVS 6.3.3: registerPasskey runs the ceremony and signs in; the passkey then signs in by itself", async () => {
    const harness = await serve({ secondFactor: { required: "always" } });
    await createTestUser(harness.auth, "erin");
    const authenticator = makeTestAuthenticator();
    const client = harness.client({ passkeyCeremonies: softwareCeremonies(authenticator) });
    const step = await client.login({ username: "erin", password: testPassword });
    if (step.status !== "enrolment_required") throw new Error(step.status);
    const signedIn = await step.registerPasskey({ label: "Laptop" });
    expect(signedIn).toMatchObject({ status: "authenticated", passkey: { label: "Laptop" } });
    await client.logout();
    expect((await rejection(client.login({ username: "erin", password: testPassword }))).code).toBe(40300);
    expect((await client.passkeys.signIn()).status).toBe("authenticated");
  });
});
