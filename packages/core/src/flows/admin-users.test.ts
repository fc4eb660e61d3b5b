import { describe, expect, it } from "vitest";
import { ErrorCode } from "../errors/codes.js";
import { adminCreateUser, adminUserView, getUserDetails } from "./admin-users.js";
import { createUser } from "./create-user.js";
import { addUser, authError, goodPassword, makeAuth, signIn } from "./fixtures.test-support.js";
import { logout } from "./logout.js";
import { setUserRoles } from "./manage-users.js";
import { makeAuthenticator, makePasskeyAuth, registerPasskey } from "./passkeys.test-support.js";

describe("admin views of users", () => {
  it("getUserDetails counts live sessions only (not ended, expired or of an older token version), passkeys, and linked providers", async () => {
    const harness = makePasskeyAuth();
    const userId = await addUser(harness.auth, "counted", goodPassword, ["r"]);
    for (const label of ["Laptop", "Phone"]) await registerPasskey(harness.auth, userId, makeAuthenticator(), label);
    const older = await signIn(harness, "counted");
    await setUserRoles(harness.auth, { userId, roles: ["s"] });
    const ended = await signIn(harness, "counted");
    await logout(harness.auth, { refreshToken: ended.refreshToken });
    await signIn(harness, "counted");
    await signIn(harness, "counted");
    expect(older.user.id).toBe(userId);
    for (const [provider, subject] of [
      ["corp", "1"],
      ["github", "2"],
      ["corp", "3"],
    ] as const) {
      await harness.storage.identities.link({
        provider,
        subject,
        userId,
        email: null,
        emailVerified: false,
        createdAt: harness.clock.now,
        lastUsedAt: null,
      });
    }
    const details = await getUserDetails(harness.auth, { userId });
    expect(details).toEqual({
      id: userId,
      username: "counted",
      roles: ["s"],
      totpEnabled: false,
      email: null,
      emailVerified: false,
      createdAt: harness.clock.now,
      disabled: false,
      sessions: 2,
      passkeys: 2,
      identities: ["corp", "github"],
    });
    harness.clock.advance(harness.auth.config.ttl.refresh * 1000);
    expect((await getUserDetails(harness.auth, { userId })).sessions).toBe(0);
    const other = await createUser(harness.auth, { username: "nothing" });
    expect(await getUserDetails(harness.auth, { userId: other.id })).toMatchObject({ sessions: 0, passkeys: 0, identities: [] });
    expect((await authError(getUserDetails(harness.auth, { userId: "missing" }))).code).toBe(ErrorCode.NotFound);
    expect((await authError(getUserDetails(harness.auth, { userId: 7 as never }))).code).toBe(ErrorCode.MalformedParameter);
  });

  it("the publicUser hook adds to the admin views; disabled and the contract's fields win", async () => {
    const harness = makeAuth({ publicUser: () => ({ disabled: "no", id: "other", team: "blue" }) });
    const user = await createUser(harness.auth, { username: "hooked", disabled: true });
    const record = await harness.storage.users.findById(user.id);
    expect(await adminUserView(harness.auth, record as never)).toEqual({
      id: user.id,
      username: "hooked",
      roles: [],
      totpEnabled: false,
      email: null,
      emailVerified: false,
      createdAt: harness.clock.now,
      disabled: true,
      team: "blue",
    });
  });
});

describe("adminCreateUser", () => {
  it("makes a local account with no session; user.created says an administrator made it, and which", async () => {
    const harness = makeAuth();
    const adminUserId = await addUser(harness.auth, "root", goodPassword, ["admin"]);
    harness.events.length = 0;
    const user = await adminCreateUser(harness.auth, {
      adminUserId,
      username: "Made",
      password: goodPassword,
      email: "made@example.com",
      roles: ["b", "a", "b"],
    });
    expect(user).toEqual({
      id: expect.any(String),
      username: "Made",
      roles: ["b", "a"],
      totpEnabled: false,
      email: "made@example.com",
      emailVerified: false,
      createdAt: harness.clock.now,
      disabled: false,
    });
    expect(harness.events).toEqual([{ type: "user.created", userId: user.id, by: "admin", adminUserId, at: harness.clock.now }]);
    expect(await harness.storage.sessions.listByUser(user.id, harness.clock.now, 10)).toEqual([]);
    expect(await harness.storage.users.findById(user.id)).toMatchObject({ email: "made@example.com", emailVerified: false });
    await signIn(harness, "made");
    const bare = await adminCreateUser(harness.auth, { adminUserId, username: "bare" });
    expect((await harness.storage.users.findById(bare.id))?.passwordHash).toBeNull();
    expect(bare.roles).toEqual([]);
  });

  it("AD-1: the admin role is not granted at creation (42200): PATCH grants it after re-authentication", async () => {
    const harness = makeAuth({ adminRole: "staff" });
    const adminUserId = await addUser(harness.auth, "root", goodPassword, ["staff"]);
    const refused = await authError(adminCreateUser(harness.auth, { adminUserId, username: "sneaky", roles: ["x", "staff"] }));
    expect([refused.code, refused.message]).toEqual([
      ErrorCode.ValidationFailed,
      "The admin role is granted with PATCH /auth/admin/users/:id, which asks you to confirm it is you",
    ]);
    expect(await harness.storage.users.findByUsernameKey("sneaky")).toBeNull();
    expect((await adminCreateUser(harness.auth, { adminUserId, username: "admin-named", roles: ["admin"] })).roles).toEqual([
      "admin",
    ]);
  });

  it("PW-3, PW-5: the username rule, the password policy and the field types apply; a taken name is 40900", async () => {
    const harness = makeAuth();
    const adminUserId = await addUser(harness.auth, "root", goodPassword, ["admin"]);
    const answer = async (input: Record<string, unknown>) => {
      const error = await authError(adminCreateUser(harness.auth, { adminUserId, ...input } as never));
      return [error.code, error.message];
    };
    expect(await answer({ username: "weak", password: "short" })).toEqual([
      ErrorCode.ValidationFailed,
      "The password must be at least 8 characters long",
    ]);
    expect(await answer({ username: "ROOT" })).toEqual([ErrorCode.Conflict, "The username is taken"]);
    expect(await answer({ username: "x", email: {} })).toEqual([ErrorCode.MalformedParameter, "email must be a string"]);
    expect(await answer({ username: "x", roles: "admin" })).toEqual([
      ErrorCode.ValidationFailed,
      "roles must be a list of names of 1 to 64 characters",
    ]);
    expect(await answer({})).toEqual([ErrorCode.MissingParameter, "username is required"]);
    expect(await answer({ username: "x", adminUserId: undefined })).toEqual([
      ErrorCode.MissingParameter,
      "adminUserId is required",
    ]);
  });
});
