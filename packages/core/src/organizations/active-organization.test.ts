import { describe, expect, it } from "vitest";
import {
  type Harness,
  addUser,
  enrolTotp,
  goodPassword,
  makeAuth,
  nextCode,
  outcome,
  signIn,
  stepwiseMemoryStorage,
} from "../flows/fixtures.test-support.js";
import { login } from "../flows/login.js";
import { refresh } from "../flows/refresh.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { verifyTotp } from "../flows/verify-totp.js";
import { reauthenticate } from "../step-up/reauthenticate-session.js";
import type { Storage } from "../storage/types.js";
import { signAccessToken } from "../tokens/access-token.js";
import type { TokenSet } from "../tokens/issue-tokens.js";
import { createOrganization, updateOrganization } from "./manage-organization.js";
import { changeMemberRoles, removeMember } from "./members.js";
import { claimsOf, organizationWithMember, ownedOrganization } from "./organizations.test-support.js";
import { switchOrganization } from "./switch-organization.js";

function orgAuth(storage?: Storage, tokenStateCacheSeconds = 0): Harness {
  return makeAuth({
    organizations: { enabled: true },
    tokenStateCacheSeconds,
    reauthentication: { recentSignIn: "5m" },
    ...(storage ? { storage } : {}),
  });
}

/** An owner and a member of one organization, both signed in, the member's session switched to it. */
async function memberSwitchedToOrganization(harness: Harness) {
  const { ownerId, memberId, org } = await organizationWithMember(harness);
  const signedIn = await signIn(harness, "member");
  const session = await verifyAccessToken(harness.auth, { token: signedIn.accessToken });
  const switched = await switchOrganization(harness.auth, { userId: memberId, sessionId: session.sessionId, orgId: org.id });
  return { ownerId, memberId, org, signedIn, sessionId: session.sessionId, switched };
}

describe("OR-7: the active organization travels in the session's access tokens", () => {
  it("a switch answers an access token carrying org and org_roles, which requireAuth's context reads", async () => {
    const harness = orgAuth();
    const { org, switched, memberId } = await memberSwitchedToOrganization(harness);
    expect(switched.org).toEqual({ id: org.id, roles: ["member"] });
    expect(claimsOf(switched.accessToken)).toMatchObject({ sub: memberId, org: org.id, org_roles: ["member"] });
    const access = await verifyAccessToken(harness.auth, { token: switched.accessToken });
    expect(access.org).toEqual({ id: org.id, roles: ["member"] });
    expect(Object.isFrozen(access.org)).toBe(true);
    expect(harness.events.filter((event) => event.type === "organization.switched")).toHaveLength(1);
  });

  it("after a switch the session's tokens of another organization (or none) are refused, and a refresh carries the new one", async () => {
    const harness = orgAuth();
    const { org, signedIn } = await memberSwitchedToOrganization(harness);
    expect(claimsOf(signedIn.accessToken).org).toBeUndefined();
    expect(await outcome(verifyAccessToken(harness.auth, { token: signedIn.accessToken }))).toBe(40101);
    const refreshed = await refresh(harness.auth, { refreshToken: signedIn.refreshToken });
    expect(claimsOf(refreshed.accessToken)).toMatchObject({ org: org.id, org_roles: ["member"] });
    expect(await outcome(verifyAccessToken(harness.auth, { token: refreshed.accessToken }))).toBe("fulfilled");
  });

  it("switching to none answers a token without org, and the organization's tokens of the session are refused", async () => {
    const harness = orgAuth();
    const { memberId, sessionId, switched } = await memberSwitchedToOrganization(harness);
    const none = await switchOrganization(harness.auth, { userId: memberId, sessionId, orgId: null });
    expect(none.org).toBeNull();
    expect(claimsOf(none.accessToken).org).toBeUndefined();
    expect((await verifyAccessToken(harness.auth, { token: none.accessToken })).org).toBeNull();
    expect(await outcome(verifyAccessToken(harness.auth, { token: switched.accessToken }))).toBe(40101);
  });

  it("a new sign-in starts in the organization the user made active last; a re-authentication keeps it", async () => {
    const harness = orgAuth();
    const { org, memberId } = await memberSwitchedToOrganization(harness);
    harness.clock.advance(60_000);
    const next = await signIn(harness, "member");
    expect(claimsOf(next.accessToken)).toMatchObject({ org: org.id, org_roles: ["member"] });
    const session = await verifyAccessToken(harness.auth, { token: next.accessToken });
    harness.clock.advance(10 * 60_000);
    const renewed = await reauthenticate(harness.auth, {
      userId: memberId,
      sessionId: session.sessionId,
      password: goodPassword,
    });
    expect(claimsOf(renewed.accessToken)).toMatchObject({ org: org.id, org_roles: ["member"] });
  });

  it("a user who never chose an organization signs in to none", async () => {
    const harness = orgAuth();
    const ownerId = await addUser(harness.auth, "solo");
    await createOrganization(harness.auth, { userId: ownerId, name: "Solo Inc" });
    expect(claimsOf((await signIn(harness, "solo")).accessToken).org).toBeUndefined();
  });

  it("a switch to an organization of which the user is not a member is 40400, and nothing changes", async () => {
    const harness = orgAuth();
    const { memberId, sessionId, switched } = await memberSwitchedToOrganization(harness);
    const strangerId = await addUser(harness.auth, "stranger");
    const other = await createOrganization(harness.auth, { userId: strangerId, name: "Other" });
    expect(await outcome(switchOrganization(harness.auth, { userId: memberId, sessionId, orgId: other.id }))).toBe(40400);
    expect(await outcome(switchOrganization(harness.auth, { userId: memberId, sessionId, orgId: "no-such-org" }))).toBe(40400);
    expect(await outcome(verifyAccessToken(harness.auth, { token: switched.accessToken }))).toBe("fulfilled");
  });

  it("a token whose org claim comes without org_roles, or with roles that are not strings, is refused", async () => {
    const harness = orgAuth();
    const { switched } = await memberSwitchedToOrganization(harness);
    const claims = claimsOf(switched.accessToken);
    for (const broken of [{ org_roles: undefined }, { org_roles: "member" }, { org_roles: [1] }, { org: 5 }]) {
      const token = await signAccessToken(harness.auth.keys, { ...claims, ...broken } as never);
      expect(await outcome(verifyAccessToken(harness.auth, { token }))).toBe(40101);
    }
  });
});

describe("OR-8: a token whose membership ended or changed is refused at the next request", () => {
  for (const [name, storage, cacheSeconds] of [
    ["with the store's one-read token state", undefined, 0],
    ["with the stepwise token state", stepwiseMemoryStorage, 0],
    ["with tokenStateCacheSeconds: 60", undefined, 60],
  ] as const) {
    describe(name, () => {
      it("a role change refuses the old token; the refresh carries the new roles and the session goes on", async () => {
        const harness = orgAuth(storage?.(), cacheSeconds);
        const { ownerId, memberId, org, switched, signedIn } = await memberSwitchedToOrganization(harness);
        expect(await outcome(verifyAccessToken(harness.auth, { token: switched.accessToken }))).toBe("fulfilled");
        await changeMemberRoles(harness.auth, {
          userId: ownerId,
          orgId: org.id,
          memberId,
          roles: ["admin"],
          password: goodPassword,
        });
        expect(await outcome(verifyAccessToken(harness.auth, { token: switched.accessToken }))).toBe(40101);
        const refreshed: TokenSet = await refresh(harness.auth, { refreshToken: signedIn.refreshToken });
        expect(claimsOf(refreshed.accessToken)).toMatchObject({ org: org.id, org_roles: ["admin"] });
        expect((await verifyAccessToken(harness.auth, { token: refreshed.accessToken })).org?.roles).toEqual(["admin"]);
      });

      it("a removed member's token is refused; the refresh carries no organization", async () => {
        const harness = orgAuth(storage?.(), cacheSeconds);
        const { ownerId, memberId, org, switched, signedIn } = await memberSwitchedToOrganization(harness);
        expect(await outcome(verifyAccessToken(harness.auth, { token: switched.accessToken }))).toBe("fulfilled");
        await removeMember(harness.auth, { userId: ownerId, orgId: org.id, memberId, password: goodPassword });
        expect(await outcome(verifyAccessToken(harness.auth, { token: switched.accessToken }))).toBe(40101);
        const refreshed = await refresh(harness.auth, { refreshToken: signedIn.refreshToken });
        expect(claimsOf(refreshed.accessToken).org).toBeUndefined();
        expect(await outcome(verifyAccessToken(harness.auth, { token: refreshed.accessToken }))).toBe("fulfilled");
      });

      it("a change of the organization's rules ends its activation in every session", async () => {
        const harness = orgAuth(storage?.(), cacheSeconds);
        const { ownerId, org, switched, signedIn } = await memberSwitchedToOrganization(harness);
        expect(await outcome(verifyAccessToken(harness.auth, { token: switched.accessToken }))).toBe("fulfilled");
        await updateOrganization(harness.auth, { userId: ownerId, orgId: org.id, rules: { requireSecondFactor: true } });
        expect(await outcome(verifyAccessToken(harness.auth, { token: switched.accessToken }))).toBe(40101);
        expect(claimsOf((await refresh(harness.auth, { refreshToken: signedIn.refreshToken })).accessToken).org).toBeUndefined();
      });
    });
  }
});

describe("OR-9, OR-10: an organization's rules decide which sessions it may be active in", () => {
  it("OR-9: requireSecondFactor refuses a password-only session (40104, required.amr mfa) and accepts one that proved TOTP", async () => {
    const harness = orgAuth();
    const { ownerId, org } = await ownedOrganization(harness, "Strict", "owner");
    await updateOrganization(harness.auth, { userId: ownerId, orgId: org.id, rules: { requireSecondFactor: true } });
    const plain = await verifyAccessToken(harness.auth, { token: (await signIn(harness, "owner")).accessToken });
    const refused = await switchOrganization(harness.auth, { userId: ownerId, sessionId: plain.sessionId, orgId: org.id }).catch(
      (error: unknown) => error as { code: number; data: unknown },
    );
    expect(refused).toMatchObject({ code: 40104, data: { required: { amr: ["mfa"] }, enrolmentRequired: true } });
    const { secret } = await enrolTotp(harness.auth, ownerId);
    const pending = await login(harness.auth, { username: "owner", password: goodPassword });
    if (pending.status !== "totp_required") throw new Error("expected the 40102 step");
    const tokens = await verifyTotp(harness.auth, { tempToken: pending.tempToken, code: nextCode(harness, secret) });
    const session = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
    const switched = await switchOrganization(harness.auth, { userId: ownerId, sessionId: session.sessionId, orgId: org.id });
    expect(switched.org?.id).toBe(org.id);
  });

  it("OR-10: signInMethods refuses a session signed in another way (40300 naming the allowed ones)", async () => {
    const harness = orgAuth();
    const { ownerId, org } = await ownedOrganization(harness, "Keys only", "owner");
    await updateOrganization(harness.auth, { userId: ownerId, orgId: org.id, rules: { signInMethods: ["passkey"] } });
    const session = await verifyAccessToken(harness.auth, { token: (await signIn(harness, "owner")).accessToken });
    const refused = await switchOrganization(harness.auth, {
      userId: ownerId,
      sessionId: session.sessionId,
      orgId: org.id,
    }).catch((error: unknown) => error as { code: number; data: unknown });
    expect(refused).toMatchObject({ code: 40300, data: { signInMethods: ["passkey"] } });
    await updateOrganization(harness.auth, { userId: ownerId, orgId: org.id, rules: { signInMethods: ["passkey", "password"] } });
    expect(
      (await switchOrganization(harness.auth, { userId: ownerId, sessionId: session.sessionId, orgId: org.id })).org?.id,
    ).toBe(org.id);
  });

  it("a sign-in that does not meet the last active organization's rules starts in none", async () => {
    const harness = orgAuth();
    const { ownerId, org, memberId } = await memberSwitchedToOrganization(harness);
    await updateOrganization(harness.auth, { userId: ownerId, orgId: org.id, rules: { signInMethods: ["passkey"] } });
    expect(memberId).toBeTruthy();
    expect(claimsOf((await signIn(harness, "member")).accessToken).org).toBeUndefined();
  });
});
