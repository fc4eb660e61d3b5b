// Organizations through @portcullis/client against real servers (Express 5, Hono and Fastify, both
// status modes): creating one and switching to it (the new access token stored, the app's org route
// letting it through, a refresh keeping it), an invitation by email accepted by the invited user's
// client, a removed member's client refreshed to a token without the organization, and the
// refusals of a switch to an organization whose rules the session does not meet.
import { tokenFromLink } from "@portcullis/client";
import { type EmailMessage, createUser, emailDeliveriesSettled } from "@portcullis/core";
import { describe, expect, it } from "vitest";
import { testPassword } from "../fixtures/auth.js";
import { orgAdminRoute } from "../http/servers.js";
import { clientTargets, envelopeOf, recordEvents, rejection, servedPerTest, signedInClient, statusIn } from "./client-servers.js";

const invitationUrl = "https://app.example.com/accept-invitation";

describe.each(clientTargets)("client.orgs against %s", (_name, start, statusMode) => {
  const serve = servedPerTest(start, statusMode);

  it("OR-7: switch stores the new access token (active() reads it, the org route lets it through), a refresh keeps the organization, switch(null) drops it", async () => {
    const harness = await serve({ organizations: { enabled: true } });
    const { client } = await signedInClient(harness, "alice");
    const events = recordEvents(client);
    const organization = await client.orgs.create({ name: "Acme" });
    expect(organization).toMatchObject({ name: "Acme", slug: "acme", roles: ["owner"] });
    expect((await client.fetch(`${harness.server.baseUrl}${orgAdminRoute}`)).status).toBe(statusIn(statusMode, 403));

    expect(await client.orgs.switch(organization.id)).toEqual({ id: organization.id, roles: ["owner"] });
    expect(await client.orgs.active()).toEqual({ id: organization.id, roles: ["owner"] });
    expect((await client.orgs.list()).map(({ id, active }) => [id, active])).toEqual([[organization.id, true]]);
    const allowed = await client.fetch(`${harness.server.baseUrl}${orgAdminRoute}`);
    expect((await envelopeOf(allowed)).data).toMatchObject({ org: { id: organization.id, roles: ["owner"] } });

    await client.refresh();
    expect(await client.orgs.active()).toEqual({ id: organization.id, roles: ["owner"] });
    expect(harness.refreshesSent()).toBe(1);

    expect(await client.orgs.switch(null)).toBeNull();
    expect(await client.orgs.active()).toBeNull();
    expect((await client.fetch(`${harness.server.baseUrl}${orgAdminRoute}`)).status).toBe(statusIn(statusMode, 403));
    expect(harness.refreshesSent()).toBe(1);
    expect(events).toEqual([]);
  });

  it("OR-5, OR-8: an invitation's link accepted by the invited user's client; removed, that client's token is refused and refreshed to one without the organization", async () => {
    const outbox: EmailMessage[] = [];
    const harness = await serve({
      organizations: { enabled: true },
      email: {
        send: (message) => void outbox.push(message),
        resetUrl: "https://app.example.com/reset",
        verifyUrl: "https://app.example.com/verify",
        invitationUrl,
      },
    });
    const { client: alice } = await signedInClient(harness, "alice");
    const bob = await createUser(harness.auth, {
      username: "bob",
      password: testPassword,
      email: "bob@example.com",
      emailVerified: true,
    });
    const bobClient = harness.client();
    await bobClient.login({ username: "bob", password: testPassword });
    const bobEvents = recordEvents(bobClient);

    const organization = await alice.orgs.create({ name: "Acme" });
    const invitation = await alice.orgs.invitations.create(organization.id, { email: "bob@example.com" });
    expect(invitation).toMatchObject({ email: "bob@example.com", roles: ["member"] });
    expect((await alice.orgs.invitations.list(organization.id)).map(({ id }) => id)).toEqual([invitation.id]);
    await emailDeliveriesSettled(harness.auth);
    const message = outbox.find((sent) => sent.kind === "organization_invitation" && sent.to === "bob@example.com");
    const link = new URL(message?.link as string);
    expect(link.origin + link.pathname).toBe(invitationUrl);
    const token = tokenFromLink(link.hash) as string;

    expect(await bobClient.orgs.invitations.accept(token)).toMatchObject({ id: organization.id, roles: ["member"] });
    expect(await bobClient.orgs.switch(organization.id)).toEqual({ id: organization.id, roles: ["member"] });
    const { members } = await alice.orgs.members.list(organization.id);
    const byName = members.map(({ username, roles }) => `${username}: ${roles.join(", ")}`).sort();
    expect(byName).toEqual(["alice: owner", "bob: member"]);
    expect(await alice.orgs.invitations.list(organization.id)).toEqual([]);

    await alice.orgs.members.remove(organization.id, bob.id);
    const refreshesBefore = harness.refreshesSent();
    expect(await bobClient.orgs.list()).toEqual([]);
    expect(harness.refreshesSent()).toBe(refreshesBefore + 1);
    expect(await bobClient.orgs.active()).toBeNull();
    expect(await rejection(bobClient.orgs.invitations.accept(token))).toMatchObject({ code: 40101 });
    expect(await bobClient.currentUser()).toMatchObject({ username: "bob" });
    expect(bobEvents).toEqual([]);
  });

  it("OR-9, OR-10: a switch the session's sign-in does not allow is 40300 with data.signInMethods; one needing a second factor the user lacks is 40104 with enrolmentRequired, no event; the token stays", async () => {
    const harness = await serve({ organizations: { enabled: true } });
    const { client } = await signedInClient(harness, "alice");
    const stepUps: unknown[] = [];
    client.on("stepUpRequired", (step) => {
      stepUps.push(step.required);
      step.cancel();
    });
    const passkeysOnly = await client.orgs.create({ name: "Passkeys Only" });
    await client.orgs.update(passkeysOnly.id, { rules: { signInMethods: ["passkey"] } });
    const refused = await rejection(client.orgs.switch(passkeysOnly.id));
    expect(refused).toMatchObject({ code: 40300, status: statusIn(statusMode, 403), data: { signInMethods: ["passkey"] } });

    const strong = await client.orgs.create({ name: "Strong" });
    await client.orgs.update(strong.id, { rules: { requireSecondFactor: true } });
    const before = await client.accessToken();
    const stepUp = await rejection(client.orgs.switch(strong.id));
    expect(stepUp).toMatchObject({ code: 40104, data: { required: { amr: ["mfa"] }, enrolmentRequired: true } });
    expect(stepUps).toEqual([]);
    expect(await client.accessToken()).toBe(before);
    expect(await client.orgs.active()).toBeNull();
  });
});
