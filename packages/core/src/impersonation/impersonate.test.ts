import { describe, expect, it } from "vitest";
import { createApiKey } from "../api-keys/manage-api-keys.js";
import { changePassword } from "../flows/change-password.js";
import { addUser, goodPassword, makeAuth, outcome, signIn } from "../flows/fixtures.test-support.js";
import { signOutEverywhere } from "../flows/manage-users.js";
import { refresh } from "../flows/refresh.js";
import { listSessions } from "../flows/sessions.js";
import { beginTotpSetup } from "../flows/totp-enrolment.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { reauthenticate, replaceSession } from "../step-up/reauthenticate-session.js";
import { endImpersonation, impersonateUser } from "./impersonate.js";
import { resolveImpersonationConfig } from "./impersonation-config.js";

async function setUp(impersonation: Record<string, unknown> = {}) {
  const harness = makeAuth({ impersonation: { enabled: true, ...impersonation }, apiKeys: { enabled: true } });
  const adminUserId = await addUser(harness.auth, "support", goodPassword, ["admin", "impersonator"]);
  const userId = await addUser(harness.auth, "alice");
  const admin = await signIn(harness, "support");
  const adminAccess = await verifyAccessToken(harness.auth, { token: admin.accessToken });
  const start = (extra: Record<string, unknown> = {}) =>
    impersonateUser(harness.auth, { adminUserId, sessionId: adminAccess.sessionId, userId, password: goodPassword, ...extra });
  return { harness, adminUserId, userId, admin, adminAccess, start };
}

describe("impersonation options", () => {
  it("default to off, the impersonator role, 30 minutes", () => {
    expect(resolveImpersonationConfig(undefined, "admin")).toEqual({
      enabled: false,
      role: "impersonator",
      durationSeconds: 1800,
    });
  });

  it.each([
    [{ enabled: 1 }, /impersonation.enabled must be true or false/],
    [{ role: "admin" }, /must differ from adminRole/],
    [{ role: "" }, /impersonation.role must be/],
    [{ duration: "5h" }, /at most "4h"/],
    [{ length: "1h" }, /impersonation.length/],
  ])("refuse %j at startup", (options, message) => {
    expect(() => resolveImpersonationConfig(options as never, "admin")).toThrow(message);
  });
});

describe("IMP-1: an administrator with the impersonate permission acts as a user, marked in the tokens", () => {
  it("begins a session of the user whose tokens carry act, shown in the user's sessions list; every step an event", async () => {
    const { harness, adminUserId, userId, start } = await setUp();
    const tokens = await start({ userAgent: "Support console" });
    expect(tokens.impersonation).toEqual({ by: adminUserId, expiresAt: harness.clock.now + 1_800_000 });
    expect(tokens.user.id).toBe(userId);
    const access = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
    expect(access).toMatchObject({ userId, actor: { userId: adminUserId }, amr: [] });
    expect(access.claims.act).toEqual({ sub: adminUserId });
    expect((await harness.storage.sessions.findSession(access.sessionId))?.amr).toEqual([]);
    harness.clock.advance(1000);
    const own = await signIn(harness, "alice");
    expect((await verifyAccessToken(harness.auth, { token: own.accessToken })).actor).toBeNull();
    const listed = await listSessions(harness.auth, { userId });
    expect(listed.map((session) => session.impersonatedBy)).toEqual([null, { id: adminUserId, username: "support" }]);
    expect(listed[1]?.userAgent).toBe("Support console");
    const started = harness.events.find((event) => event.type === "impersonation.started");
    expect(started).toMatchObject({
      userId,
      by: adminUserId,
      sessionId: access.sessionId,
      expiresAt: tokens.impersonation.expiresAt,
    });
  });

  it("needs the impersonation role and a re-authentication; never of oneself, a disabled user or an administrator", async () => {
    const { harness, adminUserId, adminAccess, userId, start } = await setUp();
    expect(await outcome(start({ password: undefined, sessionId: undefined }))).toBe(40001);
    expect(await outcome(start({ password: "wrong" }))).toBe(40100);
    expect(await outcome(start({ userId: adminUserId }))).toBe(40300);
    expect(await outcome(start({ userId: "nobody" }))).toBe(40400);
    const otherAdmin = await addUser(harness.auth, "boss", goodPassword, ["admin"]);
    expect(await outcome(start({ userId: otherAdmin }))).toBe(40300);
    const peer = await addUser(harness.auth, "peer", goodPassword, ["impersonator"]);
    expect(await outcome(start({ userId: peer }))).toBe(40300);
    const plainAdmin = await addUser(harness.auth, "plain", goodPassword, ["admin"]);
    expect(await outcome(impersonateUser(harness.auth, { adminUserId: plainAdmin, userId, password: goodPassword }))).toBe(40300);
    await harness.storage.users.update(userId, { disabled: true }, harness.clock.now);
    expect(await outcome(start())).toBe(40300);
    const off = makeAuth({ storage: harness.storage, clock: harness.clock });
    expect(
      await outcome(impersonateUser(off.auth, { adminUserId, sessionId: adminAccess.sessionId, userId, password: goodPassword })),
    ).toBe(40400);
    expect(harness.events.some((event) => event.type === "impersonation.started")).toBe(false);
  });
});

describe("IMP-2: an impersonated session cannot re-authenticate nor change credentials or second factors", () => {
  it("refuses a password change, TOTP enrolment, an API key, a re-authentication; the user's own session may", async () => {
    const { harness, userId, start } = await setUp();
    const tokens = await start();
    const { sessionId } = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
    const refusals = [
      () =>
        changePassword(harness.auth, {
          userId,
          sessionId,
          currentPassword: goodPassword,
          newPassword: "another long passphrase 9",
        }),
      () => beginTotpSetup(harness.auth, { userId, sessionId, password: goodPassword }),
      () => createApiKey(harness.auth, { userId, sessionId, name: "key", password: goodPassword }),
      () => reauthenticate(harness.auth, { userId, sessionId, password: goodPassword }),
      () => createApiKey(harness.auth, { userId, sessionId, name: "key" }),
      () => signOutEverywhere(harness.auth, { userId, sessionId }),
    ];
    for (const refusal of refusals) expect(await outcome(refusal())).toBe(40300);
    const refused = harness.events.filter((event) => event.type === "impersonation.refused");
    expect(refused).toHaveLength(refusals.length);
    expect(
      await harness.auth.passwords.verify((await harness.storage.users.findById(userId))?.passwordHash ?? null, goodPassword),
    ).toBe(true);
    expect(refused[0]).toMatchObject({ userId, sessionId, action: "reauthentication" });
    const user = await harness.storage.users.findById(userId);
    if (user === null) throw new Error("the user is gone");
    expect(await outcome(replaceSession(harness.auth, user, sessionId, ["hwk", "user"]))).toBe(40300);
    expect(await outcome(verifyAccessToken(harness.auth, { token: tokens.accessToken }))).toBe("fulfilled");
    const own = await verifyAccessToken(harness.auth, { token: (await signIn(harness, "alice")).accessToken });
    expect(await outcome(createApiKey(harness.auth, { userId, sessionId: own.sessionId, name: "mine" }))).toBe("fulfilled");
  });
});

describe("IMP-3, IMP-4: an impersonated session ends by itself, by its administrator, or when the administrator loses the right", () => {
  it("ends at impersonation.duration whatever refreshes it has", async () => {
    const { harness, start } = await setUp({ duration: "10m" });
    const started = await start();
    harness.clock.advance(9 * 60_000);
    const tokens = await refresh(harness.auth, { refreshToken: started.refreshToken });
    expect((await verifyAccessToken(harness.auth, { token: tokens.accessToken })).actor).not.toBeNull();
    harness.clock.advance(60_000);
    expect(await outcome(refresh(harness.auth, { refreshToken: tokens.refreshToken }))).toBe(40101);
    expect(await outcome(verifyAccessToken(harness.auth, { token: tokens.accessToken }))).toBe(40101);
  });

  it("is ended by its administrator's end, and at the next refresh once the administrator loses the impersonation role", async () => {
    const { harness, adminUserId, userId, start } = await setUp();
    const first = await start();
    const firstAccess = await verifyAccessToken(harness.auth, { token: first.accessToken });
    expect(await outcome(endImpersonation(harness.auth, { userId, sessionId: "nope" }))).toBe(40101);
    expect(await outcome(endImpersonation(harness.auth, { userId: adminUserId, sessionId: firstAccess.sessionId }))).toBe(40101);
    const own = await verifyAccessToken(harness.auth, { token: (await signIn(harness, "alice")).accessToken });
    expect(await outcome(endImpersonation(harness.auth, { userId, sessionId: own.sessionId }))).toBe(40300);
    expect(await endImpersonation(harness.auth, { userId, sessionId: firstAccess.sessionId })).toEqual({ ended: true });
    expect(await outcome(verifyAccessToken(harness.auth, { token: first.accessToken }))).toBe(40101);
    expect(await outcome(endImpersonation(harness.auth, { userId, sessionId: firstAccess.sessionId }))).toBe(40101);

    const second = await start();
    await harness.storage.users.update(adminUserId, { roles: ["admin"] }, harness.clock.now);
    expect(await outcome(refresh(harness.auth, { refreshToken: second.refreshToken }))).toBe(40101);
    expect(await outcome(verifyAccessToken(harness.auth, { token: second.accessToken }))).toBe(40101);

    await harness.storage.users.update(adminUserId, { roles: ["admin", "impersonator"] }, harness.clock.now);
    const third = await start();
    const refreshed = await refresh(harness.auth, { refreshToken: third.refreshToken });
    await harness.storage.users.update(adminUserId, { disabled: true }, harness.clock.now);
    expect(await outcome(refresh(harness.auth, { refreshToken: refreshed.refreshToken }))).toBe(40101);
    expect(harness.events.filter((event) => event.type === "impersonation.ended").map((event) => event.by)).toEqual([
      adminUserId,
      adminUserId,
      adminUserId,
    ]);
  });
});
