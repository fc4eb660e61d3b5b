import { describe, expect, it } from "vitest";
import { ErrorCode } from "../errors/codes.js";
import { changePassword, setPassword } from "./change-password.js";
import { createUser } from "./create-user.js";
import { addUser, authError, enrolTotp, goodPassword, makeAuth, nextCode, outcome, signIn } from "./fixtures.test-support.js";
import { login } from "./login.js";
import { getPublicUser, setUserDisabled, setUserRoles, signOutEverywhere } from "./manage-users.js";
import { refresh } from "./refresh.js";
import { disableTotp } from "./totp-enrolment.js";
import { verifyAccessToken } from "./verify-access-token.js";

/** The business code and message a rejected promise carries. */
async function answerOf(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  const { code, message } = await authError(promise);
  return { code, message };
}

describe("managing users", () => {
  it("TV-1: the token version only grows, raised by a reset, a role change, disabling and signing out everywhere; never by the user's own changes (SE-2)", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "versioned");
    const version = async () => (await harness.storage.users.findById(userId))?.tokenVersion;
    let secret: Uint8Array = new Uint8Array();
    const steps: Array<[string | null, () => Promise<unknown>]> = [
      [null, () => changePassword(harness.auth, { userId, currentPassword: goodPassword, newPassword: "second passphrase" })],
      ["password_changed", () => setPassword(harness.auth, { userId, newPassword: "second passphrase" })],
      ["roles_changed", () => setUserRoles(harness.auth, { userId, roles: ["admin"] })],
      ["user_disabled", () => setUserDisabled(harness.auth, { userId, disabled: true })],
      [null, () => setUserDisabled(harness.auth, { userId, disabled: false })],
      [null, async () => ({ secret } = await enrolTotp(harness.auth, userId, "second passphrase"))],
      [null, () => disableTotp(harness.auth, { userId, password: "second passphrase", code: nextCode(harness, secret) })],
      ["sign_out_everywhere", () => signOutEverywhere(harness.auth, { userId })],
    ];
    expect(await version()).toBe(0);
    let expected = 0;
    for (const [reason, step] of steps) {
      harness.events.length = 0;
      await step();
      if (reason !== null) expected += 1;
      expect(await version(), String(reason)).toBe(expected);
      const raised = harness.events.filter((event) => event.type === "token_version.raised");
      expect(raised, String(reason)).toEqual(
        reason === null ? [] : [expect.objectContaining({ userId, tokenVersion: expected, reason })],
      );
    }
    expect(expected).toBe(4);
  });

  it("TV-1: a role change ends tokens carrying the old roles; new tokens carry the new ones", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "promoted", goodPassword, ["reader"]);
    const before = await signIn(harness, "promoted");
    const updated = await setUserRoles(harness.auth, { userId, roles: ["reader", "admin", "admin"] });
    expect(updated.roles).toEqual(["reader", "admin"]);
    expect(updated.tokenVersion).toBe(1);
    expect(await outcome(verifyAccessToken(harness.auth, { token: before.accessToken }))).toBe(40101);
    const after = await signIn(harness, "promoted");
    expect((await verifyAccessToken(harness.auth, { token: after.accessToken })).roles).toEqual(["reader", "admin"]);
    expect(await outcome(setUserRoles(harness.auth, { userId, roles: [""] }))).toBe(ErrorCode.ValidationFailed);
    expect(await outcome(setUserRoles(harness.auth, { userId, roles: "admin" as never }))).toBe(ErrorCode.ValidationFailed);
  });

  it("TV-1: signing out everywhere ends every session and access token of the user, and only that user's", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "everywhere");
    await addUser(harness.auth, "bystander");
    const sessions = await Promise.all([signIn(harness, "everywhere"), signIn(harness, "everywhere")]);
    const bystander = await signIn(harness, "bystander");
    harness.events.length = 0;
    expect(await signOutEverywhere(harness.auth, { userId })).toBe(2);
    expect(harness.events.find((event) => event.type === "sessions.revoked_all")).toMatchObject({
      userId,
      count: 2,
      reason: "sign_out_everywhere",
    });
    for (const tokens of sessions) {
      expect(await outcome(verifyAccessToken(harness.auth, { token: tokens.accessToken }))).toBe(40101);
      expect(await outcome(refresh(harness.auth, { refreshToken: tokens.refreshToken }))).toBe(40101);
    }
    await verifyAccessToken(harness.auth, { token: bystander.accessToken });
    await refresh(harness.auth, { refreshToken: bystander.refreshToken });
    await signIn(harness, "everywhere");
  });

  it("RT-4: disabling ends every session at once; a disabled user's access token is refused", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "suspended");
    const tokens = await signIn(harness, "suspended");
    const { sessionId } = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
    const user = await setUserDisabled(harness.auth, { userId, disabled: true });
    expect(user.disabled).toBe(true);
    expect(user).not.toHaveProperty("passwordHash");
    expect((await harness.storage.sessions.findSession(sessionId))?.revokedAt).toBe(harness.clock.now);
    expect(await outcome(verifyAccessToken(harness.auth, { token: tokens.accessToken }))).toBe(40101);
    expect(await outcome(login(harness.auth, { username: "suspended", password: goodPassword }))).toBe(ErrorCode.Forbidden);
  });

  it("unknown users get 40400 and wrongly typed ids 40002", async () => {
    const harness = makeAuth();
    expect(await outcome(setUserRoles(harness.auth, { userId: "missing", roles: [] }))).toBe(ErrorCode.NotFound);
    expect(await outcome(setUserDisabled(harness.auth, { userId: "missing", disabled: true }))).toBe(ErrorCode.NotFound);
    expect(await outcome(signOutEverywhere(harness.auth, { userId: "missing" }))).toBe(ErrorCode.NotFound);
    expect(await outcome(getPublicUser(harness.auth, { userId: { $ne: "" } as never }))).toBe(ErrorCode.MalformedParameter);
  });

  it("users: usernames are unique whatever their case or Unicode form, and a user is shown without secrets", async () => {
    const harness = makeAuth();
    const user = await createUser(harness.auth, { username: "Zoë", password: goodPassword, roles: ["a"] });
    expect(user).toEqual({
      id: user.id,
      username: "Zoë",
      roles: ["a"],
      disabled: false,
      tokenVersion: 0,
      source: "local",
      email: null,
      emailVerified: false,
      createdAt: harness.clock.now,
      updatedAt: harness.clock.now,
      hasPassword: true,
    });
    expect((await authError(createUser(harness.auth, { username: "ZOË" }))).code).toBe(ErrorCode.Conflict);
    expect((await authError(createUser(harness.auth, { username: "zoe\u0308" }))).code).toBe(ErrorCode.Conflict);
    expect((await authError(createUser(harness.auth, { username: " padded" }))).code).toBe(ErrorCode.ValidationFailed);
    expect((await authError(createUser(harness.auth, { username: "bad\u0000name" }))).code).toBe(ErrorCode.ValidationFailed);
    expect(await getPublicUser(harness.auth, { userId: user.id })).toEqual({
      id: user.id,
      username: "Zoë",
      roles: ["a"],
      totpEnabled: false,
      email: null,
      emailVerified: false,
      createdAt: harness.clock.now,
    });
    await signIn(harness, "zoë");
  });

  it("TOTP-5: the public user shows whether TOTP is on", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "shown");
    const { secret } = await enrolTotp(harness.auth, userId);
    expect((await getPublicUser(harness.auth, { userId })).totpEnabled).toBe(true);
    await disableTotp(harness.auth, { userId, password: goodPassword, code: nextCode(harness, secret) });
    expect((await getPublicUser(harness.auth, { userId })).totpEnabled).toBe(false);
  });

  it("PW-5: each missing user id is 40001 naming it, each non-string 40002 naming it, an unknown one 40400", async () => {
    const harness = makeAuth();
    const flows: Record<string, (userId: unknown) => Promise<unknown>> = {
      getPublicUser: (userId) => getPublicUser(harness.auth, { userId } as never),
      setUserRoles: (userId) => setUserRoles(harness.auth, { userId, roles: [] } as never),
      setUserDisabled: (userId) => setUserDisabled(harness.auth, { userId, disabled: true } as never),
      signOutEverywhere: (userId) => signOutEverywhere(harness.auth, { userId } as never),
    };
    for (const [name, run] of Object.entries(flows)) {
      for (const missing of [undefined, null, ""]) {
        expect(await answerOf(run(missing)), `${name}: ${missing}`).toEqual({
          code: ErrorCode.MissingParameter,
          message: "userId is required",
        });
      }
      expect(await answerOf(run({ $ne: "" })), name).toEqual({
        code: ErrorCode.MalformedParameter,
        message: "userId must be a string",
      });
      expect(await answerOf(run("missing")), name).toEqual({ code: ErrorCode.NotFound, message: "No such user" });
    }
  });

  it("RT-4: disabling returns the user disabled with the raised token version, and reports every session revoked as user_disabled", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "switched");
    await signIn(harness, "switched");
    await signIn(harness, "switched");
    harness.clock.advance(1_000);
    harness.events.length = 0;
    const disabled = await setUserDisabled(harness.auth, { userId, disabled: true });
    expect(disabled).toMatchObject({ id: userId, disabled: true, tokenVersion: 1, updatedAt: harness.clock.now });
    expect(harness.events.filter((event) => event.type === "sessions.revoked_all")).toEqual([
      { type: "sessions.revoked_all", userId, count: 2, reason: "user_disabled", at: harness.clock.now },
    ]);
    harness.clock.advance(1_000);
    const enabled = await setUserDisabled(harness.auth, { userId, disabled: false });
    expect(enabled).toMatchObject({ id: userId, disabled: false, tokenVersion: 1, updatedAt: harness.clock.now });
    expect(await harness.storage.users.findById(userId)).toMatchObject({ disabled: false, tokenVersion: 1 });
    await signIn(harness, "switched");
  });

  it("the service's own changes emit user.updated with by null; the same roles, or enabling an enabled user, change nothing", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "audited", goodPassword, ["a", "b"]);
    const tokens = await signIn(harness, "audited");
    harness.events.length = 0;
    expect((await setUserRoles(harness.auth, { userId, roles: ["b", "a"] })).roles).toEqual(["a", "b"]);
    expect((await setUserDisabled(harness.auth, { userId, disabled: false })).disabled).toBe(false);
    expect(harness.events).toEqual([]);
    await verifyAccessToken(harness.auth, { token: tokens.accessToken });
    await setUserRoles(harness.auth, { userId, roles: ["a"] });
    await setUserDisabled(harness.auth, { userId, disabled: true });
    expect(harness.events.filter((event) => event.type === "user.updated")).toEqual([
      { type: "user.updated", userId, changes: ["roles"], by: null, at: harness.clock.now },
      { type: "user.updated", userId, changes: ["disabled"], by: null, at: harness.clock.now },
    ]);
  });
});
