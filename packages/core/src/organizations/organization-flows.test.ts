import { describe, expect, it } from "vitest";
import { addUserWithEmail, makeEmailAuth, sentTo, tokenOf } from "../email/email.test-support.js";
import { addUser, goodPassword, makeAuth, outcome, signIn } from "../flows/fixtures.test-support.js";
import { logout } from "../flows/logout.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { reauthenticate } from "../step-up/reauthenticate-session.js";
import type { AuthMethod } from "../storage/types.js";
import { acceptInvitation, inviteMember, resendInvitation, revokeInvitation } from "./invitations.js";
import { createOrganization, updateOrganization } from "./manage-organization.js";
import { changeMemberRoles, listMembers, removeMember } from "./members.js";
import { organizationRequirementOf } from "./organization-requirement.js";
import { addMember, claimsOf, invitationUrl, ownedOrganization } from "./organizations.test-support.js";
import { signInMethodOf } from "./session-organization.js";
import { switchOrganization } from "./switch-organization.js";

function invitingAuth(invitationTtl: `${number}d` = "7d") {
  return makeEmailAuth({ organizations: { enabled: true, invitationTtl } }, { invitationUrl });
}

describe("OR-5: invitations", () => {
  it("a user holding the invited address unverified is refused (40300), and the invitation stays pending", async () => {
    const harness = invitingAuth();
    const { ownerId, org } = await ownedOrganization(harness);
    await inviteMember(harness.auth, { userId: ownerId, orgId: org.id, email: "new@example.com" });
    const token = tokenOf(sentTo(harness, "new@example.com", "organization_invitation")[0]);
    const unverified = await addUserWithEmail(harness.auth, "unverified", "new@example.com", false);
    expect(await outcome(acceptInvitation(harness.auth, { userId: unverified, token }))).toBe(40300);
    const verified = await addUserWithEmail(harness.auth, "verified", "NEW@example.com");
    expect((await acceptInvitation(harness.auth, { userId: verified, token })).roles).toEqual(["member"]);
  });

  it("the message names the lifetime in days, the invitation expires then, and a resend renews both from now", async () => {
    const harness = invitingAuth("2d");
    const { ownerId, org } = await ownedOrganization(harness);
    const sent = await inviteMember(harness.auth, { userId: ownerId, orgId: org.id, email: "new@example.com" });
    expect(sent.expiresAt).toBe(harness.clock.now + 2 * 86_400_000);
    expect(sentTo(harness, "new@example.com")[0]?.text).toContain("within 2 days");
    harness.clock.advance(86_400_000);
    const resent = await resendInvitation(harness.auth, { userId: ownerId, orgId: org.id, invitationId: sent.id });
    expect(resent.expiresAt).toBe(harness.clock.now + 2 * 86_400_000);
    expect(sentTo(harness, "new@example.com")).toHaveLength(2);
    expect(await outcome(resendInvitation(harness.auth, { userId: ownerId, orgId: org.id, invitationId: "unknown" }))).toBe(
      40400,
    );
    expect(await outcome(revokeInvitation(harness.auth, { userId: ownerId, orgId: org.id, invitationId: "unknown" }))).toBe(
      40400,
    );
  });

  it("invitations need email with invitationUrl (40400), and roles must be organization roles", async () => {
    for (const harness of [makeAuth({ organizations: { enabled: true } }), makeEmailAuth({ organizations: { enabled: true } })]) {
      const { ownerId, org } = await ownedOrganization(harness);
      expect(await outcome(inviteMember(harness.auth, { userId: ownerId, orgId: org.id, email: "a@example.com" }))).toBe(40400);
    }
    const harness = invitingAuth();
    const { ownerId, org } = await ownedOrganization(harness);
    const invite = (roles: unknown) =>
      inviteMember(harness.auth, { userId: ownerId, orgId: org.id, email: "a@example.com", roles: roles as string[] });
    expect(await outcome(invite(null))).toBe("fulfilled");
    for (const [roles, code] of [
      ["member", 40002],
      [[1], 40002],
      [[], 42200],
      [["ceo"], 42200],
      [["member", "ceo"], 42200],
    ] as const) {
      expect(await outcome(invite(roles))).toBe(code);
    }
    expect((await invite(["member", "member", "admin"])).roles).toEqual(["member", "admin"]);
  });

  it("events: sent, revoked, and a member added by an acceptance; an existing member's acceptance spends it and changes nothing", async () => {
    const harness = invitingAuth();
    const { ownerId, org } = await ownedOrganization(harness);
    const memberId = await addUserWithEmail(harness.auth, "member", "member@example.com");
    const first = await inviteMember(harness.auth, {
      userId: ownerId,
      orgId: org.id,
      email: "member@example.com",
      roles: ["admin"],
    });
    await revokeInvitation(harness.auth, { userId: ownerId, orgId: org.id, invitationId: first.id });
    const second = await inviteMember(harness.auth, { userId: ownerId, orgId: org.id, email: "member@example.com" });
    await acceptInvitation(harness.auth, { userId: memberId, token: tokenOf(sentTo(harness, "member@example.com").at(-1)) });
    const at = harness.clock.now;
    expect(
      harness.events.filter(
        (event) => event.type.startsWith("organization.invitation") || event.type === "organization.member_added",
      ),
    ).toEqual([
      { type: "organization.member_added", orgId: org.id, userId: ownerId, roles: ["owner"], via: "creation", at },
      { type: "organization.invitation_sent", orgId: org.id, invitationId: first.id, by: ownerId, at },
      { type: "organization.invitation_revoked", orgId: org.id, invitationId: first.id, by: ownerId, at },
      { type: "organization.invitation_sent", orgId: org.id, invitationId: second.id, by: ownerId, at },
      { type: "organization.member_added", orgId: org.id, userId: memberId, roles: ["member"], via: "invitation", at },
    ]);
    await inviteMember(harness.auth, { userId: ownerId, orgId: org.id, email: "member@example.com", roles: ["admin"] });
    const again = await acceptInvitation(harness.auth, {
      userId: memberId,
      token: tokenOf(sentTo(harness, "member@example.com").at(-1)),
    });
    expect(again.roles).toEqual(["member"]);
    expect(harness.events.filter((event) => event.type === "organization.member_added")).toHaveLength(2);
  });
});

describe("members", () => {
  it("are listed a page at a time (limit 1 to 100), and a member id of no member is 40400 for a change or a removal", async () => {
    const harness = makeAuth({ organizations: { enabled: true } });
    const { ownerId, org } = await ownedOrganization(harness);
    const ids = [ownerId];
    for (const name of ["m1", "m2", "m3"]) {
      const id = await addUser(harness.auth, name);
      ids.push(id);
      await addMember(harness, org.id, id);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listMembers(harness.auth, { userId: ownerId, orgId: org.id, limit: 3, ...(cursor ? { cursor } : {}) });
      seen.push(...page.members.map((member) => member.userId));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen.sort()).toEqual([...ids].sort());
    expect((await listMembers(harness.auth, { userId: ownerId, orgId: org.id, limit: 100 })).members).toHaveLength(4);
    for (const limit of [0, 101, 1.5]) {
      expect(await outcome(listMembers(harness.auth, { userId: ownerId, orgId: org.id, limit }))).toBe(42200);
    }
    const input = { userId: ownerId, orgId: org.id, memberId: "nobody", password: goodPassword };
    expect(await outcome(changeMemberRoles(harness.auth, { ...input, roles: ["admin"] }))).toBe(40400);
    expect(await outcome(removeMember(harness.auth, input))).toBe(40400);
  });

  it("events name the change and who made it; leaving reports the member as its own remover", async () => {
    const harness = makeAuth({ organizations: { enabled: true } });
    const { ownerId, org } = await ownedOrganization(harness);
    const memberId = await addUser(harness.auth, "member");
    await addMember(harness, org.id, memberId);
    await changeMemberRoles(harness.auth, { userId: ownerId, orgId: org.id, memberId, roles: ["admin"], password: goodPassword });
    await removeMember(harness.auth, { userId: memberId, orgId: org.id, memberId });
    const at = harness.clock.now;
    expect(
      harness.events.filter(
        (event) => event.type === "organization.member_roles_changed" || event.type === "organization.member_removed",
      ),
    ).toEqual([
      { type: "organization.member_roles_changed", orgId: org.id, userId: memberId, roles: ["admin"], by: ownerId, at },
      { type: "organization.member_removed", orgId: org.id, userId: memberId, by: memberId, at },
    ]);
  });
});

describe("switching and the organization a session keeps", () => {
  it("a session that ended, expired or is another user's switches nothing (40101)", async () => {
    const harness = makeAuth({ organizations: { enabled: true } });
    const { ownerId, org } = await ownedOrganization(harness);
    const otherId = await addUser(harness.auth, "other");
    const mine = await signIn(harness, "owner-of-acme");
    const mySession = (await verifyAccessToken(harness.auth, { token: mine.accessToken })).sessionId;
    const theirs = await verifyAccessToken(harness.auth, { token: (await signIn(harness, "other")).accessToken });
    expect(await outcome(switchOrganization(harness.auth, { userId: ownerId, sessionId: theirs.sessionId, orgId: org.id }))).toBe(
      40101,
    );
    expect(await outcome(switchOrganization(harness.auth, { userId: otherId, sessionId: mySession, orgId: null }))).toBe(40101);
    expect(await outcome(switchOrganization(harness.auth, { userId: ownerId, sessionId: "unknown", orgId: org.id }))).toBe(40101);
    await logout(harness.auth, { refreshToken: mine.refreshToken });
    expect(await outcome(switchOrganization(harness.auth, { userId: ownerId, sessionId: mySession, orgId: org.id }))).toBe(40101);
    const later = await signIn(harness, "owner-of-acme");
    const laterSession = (await verifyAccessToken(harness.auth, { token: later.accessToken })).sessionId;
    harness.clock.advance(31 * 86_400_000);
    expect(await outcome(switchOrganization(harness.auth, { userId: ownerId, sessionId: laterSession, orgId: org.id }))).toBe(
      40101,
    );
  });

  it("a new sign-in starts in the organization made active last of several", async () => {
    const harness = makeAuth({ organizations: { enabled: true } });
    const { ownerId, org: first } = await ownedOrganization(harness, "First");
    const second = await createOrganization(harness.auth, { userId: ownerId, name: "Second" });
    const session = (await verifyAccessToken(harness.auth, { token: (await signIn(harness, "owner-of-first")).accessToken }))
      .sessionId;
    for (const orgId of [second.id, first.id, second.id]) {
      harness.clock.advance(1000);
      await switchOrganization(harness.auth, { userId: ownerId, sessionId: session, orgId });
    }
    expect(claimsOf((await signIn(harness, "owner-of-first")).accessToken).org).toBe(second.id);
    harness.clock.advance(1000);
    await switchOrganization(harness.auth, { userId: ownerId, sessionId: session, orgId: first.id });
    expect(claimsOf((await signIn(harness, "owner-of-first")).accessToken).org).toBe(first.id);
  });

  it("a re-authentication drops an organization the user left, or whose rules the new proof does not meet", async () => {
    const harness = makeAuth({ organizations: { enabled: true } });
    const { ownerId, org } = await ownedOrganization(harness);
    const memberId = await addUser(harness.auth, "member");
    await addMember(harness, org.id, memberId);
    const session = (await verifyAccessToken(harness.auth, { token: (await signIn(harness, "member")).accessToken })).sessionId;
    await switchOrganization(harness.auth, { userId: memberId, sessionId: session, orgId: org.id });
    await updateOrganization(harness.auth, { userId: ownerId, orgId: org.id, rules: { signInMethods: ["passkey"] } });
    await harness.storage.organizations?.setActiveOrganization(session, memberId, org.id, harness.clock.now);
    const renewed = await reauthenticate(harness.auth, { userId: memberId, sessionId: session, password: goodPassword });
    expect(claimsOf(renewed.accessToken).org).toBeUndefined();
    await updateOrganization(harness.auth, { userId: ownerId, orgId: org.id, rules: { signInMethods: null } });
    const next = (await verifyAccessToken(harness.auth, { token: renewed.accessToken })).sessionId;
    await switchOrganization(harness.auth, { userId: memberId, sessionId: next, orgId: org.id });
    await removeMember(harness.auth, { userId: memberId, orgId: org.id, memberId });
    await harness.storage.sessions.findSession(next);
    const after = await reauthenticate(harness.auth, { userId: memberId, sessionId: next, password: goodPassword });
    expect(claimsOf(after.accessToken).org).toBeUndefined();
  });

  it.each([
    [["pwd"], "password"],
    [["pwd", "otp"], "password"],
    [["ldap"], "directory"],
    [["hwk", "user"], "passkey"],
    [["swk"], "passkey"],
    [["fed", "mfa"], "provider"],
    [["fed", "hwk"], "provider"],
    // PL-4: an email code or link is its own way (an organization allowing only passwords is not entered by it).
    [["email"], "email"],
    [["email", "otp", "mfa"], "email"],
  ] as const)("a session proven by %j signed in by %s", (amr, method) => {
    expect(signInMethodOf([...amr] as AuthMethod[])).toBe(method);
  });
});

describe("requireAuth's org option at start-up", () => {
  it.each([
    [false],
    ["admin"],
    [[]],
    [null],
    [1],
    [{ roles: "admin" }],
    [{ roles: [""] }],
    [{ roles: [1] }],
    [{ roles: ["admin"], extra: true }],
  ])("refuses org: %j with a TypeError", (org) => {
    expect(() => organizationRequirementOf({ org } as never)).toThrow(TypeError);
  });

  it("takes true and { roles }", () => {
    expect(organizationRequirementOf({ org: true })).toEqual({ roles: null });
    expect(organizationRequirementOf({ org: { roles: ["admin"] } })).toEqual({ roles: ["admin"] });
  });
});

describe("organizations off", () => {
  it("every flow answers 40400", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "someone");
    expect(await outcome(createOrganization(harness.auth, { userId, name: "Acme" }))).toBe(40400);
    expect(await outcome(listMembers(harness.auth, { userId, orgId: "x" }))).toBe(40400);
    expect(await outcome(acceptInvitation(harness.auth, { userId, token: "x" }))).toBe(40400);
  });
});

describe("OR-4: a member's rank is their highest role, whatever order their roles are stored in", () => {
  it.each([[["owner", "member"]], [["member", "owner"]]])(
    "an admin can neither demote nor remove an owner holding %j",
    async (roles) => {
      const harness = makeAuth({ organizations: { enabled: true } });
      const { ownerId, org } = await ownedOrganization(harness);
      const adminId = await addUser(harness.auth, "admin");
      const coOwnerId = await addUser(harness.auth, "co-owner");
      await addMember(harness, org.id, adminId, ["admin"]);
      await addMember(harness, org.id, coOwnerId, [...roles]);
      const input = { userId: adminId, orgId: org.id, memberId: coOwnerId, password: goodPassword };
      expect(await outcome(changeMemberRoles(harness.auth, { ...input, roles: ["member"] }))).toBe(40300);
      expect(await outcome(removeMember(harness.auth, input))).toBe(40300);
      expect(ownerId).not.toBe(coOwnerId);
    },
  );

  it("a member holding an administrator role beside a role of the host's own administers", async () => {
    const harness = makeAuth({ organizations: { enabled: true, roles: ["owner", "admin", "billing", "member"] } });
    const { org, ownerId } = await ownedOrganization(harness);
    const adminId = await addUser(harness.auth, "admin");
    const memberId = await addUser(harness.auth, "member");
    await addMember(harness, org.id, adminId, ["billing", "admin"]);
    await addMember(harness, org.id, memberId);
    const changed = await changeMemberRoles(harness.auth, {
      userId: adminId,
      orgId: org.id,
      memberId,
      roles: ["billing"],
      password: goodPassword,
    });
    expect(changed.roles).toEqual(["billing"]);
    expect(
      await outcome(
        changeMemberRoles(harness.auth, {
          userId: adminId,
          orgId: org.id,
          memberId,
          roles: undefined as never,
          password: goodPassword,
        }),
      ),
    ).toBe(40001);
    expect(ownerId).toBeTruthy();
  });
});
