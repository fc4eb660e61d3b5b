import { describe, expect, it } from "vitest";
import { ErrorCode } from "../errors/codes.js";
import { updateUser } from "../flows/admin-user-changes.js";
import { adminCreateUser } from "../flows/admin-users.js";
import { createUser } from "../flows/create-user.js";
import { ensureUser } from "../flows/ensure-user.js";
import {
  type AuthOverrides,
  addUser,
  authError,
  goodPassword,
  makeAuth,
  signIn,
  tokensOf,
} from "../flows/fixtures.test-support.js";
import { getPublicUser } from "../flows/manage-users.js";
import { refresh } from "../flows/refresh.js";
import { register } from "../flows/register.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { memoryStorage } from "../storage/memory.js";
import { field } from "./field.js";
import { setUserFields, updateProfile } from "./profile.js";

const fields = {
  company: field.string({ maxLength: 100, signUp: true, selfEdit: true }),
  plan: field.enum(["free", "pro"], { default: "free", inToken: true }),
  beta: field.boolean({ default: false, selfEdit: true, inToken: true, inMe: false }),
  seats: field.integer({ min: 1, max: 500 }),
};

const fieldsAuth = (overrides: AuthOverrides = {}) => makeAuth({ signUp: { enabled: true }, user: { fields }, ...overrides });

/** The claims of an access token, unverified: what a test reads of a token it was just given. */
function claimsOf(accessToken: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(accessToken.split(".")[1] as string, "base64url").toString("utf8"));
}

describe("additional user fields in the flows", () => {
  it("UF-1: sign-up stores the signUp fields given and the defaults of the others; the token set's user shows them", async () => {
    const harness = fieldsAuth();
    const tokens = tokensOf(
      await register(harness.auth, { username: "newcomer", password: goodPassword, fields: { company: "Acme" } }),
    );
    expect(tokens.user).toMatchObject({ username: "newcomer", company: "Acme", plan: "free", seats: null });
    expect(tokens.user).not.toHaveProperty("beta");
    const stored = await harness.storage.users.findByUsernameKey("newcomer");
    expect(stored?.fields).toEqual({ company: "Acme", plan: "free", beta: false, seats: null });
  });

  it("UF-1: sign-up refuses a field that is not signUp, a malformed one and one out of its limits, storing no account", async () => {
    const harness = fieldsAuth();
    const attempt = (given: Record<string, unknown>) =>
      authError(register(harness.auth, { username: "newcomer", password: goodPassword, fields: given as never }));
    const notSignUp = await attempt({ plan: "pro" });
    expect([notSignUp.code, notSignUp.message]).toEqual([ErrorCode.ValidationFailed, "fields.plan cannot be set at sign-up"]);
    const malformed = await attempt({ company: 42 });
    expect([malformed.code, malformed.message]).toEqual([ErrorCode.MalformedParameter, "fields.company must be a string"]);
    const long = await attempt({ company: "x".repeat(101) });
    expect([long.code, long.message]).toEqual([ErrorCode.ValidationFailed, "fields.company must be at most 100 characters"]);
    expect(await harness.storage.users.findByUsernameKey("newcomer")).toBeNull();
  });

  it("inToken fields ride in the fields claim and on AccessContext.user, read from the token with no storage read", async () => {
    const harness = fieldsAuth();
    await createUser(harness.auth, { username: "alice", password: goodPassword, roles: ["member"], fields: { plan: "pro" } });
    const tokens = await signIn(harness, "alice");
    expect(claimsOf(tokens.accessToken).fields).toEqual({ plan: "pro", beta: false });
    const access = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
    expect(access.user).toEqual({ id: access.userId, roles: ["member"], plan: "pro", beta: false });
    expect(Object.isFrozen(access.user)).toBe(true);
    // Without inToken fields, tokens are as they were: no claim.
    const plain = makeAuth({ user: { fields: { company: fields.company } } });
    await addUser(plain.auth, "bob");
    expect(claimsOf((await signIn(plain, "bob")).accessToken)).not.toHaveProperty("fields");
  });

  it("the user changes selfEdit fields only; the change shows in /me at once and in tokens from the next refresh, ending no session", async () => {
    const harness = fieldsAuth();
    const userId = await addUser(harness.auth, "alice");
    const tokens = await signIn(harness, "alice");
    const refused = await authError(updateProfile(harness.auth, { userId, fields: { plan: "pro" } }));
    expect([refused.code, refused.message]).toEqual([ErrorCode.ValidationFailed, "fields.plan cannot be changed by the user"]);
    const missing = await authError(updateProfile(harness.auth, { userId, fields: undefined as never }));
    expect([missing.code, missing.message]).toEqual([ErrorCode.MissingParameter, "fields is required"]);
    const user = await updateProfile(harness.auth, { userId, fields: { company: "Acme", beta: true } });
    expect(user).toMatchObject({ id: userId, company: "Acme", plan: "free" });
    expect(await getPublicUser(harness.auth, { userId })).toMatchObject({ company: "Acme" });
    expect(harness.events.at(-1)).toMatchObject({ type: "user.updated", userId, changes: ["fields"], by: userId });
    // The old token still works and still says beta: false; the refreshed one says true.
    expect((await verifyAccessToken(harness.auth, { token: tokens.accessToken })).user).toMatchObject({ beta: false });
    const renewed = await refresh(harness.auth, { refreshToken: tokens.refreshToken });
    expect((await verifyAccessToken(harness.auth, { token: renewed.accessToken })).user).toMatchObject({ beta: true });
  });

  it("a profile update that changes nothing writes and emits nothing", async () => {
    const harness = fieldsAuth();
    const userId = await addUser(harness.auth, "alice");
    const before = harness.events.length;
    await updateProfile(harness.auth, { userId, fields: { beta: false } });
    expect(harness.events.length).toBe(before);
  });

  it("administrators set any field (updateUser, adminCreateUser); the service with setUserFields; both checked", async () => {
    const harness = fieldsAuth();
    const adminUserId = await addUser(harness.auth, "root", goodPassword, ["admin"]);
    const userId = await addUser(harness.auth, "alice");
    const updated = await updateUser(harness.auth, {
      adminUserId,
      userId,
      password: goodPassword,
      fields: { plan: "pro", seats: 5 },
    });
    expect(updated).toMatchObject({ plan: "pro", seats: 5 });
    expect(harness.events.at(-1)).toMatchObject({ type: "user.updated", changes: ["fields"], by: adminUserId });
    const bad = await authError(updateUser(harness.auth, { adminUserId, userId, password: goodPassword, fields: { seats: 0 } }));
    expect([bad.code, bad.message]).toEqual([ErrorCode.ValidationFailed, "fields.seats must be from 1 to 500"]);
    const made = await adminCreateUser(harness.auth, { adminUserId, username: "carol", fields: { plan: "pro" } });
    expect(made).toMatchObject({ username: "carol", plan: "pro", company: null });
    const set = await setUserFields(harness.auth, { userId, fields: { company: "Initech" } });
    expect(set.fields).toEqual({ company: "Initech", plan: "pro", beta: false, seats: 5 });
    expect(harness.events.at(-1)).toMatchObject({ type: "user.updated", changes: ["fields"], by: null });
  });

  it("createUser and ensureUser take fields: defaults fill the rest, and ensureUser names fields when a given one differs", async () => {
    const harness = fieldsAuth();
    const user = await createUser(harness.auth, { username: "alice", password: goodPassword, fields: { seats: 3 } });
    expect(user.fields).toEqual({ company: null, plan: "free", beta: false, seats: 3 });
    const again = await ensureUser(harness.auth, { username: "alice", fields: { seats: 3 } });
    expect(again).toMatchObject({ created: false, differs: [] });
    const differs = await ensureUser(harness.auth, { username: "alice", fields: { plan: "pro" } });
    expect(differs.differs).toEqual(["fields"]);
    const bad = await authError(ensureUser(harness.auth, { username: "alice", fields: { plan: "gold" } as never }));
    expect(bad.code).toBe(ErrorCode.ValidationFailed);
  });

  it("a user stored before the fields were declared reads with the defaults, in /me, tokens and the management view", async () => {
    const storage = memoryStorage();
    const before = makeAuth({ storage });
    const userId = await addUser(before.auth, "alice");
    expect((await storage.users.findById(userId))?.fields).toBeUndefined();
    const after = fieldsAuth({ storage });
    expect(await getPublicUser(after.auth, { userId })).toMatchObject({ company: null, plan: "free", seats: null });
    const tokens = await signIn(after, "alice");
    expect(claimsOf(tokens.accessToken).fields).toEqual({ plan: "free", beta: false });
    const set = await setUserFields(after.auth, { userId, fields: { seats: 2 } });
    expect(set.fields).toEqual({ company: null, plan: "free", beta: false, seats: 2 });
  });

  it("the publicUser hook cannot replace a declared field, nor a field the contract's", async () => {
    const harness = fieldsAuth({ publicUser: () => ({ plan: "hooked", role: "x" }) });
    const userId = await addUser(harness.auth, "alice");
    expect(await getPublicUser(harness.auth, { userId })).toMatchObject({ plan: "free", role: "x" });
  });
});
