import { describe, expect, it } from "vitest";
import { ErrorCode } from "../errors/codes.js";
import type { UserRecord } from "../storage/types.js";
import { endUserSessions, removeTotp, updateUser } from "./admin-user-changes.js";
import {
  type Harness,
  addUser,
  authError,
  enrolTotp,
  goodPassword,
  makeAuth,
  nextCode,
  outcome,
  signIn,
} from "./fixtures.test-support.js";
import { login } from "./login.js";
import { refresh } from "./refresh.js";
import { beginTotpSetup } from "./totp-enrolment.js";
import { verifyAccessToken } from "./verify-access-token.js";

const minutes = (count: number) => count * 60_000;

/** An administrator signed in now (their session is a recent sign-in) and a user. */
async function adminAndUser(harness: Harness, roles: string[] = ["reader"]) {
  const adminUserId = await addUser(harness.auth, "root", goodPassword, ["admin"]);
  const userId = await addUser(harness.auth, "alice", goodPassword, roles);
  const { sessionId } = await verifyAccessToken(harness.auth, { token: (await signIn(harness, "root")).accessToken });
  return { adminUserId, userId, sessionId };
}

const stored = async (harness: Harness, userId: string) => (await harness.storage.users.findById(userId)) as UserRecord;

describe("updateUser", () => {
  it("sets roles and disables in one change: one token-version raise, every session ended, one user.updated naming both", async () => {
    const harness = makeAuth();
    const { adminUserId, userId, sessionId } = await adminAndUser(harness);
    const tokens = await signIn(harness, "alice");
    harness.clock.advance(1000);
    harness.events.length = 0;
    const user = await updateUser(harness.auth, { adminUserId, sessionId, userId, roles: ["editor"], disabled: true });
    expect(user).toEqual({
      id: userId,
      username: "alice",
      roles: ["editor"],
      totpEnabled: false,
      email: null,
      emailVerified: false,
      createdAt: harness.clock.now - 1000,
      disabled: true,
    });
    expect(await stored(harness, userId)).toMatchObject({
      roles: ["editor"],
      disabled: true,
      tokenVersion: 1,
      updatedAt: harness.clock.now,
    });
    expect(harness.events.map((event) => event.type)).toEqual(["token_version.raised", "sessions.revoked_all", "user.updated"]);
    expect(harness.events.at(-1)).toEqual({
      type: "user.updated",
      userId,
      changes: ["roles", "disabled"],
      by: adminUserId,
      at: harness.clock.now,
    });
    expect(await outcome(verifyAccessToken(harness.auth, { token: tokens.accessToken }))).toBe(ErrorCode.InvalidToken);
    expect(await outcome(refresh(harness.auth, { refreshToken: tokens.refreshToken }))).toBe(ErrorCode.InvalidToken);
  });

  it("TV-1: new roles end the user's tokens; the same roles in another order, or enabling an enabled user, change nothing", async () => {
    const harness = makeAuth();
    const { adminUserId, userId, sessionId } = await adminAndUser(harness, ["a", "b"]);
    const tokens = await signIn(harness, "alice");
    harness.events.length = 0;
    const same = await updateUser(harness.auth, { adminUserId, sessionId, userId, roles: ["b", "a", "a"], disabled: false });
    expect(same).toMatchObject({ roles: ["a", "b"], disabled: false });
    expect(harness.events).toEqual([]);
    expect((await stored(harness, userId)).tokenVersion).toBe(0);
    await verifyAccessToken(harness.auth, { token: tokens.accessToken });
    const changed = await updateUser(harness.auth, { adminUserId, sessionId, userId, roles: ["a"] });
    expect(changed.roles).toEqual(["a"]);
    expect(harness.events.map((event) => [event.type, "reason" in event ? event.reason : undefined])).toEqual([
      ["token_version.raised", "roles_changed"],
      ["user.updated", undefined],
    ]);
    expect(await outcome(verifyAccessToken(harness.auth, { token: tokens.accessToken }))).toBe(ErrorCode.InvalidToken);
    const enabled = await updateUser(harness.auth, { adminUserId, sessionId, userId, disabled: true });
    expect(enabled.disabled).toBe(true);
    const again = await updateUser(harness.auth, { adminUserId, sessionId, userId, disabled: false });
    expect(again.disabled).toBe(false);
    expect((await stored(harness, userId)).tokenVersion).toBe(2);
    await signIn(harness, "alice");
  });

  it("AD-1: an administrator cannot disable themselves nor take the admin role from themselves (40900), before any proof is asked", async () => {
    const harness = makeAuth({ adminRole: "staff" });
    const adminUserId = await addUser(harness.auth, "root", goodPassword, ["staff", "x"]);
    const before = await stored(harness, adminUserId);
    const attempts = [
      { disabled: true },
      { roles: ["x"] },
      { roles: [] },
      { roles: ["Staff"] },
      { roles: ["staff"], disabled: true },
    ];
    for (const change of attempts) {
      const error = await authError(updateUser(harness.auth, { adminUserId, userId: adminUserId, ...change }));
      expect(error.code, JSON.stringify(change)).toBe(ErrorCode.Conflict);
    }
    expect(await stored(harness, adminUserId)).toEqual(before);
    expect(harness.events.filter((event) => event.type === "user.updated")).toEqual([]);
    const kept = await updateUser(harness.auth, {
      adminUserId,
      userId: adminUserId,
      roles: ["staff"],
      disabled: false,
      password: goodPassword,
    });
    expect(kept.roles).toEqual(["staff"]);
    const enabled = await updateUser(harness.auth, { adminUserId, userId: adminUserId, disabled: false, password: goodPassword });
    expect(enabled).toMatchObject({ roles: ["staff"], disabled: false });
  });

  it("a directory user's roles come from the directory policy (40900); disabling one works", async () => {
    const harness = makeAuth();
    const { adminUserId, sessionId } = await adminAndUser(harness);
    const now = harness.clock.now;
    const directoryUser: UserRecord = {
      id: "directory-user",
      username: "dora",
      usernameKey: "dora",
      passwordHash: null,
      roles: ["reader"],
      disabled: false,
      tokenVersion: 0,
      source: "directory",
      email: null,
      emailVerified: false,
      createdAt: now,
      updatedAt: now,
    };
    await harness.storage.users.create(directoryUser);
    const refused = await authError(
      updateUser(harness.auth, { adminUserId, sessionId, userId: "directory-user", roles: ["admin"] }),
    );
    expect([refused.code, refused.message]).toEqual([
      ErrorCode.Conflict,
      "A directory user's roles come from the directory policy",
    ]);
    expect((await updateUser(harness.auth, { adminUserId, sessionId, userId: "directory-user", disabled: true })).disabled).toBe(
      true,
    );
  });

  it("AD-1, STUP-3: the administrator re-authenticates: a recent sign-in, else their own password and TOTP code; the user's password is never set", async () => {
    const harness = makeAuth();
    const { adminUserId, userId, sessionId } = await adminAndUser(harness);
    const { secret } = await enrolTotp(harness.auth, adminUserId);
    harness.clock.advance(minutes(6));
    const change = { adminUserId, sessionId, userId };
    const unproven = await authError(updateUser(harness.auth, { ...change, roles: ["x"] }));
    expect(unproven.code).toBe(ErrorCode.MissingParameter);
    const alone = await authError(updateUser(harness.auth, { ...change, roles: ["x"], password: goodPassword }));
    expect(alone.code).toBe(ErrorCode.MissingParameter);
    const code = () => nextCode(harness, secret);
    const wrong = await authError(
      updateUser(harness.auth, { ...change, roles: ["x"], password: "a new password for alice", totpCode: code() }),
    );
    expect(wrong.code).toBe(ErrorCode.AuthenticationFailed);
    expect(await outcome(updateUser(harness.auth, { ...change, roles: ["x"], password: goodPassword, totpCode: "000000" }))).toBe(
      ErrorCode.SecondFactorFailed,
    );
    expect((await stored(harness, userId)).roles).toEqual(["reader"]);
    const proven = () => ({ ...change, password: goodPassword, totpCode: code() });
    expect((await updateUser(harness.auth, { ...proven(), roles: ["x"] })).roles).toEqual(["x"]);
    expect((await updateUser(harness.auth, { ...proven(), roles: ["y"] })).roles).toEqual(["y"]);
    expect((await login(harness.auth, { username: "alice", password: goodPassword })).status).toBe("authenticated");
    expect(await outcome(login(harness.auth, { username: "alice", password: "a new password for alice" }))).toBe(
      ErrorCode.AuthenticationFailed,
    );
  });

  it("PW-5: no change is 40001, a disabled that is no boolean 40002, bad roles 42200, an unknown user 40400, an administrator gone 40101", async () => {
    const harness = makeAuth();
    const { adminUserId, userId, sessionId } = await adminAndUser(harness);
    const answer = async (input: Record<string, unknown>) => {
      const error = await authError(updateUser(harness.auth, { adminUserId, sessionId, userId, ...input } as never));
      return [error.code, error.message];
    };
    expect(await answer({})).toEqual([ErrorCode.MissingParameter, "disabled, roles or fields is required"]);
    expect(await answer({ disabled: "true" })).toEqual([ErrorCode.MalformedParameter, "disabled must be true or false"]);
    expect(await answer({ disabled: 1, roles: ["a"] })).toEqual([ErrorCode.MalformedParameter, "disabled must be true or false"]);
    expect(await answer({ roles: [""] })).toEqual([
      ErrorCode.ValidationFailed,
      "roles must be a list of names of 1 to 64 characters",
    ]);
    expect(await answer({ roles: ["a"], userId: "missing" })).toEqual([ErrorCode.NotFound, "No such user"]);
    expect((await answer({ roles: ["a"], adminUserId: "gone" }))[0]).toBe(ErrorCode.InvalidToken);
    expect((await stored(harness, userId)).roles).toEqual(["reader"]);
  });
});

describe("endUserSessions", () => {
  it("ends every session of the user through the token version, says how many, and that an administrator did it", async () => {
    const harness = makeAuth();
    const { adminUserId, userId } = await adminAndUser(harness);
    const sessions = [await signIn(harness, "alice"), await signIn(harness, "alice")];
    harness.events.length = 0;
    expect(await endUserSessions(harness.auth, { adminUserId, userId })).toEqual({ ended: 2 });
    expect(harness.events).toEqual([
      { type: "token_version.raised", userId, tokenVersion: 1, reason: "ended_by_admin", at: harness.clock.now },
      { type: "sessions.revoked_all", userId, count: 2, reason: "ended_by_admin", by: adminUserId, at: harness.clock.now },
    ]);
    for (const tokens of sessions) {
      expect(await outcome(refresh(harness.auth, { refreshToken: tokens.refreshToken }))).toBe(ErrorCode.InvalidToken);
    }
    expect(await endUserSessions(harness.auth, { adminUserId, userId })).toEqual({ ended: 0 });
    expect(await outcome(endUserSessions(harness.auth, { adminUserId, userId: "missing" }))).toBe(ErrorCode.NotFound);
  });
});

describe("removeTotp", () => {
  it("removes the factor and the recovery codes, ends every session, and reports totp_removed; nothing secret is answered", async () => {
    const harness = makeAuth();
    const { adminUserId, userId, sessionId } = await adminAndUser(harness);
    const { recoveryCodes } = await enrolTotp(harness.auth, userId);
    expect((await login(harness.auth, { username: "alice", password: goodPassword })).status).toBe("totp_required");
    harness.events.length = 0;
    expect(await removeTotp(harness.auth, { adminUserId, sessionId, userId })).toEqual({ removed: true });
    expect(await harness.storage.totp.get(userId)).toBeNull();
    expect(await harness.storage.recoveryCodes.count(userId)).toBe(0);
    expect((await stored(harness, userId)).tokenVersion).toBe(1);
    expect(harness.events).toEqual([
      { type: "token_version.raised", userId, tokenVersion: 1, reason: "totp_removed", at: harness.clock.now },
      { type: "user.updated", userId, changes: ["totp_removed"], by: adminUserId, at: harness.clock.now },
    ]);
    expect(JSON.stringify(harness.events)).not.toContain(recoveryCodes[0]);
    expect((await login(harness.auth, { username: "alice", password: goodPassword })).status).toBe("authenticated");
    const again = await authError(removeTotp(harness.auth, { adminUserId, sessionId, userId }));
    expect([again.code, again.message]).toEqual([ErrorCode.Conflict, "TOTP is not enabled"]);
  });

  it("needs the administrator's re-authentication; a factor still pending is not enabled (40900) and stays", async () => {
    const harness = makeAuth();
    const { adminUserId, userId, sessionId } = await adminAndUser(harness);
    await enrolTotp(harness.auth, userId);
    harness.clock.advance(minutes(6));
    expect(await outcome(removeTotp(harness.auth, { adminUserId, sessionId, userId }))).toBe(ErrorCode.MissingParameter);
    expect(await outcome(removeTotp(harness.auth, { adminUserId, sessionId, userId, password: "wrong password" }))).toBe(
      ErrorCode.AuthenticationFailed,
    );
    expect((await harness.storage.totp.get(userId))?.enabled).toBe(true);
    expect(await removeTotp(harness.auth, { adminUserId, sessionId, userId, password: goodPassword })).toEqual({ removed: true });
    const pendingId = await addUser(harness.auth, "pending");
    await beginTotpSetup(harness.auth, { userId: pendingId, password: goodPassword });
    expect(await outcome(removeTotp(harness.auth, { adminUserId, sessionId, userId: pendingId, password: goodPassword }))).toBe(
      ErrorCode.Conflict,
    );
    expect(await harness.storage.totp.get(pendingId)).not.toBeNull();
    expect(await outcome(removeTotp(harness.auth, { adminUserId, sessionId, userId: "missing", password: goodPassword }))).toBe(
      ErrorCode.NotFound,
    );
  });
});
