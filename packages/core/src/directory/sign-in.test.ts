import { randomBytes } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { ErrorCode } from "../errors/codes.js";
import { getDirectoryPolicy, saveDirectoryPolicy } from "../flows/directory-policy.js";
import {
  type AuthOverrides,
  type Harness,
  addUser,
  authError,
  codeAt,
  enrolTotp,
  generousThrottle,
  goodPassword,
  makeAuth,
  signIn,
  signingSecret,
  slowStorage,
  wrongCodeAt,
} from "../flows/fixtures.test-support.js";
import { listIdentities, unlinkIdentity } from "../flows/identities.js";
import { type LoginResult, login } from "../flows/login.js";
import { setUserDisabled } from "../flows/manage-users.js";
import { makeAuthenticator, passkeySignIn, passkeys } from "../flows/passkeys.test-support.js";
import { refresh } from "../flows/refresh.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { verifyTotp } from "../flows/verify-totp.js";
import { webauthnRegisterBegin, webauthnRegisterFinish } from "../flows/webauthn-register.js";
import { memoryStorage } from "../storage/memory.js";
import type { TokenSet } from "../tokens/issue-tokens.js";
import { type FakeDirectory, fakeDirectory, groupsDn, person, workingPolicy } from "./directory.test-support.js";
import type { DirectoryPolicyInput } from "./policy.js";
import { readDirectorySettings, writeDirectorySettings } from "./policy-store.js";
import { directoryPasswordMatches, directoryUserNow } from "./sign-in.js";

interface DirectoryHarness extends Harness {
  directory: FakeDirectory;
}

/** An auth with the fake directory holding `people`, and `policy` saved over the working one. */
async function makeDirectoryAuth(
  people = [
    person("alice", [groupsDn.engineers, groupsDn.admins]),
    person("bob", [groupsDn.engineers]),
    person("nora", [groupsDn.sales]),
  ],
  policy: DirectoryPolicyInput = {},
  overrides: AuthOverrides = {},
): Promise<DirectoryHarness> {
  const directory = fakeDirectory(people);
  const harness = makeAuth({ directory, throttle: generousThrottle, ...overrides });
  await saveDirectoryPolicy(harness.auth, { ...workingPolicy, ...policy });
  return { ...harness, directory };
}

const passwordOf = (username: string) => `${username} directory password`;

async function directoryLogin(harness: Harness, username: string, password = passwordOf(username)): Promise<LoginResult> {
  return login(harness.auth, { username, password, provider: "directory" });
}

async function directorySignIn(harness: Harness, username: string): Promise<TokenSet> {
  const result = await directoryLogin(harness, username);
  if (result.status !== "authenticated") throw new Error(`expected a session, got ${result.status}`);
  return result.tokens;
}

async function answerOf(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  const { code, message } = await authError(promise);
  return { code, message };
}

describe("directory login", () => {
  it("LDAP-5: a first sign-in makes a directory account: source directory, no password, the role of the lowest priority number, amr pwd", async () => {
    const harness = await makeDirectoryAuth();
    const tokens = await directorySignIn(harness, "alice");
    const access = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
    expect({ roles: access.roles, amr: access.amr }).toEqual({ roles: ["admin"], amr: ["pwd"] });
    const user = await harness.storage.users.findById(access.userId);
    expect(user).toMatchObject({
      username: "alice",
      usernameKey: "alice",
      passwordHash: null,
      source: "directory",
      roles: ["admin"],
    });
    expect(user?.tokenVersion).toBe(0);
    expect(await harness.storage.identities.find("directory", "uuid-alice")).toEqual({
      provider: "directory",
      subject: "uuid-alice",
      userId: access.userId,
      email: null,
      emailVerified: false,
      createdAt: harness.clock.now,
      lastUsedAt: harness.clock.now,
    });
    expect(tokens.user).toMatchObject({ username: "alice", roles: ["admin"] });
    expect(harness.events.map((event) => event.type)).toEqual(["directory_policy.saved", "user.created", "login.succeeded"]);
    expect(harness.events[1]).toEqual({ type: "user.created", userId: access.userId, by: "directory", at: harness.clock.now });
    expect(harness.directory.calls.map((call) => [call.method, call.settings.bindPassword])).toEqual([
      ["authenticate", "service account password"],
    ]);
  });

  it("SE-1: the session of a directory sign-in keeps the request's user agent", async () => {
    const harness = await makeDirectoryAuth();
    const result = await login(harness.auth, {
      username: "bob",
      password: passwordOf("bob"),
      provider: "directory",
      userAgent: "Mozilla/5.0 (directory test)",
    });
    if (result.status !== "authenticated") throw new Error(`expected a session, got ${result.status}`);
    const { sessionId } = await verifyAccessToken(harness.auth, { token: result.tokens.accessToken });
    expect((await harness.storage.sessions.findSession(sessionId))?.userAgent).toBe("Mozilla/5.0 (directory test)");
  });

  it("RL-5: the TOTP step of a directory sign-in from a client with a device token spends that device's budget, not the account's", async () => {
    const harness = await makeDirectoryAuth(
      undefined,
      {},
      { throttle: { ...generousThrottle, device: [{ limit: 3, window: "15m" }] } },
    );
    const { user, deviceToken } = await directorySignIn(harness, "alice");
    const { secret } = await enrolTotp(harness.auth, user.id, passwordOf("alice"));
    const pending = await login(harness.auth, {
      username: "alice",
      password: passwordOf("alice"),
      provider: "directory",
      deviceToken,
    });
    if (pending.status !== "totp_required") throw new Error("expected the second factor");
    const wrong = wrongCodeAt(secret, harness.clock.now);
    for (let failure = 0; failure < 2; failure += 1) {
      expect((await authError(verifyTotp(harness.auth, { tempToken: pending.tempToken, code: wrong }))).code).toBe(40103);
    }
    const fromDevice = login(harness.auth, {
      username: "alice",
      password: passwordOf("alice"),
      provider: "directory",
      deviceToken,
    });
    expect((await authError(fromDevice)).code).toBe(ErrorCode.TooManyAttempts);
    expect((await directoryLogin(harness, "alice")).status).toBe("totp_required");
  });

  it("LDAP-5: the next sign-in is the same account, its roles recomputed from the groups", async () => {
    const harness = await makeDirectoryAuth();
    const first = await verifyAccessToken(harness.auth, { token: (await directorySignIn(harness, "bob")).accessToken });
    expect(first.roles).toEqual(["engineer"]);
    (harness.directory.people[1] as { entry: { groups: string[] } }).entry.groups = [groupsDn.admins];
    const second = await verifyAccessToken(harness.auth, { token: (await directorySignIn(harness, "bob")).accessToken });
    expect(second).toMatchObject({ userId: first.userId, roles: ["admin"] });
    expect((await harness.storage.users.findById(first.userId))?.roles).toEqual(["admin"]);
    expect(harness.events.filter((event) => event.type === "user.created")).toHaveLength(1);
  });

  it("TV-1: roles changed at sign-in raise the token version: tokens with the old roles are refused, the new ones work", async () => {
    const harness = await makeDirectoryAuth();
    const before = await directorySignIn(harness, "bob");
    const unchanged = await directorySignIn(harness, "bob");
    expect(harness.events.filter((event) => event.type === "token_version.raised")).toEqual([]);
    await verifyAccessToken(harness.auth, { token: before.accessToken });
    (harness.directory.people[1] as ReturnType<typeof person>).entry.groups = [groupsDn.admins];
    const after = await directorySignIn(harness, "bob");
    for (const old of [before, unchanged]) {
      expect((await authError(verifyAccessToken(harness.auth, { token: old.accessToken }))).code).toBe(ErrorCode.InvalidToken);
      expect((await authError(refresh(harness.auth, { refreshToken: old.refreshToken }))).code).toBe(ErrorCode.InvalidToken);
    }
    expect((await verifyAccessToken(harness.auth, { token: after.accessToken })).roles).toEqual(["admin"]);
    expect((await refresh(harness.auth, { refreshToken: after.refreshToken })).user.roles).toEqual(["admin"]);
    expect(harness.events.find((event) => event.type === "token_version.raised")).toMatchObject({
      reason: "roles_changed",
      tokenVersion: 1,
    });
  });

  it("a renamed entry, same stable id, stays the same account under its new username; the old name is free", async () => {
    const harness = await makeDirectoryAuth();
    const { user } = await directorySignIn(harness, "bob");
    const bob = harness.directory.people[1] as ReturnType<typeof person>;
    bob.entry.username = "Robert";
    bob.entry.dn = "uid=Robert,ou=people,dc=example,dc=com";
    const renamed = await login(harness.auth, { username: "Robert", password: passwordOf("bob"), provider: "directory" });
    expect(renamed.status === "authenticated" && renamed.tokens.user).toMatchObject({ id: user.id, username: "Robert" });
    expect(await harness.storage.users.findByUsernameKey("robert")).toMatchObject({ id: user.id });
    expect(await harness.storage.users.findByUsernameKey("bob")).toBeNull();
    expect(harness.events.filter((event) => event.type === "token_version.raised")).toEqual([]);
    bob.entry.username = "robert";
    await login(harness.auth, { username: "robert", password: passwordOf("bob"), provider: "directory" });
    expect(await harness.storage.users.findById(user.id)).toMatchObject({ username: "robert", usernameKey: "robert" });
  });

  it("a sign-in that changes nothing writes nothing", async () => {
    const harness = await makeDirectoryAuth();
    const { user } = await directorySignIn(harness, "bob");
    const before = await harness.storage.users.findById(user.id);
    harness.clock.advance(60_000);
    const update = vi.spyOn(harness.storage.users, "update");
    await directorySignIn(harness, "bob");
    expect(update).not.toHaveBeenCalled();
    expect(await harness.storage.users.findById(user.id)).toEqual(before);
  });

  it("roles an administrator set on a directory account, none or more, are replaced by the directory's at the next sign-in", async () => {
    const harness = await makeDirectoryAuth();
    const { user } = await directorySignIn(harness, "bob");
    for (const roles of [[], ["engineer", "extra"]]) {
      await harness.storage.users.update(user.id, { roles }, harness.clock.now);
      expect((await directorySignIn(harness, "bob")).user.roles).toEqual(["engineer"]);
    }
  });

  it("a first sign-in whose account was refused, with no link to be found after, is 40900 and stores nothing, never a crash", async () => {
    const harness = await makeDirectoryAuth();
    vi.spyOn(harness.storage.users, "createAccount").mockResolvedValueOnce(false);
    expect((await authError(directorySignIn(harness, "alice"))).code).toBe(ErrorCode.Conflict);
    expect(await harness.storage.identities.find("directory", "uuid-alice")).toBeNull();
    expect(await harness.storage.users.findByUsernameKey("alice")).toBeNull();
  });

  it("a first sign-in makes the account and its link in one write, under the id the store answers (an existing users table's own ids)", async () => {
    const harness = await makeDirectoryAuth();
    const link = vi.spyOn(harness.storage.identities, "link");
    const createAccount = harness.storage.users.createAccount.bind(harness.storage.users);
    vi.spyOn(harness.storage.users, "createAccount").mockImplementationOnce(async (account) => {
      await createAccount({ ...account, user: { ...account.user, id: "42" } });
      return "42";
    });
    const { user } = await directorySignIn(harness, "alice");
    expect(user.id).toBe("42");
    expect(link).not.toHaveBeenCalled();
    expect(await harness.storage.identities.find("directory", "uuid-alice")).toMatchObject({ userId: "42" });
    expect(harness.events.find((event) => event.type === "user.created")).toMatchObject({ userId: "42", by: "directory" });
  });

  it("an account another sign-in made between the look-up and the create is the one signed in to", async () => {
    const harness = await makeDirectoryAuth();
    const { user } = await directorySignIn(harness, "alice");
    vi.spyOn(harness.storage.users, "findById").mockResolvedValueOnce(null);
    expect((await directorySignIn(harness, "alice")).user.id).toBe(user.id);
    expect(await harness.storage.identities.find("directory", "uuid-alice")).toMatchObject({ userId: user.id });
  });

  it("LDAP-5: in no mapped group, the fallback role; without one, 40300, told only once the password was proven", async () => {
    const denying = await makeDirectoryAuth();
    expect(await answerOf(directoryLogin(denying, "nora", "not her password"))).toEqual({
      code: ErrorCode.AuthenticationFailed,
      message: "Invalid username or password",
    });
    expect(await answerOf(directoryLogin(denying, "nora"))).toEqual({
      code: ErrorCode.Forbidden,
      message: "No role is granted to this directory account",
    });
    expect(await denying.storage.users.findByUsernameKey("nora")).toBeNull();
    expect(denying.events.at(-1)).toMatchObject({ type: "login.failed", reason: "no_role", userId: null });

    const falling = await makeDirectoryAuth(undefined, { fallbackRole: "staff" });
    const tokens = await directorySignIn(falling, "nora");
    expect((await verifyAccessToken(falling.auth, { token: tokens.accessToken })).roles).toEqual(["staff"]);
    await saveDirectoryPolicy(falling.auth, { fallbackRole: null });
    await authError(directoryLogin(falling, "nora"));
    expect(falling.events.at(-1)).toMatchObject({ type: "login.failed", reason: "no_role", userId: tokens.user.id });
  });

  it("EN-1: an unknown user, a wrong password and a username of two entries are the same 40100 as a local failure", async () => {
    const harness = await makeDirectoryAuth([
      person("alice", [groupsDn.admins]),
      person("dave", [groupsDn.admins]),
      person("dave", [groupsDn.engineers]),
    ]);
    await addUser(harness.auth, "local-lou");
    const local = await answerOf(login(harness.auth, { username: "local-lou", password: "wrong password here" }));
    expect(local.code).toBe(ErrorCode.AuthenticationFailed);
    for (const [username, password] of [
      ["nobody", "any password at all"],
      ["alice", "not alice's password"],
      ["dave", passwordOf("dave")],
    ] as const) {
      expect(await answerOf(directoryLogin(harness, username, password)), username).toEqual(local);
    }
    const failures = harness.events.filter((event) => event.type === "login.failed");
    expect(failures.map((event) => [event.userId, event.reason])).toEqual(
      Array.from({ length: 4 }, (_, index) => [index === 0 ? expect.any(String) : null, "invalid_credentials"]),
    );
  });

  it("a directory username held by a local account, or by another entry's account, is 40900; nothing is linked", async () => {
    const harness = await makeDirectoryAuth();
    const localId = await addUser(harness.auth, "alice", goodPassword, ["user"]);
    expect(await answerOf(directorySignIn(harness, "alice"))).toEqual({
      code: ErrorCode.Conflict,
      message: "The directory username belongs to another account here; an administrator must resolve it",
    });
    expect(await harness.storage.users.findById(localId)).toMatchObject({ source: "local", roles: ["user"] });
    expect(await harness.storage.identities.find("directory", "uuid-alice")).toBeNull();
    await signIn(harness, "alice");

    const { user: bob } = await directorySignIn(harness, "bob");
    const newBob = person("bob", [groupsDn.admins]);
    newBob.entry.stableId = "uuid-new-bob";
    harness.directory.people.splice(1, 1, newBob);
    expect((await authError(directorySignIn(harness, "bob"))).code).toBe(ErrorCode.Conflict);
    expect(await harness.storage.users.findByUsernameKey("bob")).toMatchObject({ id: bob.id, roles: ["engineer"] });
    expect(await harness.storage.identities.find("directory", "uuid-new-bob")).toBeNull();
  });

  it("a sign-in that lost the race for the link to another still making the account never takes that link back", async () => {
    const harness = await makeDirectoryAuth();
    await addUser(harness.auth, "alice");
    const theirs = {
      provider: "directory",
      subject: "uuid-alice",
      userId: "account-being-made",
      email: null,
      emailVerified: false,
    };
    await harness.storage.identities.link({ ...theirs, createdAt: harness.clock.now, lastUsedAt: null });
    // As if the other sign-in linked the entry between this one's look-up and its own link.
    vi.spyOn(harness.storage.identities, "find").mockResolvedValueOnce(null);
    expect((await authError(directorySignIn(harness, "alice"))).code).toBe(ErrorCode.Conflict);
    expect(await harness.storage.identities.find("directory", "uuid-alice")).toMatchObject({ userId: "account-being-made" });
  });

  it("a link left by a sign-in cut off before its account, whose username is now taken, stays for a later sign-in", async () => {
    const harness = await makeDirectoryAuth();
    const left = {
      provider: "directory",
      subject: "uuid-alice",
      userId: "account-never-made",
      email: null,
      emailVerified: false,
    };
    await harness.storage.identities.link({ ...left, createdAt: harness.clock.now, lastUsedAt: null });
    await addUser(harness.auth, "alice");
    expect((await authError(directorySignIn(harness, "alice"))).code).toBe(ErrorCode.Conflict);
    expect(await harness.storage.identities.find("directory", "uuid-alice")).toMatchObject({ userId: "account-never-made" });
  });

  it("a rename onto a taken username is 40900 and the account keeps its name", async () => {
    const harness = await makeDirectoryAuth();
    await addUser(harness.auth, "taken-name");
    const { user } = await directorySignIn(harness, "bob");
    (harness.directory.people[1] as ReturnType<typeof person>).entry.username = "taken-name";
    const error = await authError(
      login(harness.auth, { username: "taken-name", password: passwordOf("bob"), provider: "directory" }),
    );
    expect(error.code).toBe(ErrorCode.Conflict);
    expect(await harness.storage.users.findById(user.id)).toMatchObject({ username: "bob" });
  });

  it("a directory username that cannot be a username here is 40900", async () => {
    const harness = await makeDirectoryAuth([person("pad\u00added", [groupsDn.admins])]);
    expect(await answerOf(directoryLogin(harness, "padded", passwordOf("pad\u00added")))).toEqual({
      code: ErrorCode.Conflict,
      message: "The directory username cannot be used as a username here",
    });
  });

  it("20 concurrent first sign-ins of one entry make one account, and each signs in to it", async () => {
    const storage = slowStorage(memoryStorage());
    const harness = await makeDirectoryAuth(undefined, {}, { storage });
    const results = await Promise.all(Array.from({ length: 20 }, () => directorySignIn(harness, "alice")));
    expect(new Set(results.map((tokens) => tokens.user.id)).size).toBe(1);
    expect(harness.events.filter((event) => event.type === "user.created")).toHaveLength(1);
  });

  it("a first sign-in cut off leaves no account and no link, and the next one makes both", async () => {
    const harness = await makeDirectoryAuth();
    const create = vi.spyOn(harness.storage.users, "createAccount").mockRejectedValueOnce(new Error("connection lost"));
    await expect(directorySignIn(harness, "alice")).rejects.toThrow("connection lost");
    create.mockRestore();
    expect(await harness.storage.identities.find("directory", "uuid-alice")).toBeNull();
    const { user } = await directorySignIn(harness, "alice");
    expect(await harness.storage.identities.find("directory", "uuid-alice")).toMatchObject({ userId: user.id });
  });

  it("a link an earlier release stored without its account (cut off between the two) gets its account at the next sign-in", async () => {
    const harness = await makeDirectoryAuth();
    const at = harness.auth.now();
    const link = {
      provider: "directory",
      subject: "uuid-alice",
      userId: "user-linked-before",
      email: null,
      emailVerified: false,
    };
    await harness.storage.identities.link({ ...link, createdAt: at, lastUsedAt: at });
    const { user } = await directorySignIn(harness, "alice");
    expect(user.id).toBe("user-linked-before");
    expect(await harness.storage.users.findById("user-linked-before")).toMatchObject({ username: "alice", source: "directory" });
  });

  it("EN-3: a directory user with TOTP gets a temporary token and finishes with a code; re-authentication asks the directory", async () => {
    const harness = await makeDirectoryAuth();
    const { user } = await directorySignIn(harness, "alice");
    const { secret } = await enrolTotp(harness.auth, user.id, passwordOf("alice"));
    const pending = await directoryLogin(harness, "alice");
    if (pending.status !== "totp_required") throw new Error("expected the second factor");
    const tokens = await verifyTotp(harness.auth, {
      tempToken: pending.tempToken,
      code: codeAt(secret, harness.clock.advance(30_000)),
    });
    expect((await verifyAccessToken(harness.auth, { token: tokens.accessToken })).amr).toEqual(["pwd", "otp", "mfa"]);
  });

  it("a disabled directory account is 40300 once the password is proven", async () => {
    const harness = await makeDirectoryAuth();
    const { user } = await directorySignIn(harness, "bob");
    await setUserDisabled(harness.auth, { userId: user.id, disabled: true });
    expect((await authError(directoryLogin(harness, "bob", "wrong password"))).code).toBe(ErrorCode.AuthenticationFailed);
    expect((await authError(directoryLogin(harness, "bob"))).code).toBe(ErrorCode.Forbidden);
  });

  it("directory-first: no provider tries the directory, then local accounts when it has no entry, never after a wrong password", async () => {
    const harness = await makeDirectoryAuth(undefined, { loginOrder: "directory-first" });
    await addUser(harness.auth, "lou");
    const viaDirectory = await login(harness.auth, { username: "bob", password: passwordOf("bob") });
    expect(viaDirectory.status === "authenticated" && viaDirectory.tokens.user.username).toBe("bob");
    const viaLocal = await login(harness.auth, { username: "lou", password: goodPassword });
    expect(viaLocal.status === "authenticated" && viaLocal.tokens.user.username).toBe("lou");
    expect(harness.directory.calls.map((call) => call.method)).toEqual(["authenticate", "authenticate"]);
    const verify = vi.spyOn(harness.auth.passwords, "verify");
    expect((await authError(login(harness.auth, { username: "bob", password: goodPassword }))).code).toBe(
      ErrorCode.AuthenticationFailed,
    );
    expect(verify).not.toHaveBeenCalled();
    expect((await authError(login(harness.auth, { username: "lou", password: "wrong password" }))).code).toBe(
      ErrorCode.AuthenticationFailed,
    );
    expect(verify).toHaveBeenCalledOnce();
    harness.directory.down = true;
    expect((await authError(login(harness.auth, { username: "lou", password: goodPassword }))).code).toBe(ErrorCode.Unavailable);
    expect((await login(harness.auth, { username: "lou", password: goodPassword, provider: "local" })).status).toBe(
      "authenticated",
    );
  });

  it("LDAP-4: explicit order: no provider, and provider local, never reach the directory, down or not; provider directory is 50300", async () => {
    const harness = await makeDirectoryAuth();
    await addUser(harness.auth, "lou");
    harness.directory.down = true;
    expect((await login(harness.auth, { username: "lou", password: goodPassword })).status).toBe("authenticated");
    expect((await login(harness.auth, { username: "lou", password: goodPassword, provider: "local" })).status).toBe(
      "authenticated",
    );
    expect(harness.directory.calls).toEqual([]);
    expect(await answerOf(directoryLogin(harness, "alice"))).toEqual({
      code: ErrorCode.Unavailable,
      message: "The directory is unavailable",
    });
  });

  it("provider directory never goes on to local accounts, even with a local account's own password", async () => {
    const harness = await makeDirectoryAuth();
    await addUser(harness.auth, "lou");
    const verify = vi.spyOn(harness.auth.passwords, "verify");
    expect(await answerOf(directoryLogin(harness, "lou", goodPassword))).toEqual({
      code: ErrorCode.AuthenticationFailed,
      message: "Invalid username or password",
    });
    expect(verify).not.toHaveBeenCalled();
  });

  it("directory login is 40400 until an enabled policy is saved, and again once it is disabled", async () => {
    const directory = fakeDirectory([person("alice", [groupsDn.admins])]);
    const harness = makeAuth({ directory });
    const off = { code: ErrorCode.NotFound, message: "Directory login is not enabled" };
    expect(await answerOf(directoryLogin(harness, "alice"))).toEqual(off);
    await saveDirectoryPolicy(harness.auth, { ...workingPolicy, enabled: false });
    expect(await answerOf(directoryLogin(harness, "alice"))).toEqual(off);
    await saveDirectoryPolicy(harness.auth, { enabled: true });
    expect((await directoryLogin(harness, "alice")).status).toBe("authenticated");
    await saveDirectoryPolicy(harness.auth, { enabled: false, loginOrder: "directory-first" });
    expect(await answerOf(directoryLogin(harness, "alice"))).toEqual(off);
    await authError(login(harness.auth, { username: "alice", password: passwordOf("alice") }));
    expect(directory.calls).toHaveLength(1);
  });

  it("LDAP-3: an empty username or password never reaches the directory; nor does a username that can be nobody's", async () => {
    const harness = await makeDirectoryAuth();
    expect((await authError(directoryLogin(harness, "alice", ""))).code).toBe(ErrorCode.MissingParameter);
    expect((await authError(directoryLogin(harness, "", "a password"))).code).toBe(ErrorCode.MissingParameter);
    expect((await authError(directoryLogin(harness, "a".repeat(129), "a password"))).code).toBe(ErrorCode.AuthenticationFailed);
    expect(harness.directory.calls).toEqual([]);
  });

  it("RL-1: directory failures take from the same account counter as local ones; a throttled attempt never reaches the directory", async () => {
    const harness = await makeDirectoryAuth(undefined, {}, { throttle: { account: [{ limit: 3, window: "15m" }] } });
    await authError(login(harness.auth, { username: "alice", password: "wrong", provider: "local" }));
    await authError(directoryLogin(harness, "Alice", "wrong"));
    await authError(directoryLogin(harness, "alice", "wrong"));
    expect((await authError(directoryLogin(harness, "alice"))).code).toBe(ErrorCode.TooManyAttempts);
    expect(harness.directory.calls).toHaveLength(2);
  });

  it("RL-1: once alice is locked, no spelling the directory matches to her gets a guess through, '    alice    ' with her password included", async () => {
    const harness = await makeDirectoryAuth(undefined, {}, { throttle: { account: [{ limit: 5, window: "15m" }] } });
    for (let attempt = 0; attempt < 5; attempt += 1) await authError(directoryLogin(harness, "alice", `wrong ${attempt}`));
    expect((await authError(directoryLogin(harness, "alice"))).code).toBe(ErrorCode.TooManyAttempts);
    expect(harness.directory.binds).toHaveLength(5);
    const spellings = [
      " alice",
      "alice  ",
      "    alice    ",
      "\u00a0alice",
      "alice\u3000",
      "al\u00adice",
      "ali\u200bce",
      "alice\u0000",
    ];
    for (const spelling of spellings) {
      const refused = await authError(directoryLogin(harness, spelling));
      expect([ErrorCode.AuthenticationFailed, ErrorCode.TooManyAttempts], JSON.stringify(spelling)).toContain(refused.code);
    }
    expect(harness.directory.binds).toHaveLength(5);
  });

  it("RL-1: a spelling the directory folds into another entry's name (straße for strasse) spends that entry's account before the bind", async () => {
    const harness = await makeDirectoryAuth(
      [person("strasse", [groupsDn.engineers])],
      {},
      {
        throttle: { account: [{ limit: 3, window: "15m" }] },
      },
    );
    for (let attempt = 0; attempt < 3; attempt += 1) await authError(directoryLogin(harness, "strasse", `wrong ${attempt}`));
    expect((await authError(directoryLogin(harness, "straße", "wrong again"))).code).toBe(ErrorCode.TooManyAttempts);
    expect((await authError(directoryLogin(harness, "STRAßE", passwordOf("strasse")))).code).toBe(ErrorCode.TooManyAttempts);
    expect(harness.directory.binds).toEqual(["strasse", "strasse", "strasse"]);
  });

  it("RL-1: a typed spelling's own counter and the entry's each give up an attempt, so guesses spread over spellings stop at the entry's cap", async () => {
    const harness = await makeDirectoryAuth(
      [person("strasse", [groupsDn.engineers])],
      {},
      {
        throttle: { account: [{ limit: 4, window: "15m" }] },
      },
    );
    for (const spelling of ["straße", "STRASSE", "Straße", "strasse"])
      await authError(directoryLogin(harness, spelling, "wrong"));
    expect((await authError(directoryLogin(harness, "STRAßE", "wrong"))).code).toBe(ErrorCode.TooManyAttempts);
    expect(harness.directory.binds).toHaveLength(4);
  });

  it("a success clears the account's failures", async () => {
    const harness = await makeDirectoryAuth(undefined, {}, { throttle: { account: [{ limit: 2, window: "15m" }] } });
    await authError(directoryLogin(harness, "alice", "wrong"));
    await directorySignIn(harness, "alice");
    await authError(directoryLogin(harness, "alice", "wrong"));
    expect((await directoryLogin(harness, "alice")).status).toBe("authenticated");
  });

  it("the directory link is not a linked provider account: not listed, never unlinked", async () => {
    const harness = await makeDirectoryAuth();
    const { user } = await directorySignIn(harness, "alice");
    expect(await listIdentities(harness.auth, { userId: user.id })).toEqual([]);
    const error = await authError(
      unlinkIdentity(harness.auth, { userId: user.id, provider: "directory", subject: "uuid-alice" }),
    );
    expect(error.code).toBe(ErrorCode.NotFound);
    expect(await harness.storage.identities.find("directory", "uuid-alice")).not.toBeNull();
  });
});

describe("a bind password sealed with a key that left the keyring", () => {
  it("local sign-ins go on; directory sign-ins are 50300 saying why to the operator; a save must send the password again", async () => {
    const harness = await makeDirectoryAuth();
    await addUser(harness.auth, "lou");
    const rotated = makeAuth({
      storage: harness.storage,
      clock: harness.clock,
      directory: harness.directory,
      secrets: { signing: signingSecret, encryption: randomBytes(32).toString("base64url") },
    });
    expect((await login(rotated.auth, { username: "lou", password: goodPassword })).status).toBe("authenticated");
    const unavailable = await authError(directoryLogin(rotated, "alice"));
    expect({ code: unavailable.code, message: unavailable.message }).toEqual({
      code: ErrorCode.Unavailable,
      message: "The directory is unavailable",
    });
    expect(String((unavailable.cause as Error).message)).toMatch(/^The saved directory bind password cannot be opened/);
    expect((unavailable.cause as Error).cause).toBeInstanceOf(Error);
    expect((await getDirectoryPolicy(rotated.auth)).credentialConfigured).toBe(true);
    const refused = await authError(saveDirectoryPolicy(rotated.auth, { searchTimeoutSecs: 3 }));
    expect(refused.message).toBe(
      "bindPassword must be given again: the saved one cannot be opened with the configured encryption keys",
    );
    await saveDirectoryPolicy(rotated.auth, { bindPassword: "service account password", loginOrder: "directory-first" });
    expect((await directoryLogin(rotated, "alice")).status).toBe("authenticated");
    expect((await authError(directoryLogin(harness, "alice"))).code).toBe(ErrorCode.Unavailable);
    expect((await authError(login(harness.auth, { username: "lou", password: goodPassword }))).code).toBe(ErrorCode.Unavailable);
    expect((await login(harness.auth, { username: "lou", password: goodPassword, provider: "local" })).status).toBe(
      "authenticated",
    );
  });
});

describe("a directory user signing in another way", () => {
  it("LDAP-5: a passkey signs in only whom the directory still maps: roles follow it, a removed user is 40300", async () => {
    const harness = await makeDirectoryAuth(undefined, {}, { passkeys });
    const { user } = await directorySignIn(harness, "bob");
    const authenticator = makeAuthenticator();
    const { ceremonyId, options } = await webauthnRegisterBegin(harness.auth, {
      userId: user.id,
      label: "Key",
      password: passwordOf("bob"),
    });
    await webauthnRegisterFinish(harness.auth, { userId: user.id, ceremonyId, response: authenticator.register(options) });
    const bob = harness.directory.people[1] as ReturnType<typeof person>;

    const same = await passkeySignIn(harness.auth, authenticator, "bob");
    expect(same.status === "authenticated" && same.tokens.user.roles).toEqual(["engineer"]);
    bob.entry.groups = [groupsDn.admins];
    const promoted = await passkeySignIn(harness.auth, authenticator, "bob");
    expect(promoted.status === "authenticated" && promoted.tokens.user.roles).toEqual(["admin"]);
    if (promoted.status !== "authenticated" || same.status !== "authenticated") throw new Error("expected sessions");
    await verifyAccessToken(harness.auth, { token: promoted.tokens.accessToken });
    expect((await authError(verifyAccessToken(harness.auth, { token: same.tokens.accessToken }))).code).toBe(
      ErrorCode.InvalidToken,
    );
    expect(harness.events.filter((event) => event.type === "token_version.raised").at(-1)).toMatchObject({
      reason: "roles_changed",
    });

    harness.directory.down = true;
    expect((await authError(passkeySignIn(harness.auth, authenticator, "bob"))).code).toBe(ErrorCode.Unavailable);
    harness.directory.down = false;
    bob.entry.groups = [groupsDn.sales];
    expect(await answerOf(passkeySignIn(harness.auth, authenticator, "bob"))).toEqual({
      code: ErrorCode.Forbidden,
      message: "No role is granted to this directory account",
    });
    expect(harness.events.at(-1)).toMatchObject({ type: "login.failed", reason: "no_role", userId: user.id });
  });

  it("directoryUserNow: local users and disabled accounts are not looked up; with refreshMapping off, roles stay", async () => {
    const harness = await makeDirectoryAuth(undefined, { refreshMapping: false });
    const localId = await addUser(harness.auth, "lou");
    const local = await harness.storage.users.findById(localId);
    expect(await directoryUserNow(harness.auth, local as NonNullable<typeof local>, undefined)).toBe(local);
    const { user } = await directorySignIn(harness, "bob");
    const calls = harness.directory.calls.length;
    harness.directory.people.splice(1, 1);
    const bob = (await harness.storage.users.findById(user.id)) as NonNullable<typeof local>;
    expect(await directoryUserNow(harness.auth, bob, undefined)).toBe(bob);
    await saveDirectoryPolicy(harness.auth, { refreshMapping: true });
    const disabled = { ...bob, disabled: true };
    expect(await directoryUserNow(harness.auth, disabled, undefined)).toBe(disabled);
    expect(harness.directory.calls).toHaveLength(calls);
    expect((await authError(directoryUserNow(harness.auth, bob, undefined))).code).toBe(ErrorCode.Forbidden);
  });
});

describe("directory re-authentication", () => {
  it("the password is checked by the directory, against the entry the account is linked to", async () => {
    const harness = await makeDirectoryAuth();
    const { user } = await directorySignIn(harness, "alice");
    const record = await harness.storage.users.findById(user.id);
    if (!record) throw new Error("no user");
    expect(await directoryPasswordMatches(harness.auth, record, passwordOf("alice"))).toBe(true);
    expect(await directoryPasswordMatches(harness.auth, record, "wrong")).toBe(false);
    const someoneElse = person("alice", [groupsDn.admins]).entry;
    vi.spyOn(harness.directory, "authenticate").mockResolvedValueOnce({
      status: "authenticated",
      entry: { ...someoneElse, stableId: "uuid-another-alice" },
    });
    expect(await directoryPasswordMatches(harness.auth, record, passwordOf("alice"))).toBe(false);
    (harness.directory.people[0] as ReturnType<typeof person>).entry.stableId = "uuid-someone-else";
    expect(await directoryPasswordMatches(harness.auth, record, passwordOf("alice"))).toBe(false);
    (harness.directory.people[0] as ReturnType<typeof person>).entry.stableId = "uuid-alice";
    (harness.directory.people[0] as ReturnType<typeof person>).entry.username = "alice.renamed";
    expect(await directoryPasswordMatches(harness.auth, record, passwordOf("alice"))).toBe(true);
    harness.directory.people.push(person("alice", [groupsDn.admins], passwordOf("alice")));
    (harness.directory.people[0] as ReturnType<typeof person>).entry.username = "alice";
    expect(await directoryPasswordMatches(harness.auth, record, passwordOf("alice"))).toBe(false);
    harness.directory.people.pop();
    await saveDirectoryPolicy(harness.auth, { enabled: false });
    expect(await directoryPasswordMatches(harness.auth, record, passwordOf("alice"))).toBe(false);
  });

  it("an account with no directory link is never proven, and the directory is not asked", async () => {
    const harness = await makeDirectoryAuth();
    const { user } = await directorySignIn(harness, "alice");
    await harness.storage.identities.unlink(user.id, "directory", "uuid-alice");
    const record = await harness.storage.users.findById(user.id);
    expect(await directoryPasswordMatches(harness.auth, record as NonNullable<typeof record>, passwordOf("alice"))).toBe(false);
    expect(harness.directory.calls.map((call) => call.method)).toEqual(["authenticate"]);
  });
});

describe("refresh of a directory user", () => {
  it("LDAP-5: changed groups change the roles of the new access token, without a new sign-in", async () => {
    const harness = await makeDirectoryAuth();
    const tokens = await directorySignIn(harness, "bob");
    (harness.directory.people[1] as ReturnType<typeof person>).entry.groups = [groupsDn.admins, groupsDn.engineers];
    const refreshed = await refresh(harness.auth, { refreshToken: tokens.refreshToken });
    const access = await verifyAccessToken(harness.auth, { token: refreshed.accessToken });
    expect(access.roles).toEqual(["admin"]);
    expect(refreshed.user.roles).toEqual(["admin"]);
    expect(harness.directory.calls.at(-1)).toMatchObject({ method: "lookup" });
    expect((await harness.storage.users.findById(access.userId))?.roles).toEqual(["admin"]);
    const unchanged = await refresh(harness.auth, { refreshToken: refreshed.refreshToken });
    expect((await verifyAccessToken(harness.auth, { token: unchanged.accessToken })).roles).toEqual(["admin"]);
  });

  it("TV-1: roles changed at refresh end every other token with the old roles; the refreshed session carries on", async () => {
    const harness = await makeDirectoryAuth();
    const mine = await directorySignIn(harness, "bob");
    const other = await directorySignIn(harness, "bob");
    (harness.directory.people[1] as ReturnType<typeof person>).entry.groups = [groupsDn.admins];
    const refreshed = await refresh(harness.auth, { refreshToken: mine.refreshToken });
    for (const token of [mine.accessToken, other.accessToken]) {
      expect((await authError(verifyAccessToken(harness.auth, { token }))).code).toBe(ErrorCode.InvalidToken);
    }
    expect((await authError(refresh(harness.auth, { refreshToken: other.refreshToken }))).code).toBe(ErrorCode.InvalidToken);
    const access = await verifyAccessToken(harness.auth, { token: refreshed.accessToken });
    expect(access).toMatchObject({ roles: ["admin"], tokenVersion: 1 });
    expect((await harness.storage.sessions.findSession(access.sessionId))?.tokenVersion).toBe(1);
    const again = await refresh(harness.auth, { refreshToken: refreshed.refreshToken });
    expect((await verifyAccessToken(harness.auth, { token: again.accessToken })).roles).toEqual(["admin"]);
    expect(harness.events.filter((event) => event.type === "token_version.raised").map((event) => event.reason)).toEqual([
      "roles_changed",
    ]);
  });

  it("LDAP-5: out of every mapped group with no fallback role: 40101, and every session of the user ends", async () => {
    const harness = await makeDirectoryAuth();
    const tokens = await directorySignIn(harness, "bob");
    const other = await directorySignIn(harness, "bob");
    (harness.directory.people[1] as ReturnType<typeof person>).entry.groups = [groupsDn.sales];
    expect((await authError(refresh(harness.auth, { refreshToken: tokens.refreshToken }))).code).toBe(ErrorCode.InvalidToken);
    expect((await authError(verifyAccessToken(harness.auth, { token: other.accessToken }))).code).toBe(ErrorCode.InvalidToken);
    expect(harness.events.filter((event) => event.type === "session.revoked").map((event) => event.reason)).toEqual([
      "directory_access_lost",
    ]);
    expect(harness.events.find((event) => event.type === "token_version.raised")).toMatchObject({
      reason: "directory_access_lost",
      userId: tokens.user.id,
    });
  });

  it("the directory link is found among the account's other identities, whatever their order", async () => {
    const harness = await makeDirectoryAuth();
    const tokens = await directorySignIn(harness, "bob");
    const link = await harness.storage.identities.find("directory", "uuid-bob");
    if (!link) throw new Error("no link");
    await harness.storage.identities.unlink(tokens.user.id, "directory", "uuid-bob");
    const other = { ...link, provider: "corp", subject: "sub-bob" };
    await harness.storage.identities.link(other);
    await harness.storage.identities.link(link);
    expect((await harness.storage.identities.listByUser(tokens.user.id)).map((identity) => identity.provider)).toEqual([
      "corp",
      "directory",
    ]);
    expect((await refresh(harness.auth, { refreshToken: tokens.refreshToken })).user.roles).toEqual(["engineer"]);
  });

  it("LDAP-5: an account whose directory link is gone: 40101, without asking the directory", async () => {
    const harness = await makeDirectoryAuth();
    const tokens = await directorySignIn(harness, "bob");
    await harness.storage.identities.unlink(tokens.user.id, "directory", "uuid-bob");
    expect((await authError(refresh(harness.auth, { refreshToken: tokens.refreshToken }))).code).toBe(ErrorCode.InvalidToken);
    expect(harness.directory.calls.map((call) => call.method)).toEqual(["authenticate"]);
  });

  it("LDAP-5: an entry gone from the directory: 40101", async () => {
    const harness = await makeDirectoryAuth();
    const tokens = await directorySignIn(harness, "bob");
    harness.directory.people.splice(1, 1);
    expect((await authError(refresh(harness.auth, { refreshToken: tokens.refreshToken }))).code).toBe(ErrorCode.InvalidToken);
  });

  it("a fallback role keeps a user in no mapped group signed in", async () => {
    const harness = await makeDirectoryAuth(undefined, { fallbackRole: "staff" });
    const tokens = await directorySignIn(harness, "bob");
    (harness.directory.people[1] as ReturnType<typeof person>).entry.groups = [];
    const refreshed = await refresh(harness.auth, { refreshToken: tokens.refreshToken });
    expect(refreshed.user.roles).toEqual(["staff"]);
  });

  it("refreshMapping false: the directory is not read at refresh and the roles stay", async () => {
    const harness = await makeDirectoryAuth(undefined, { refreshMapping: false });
    const tokens = await directorySignIn(harness, "bob");
    harness.directory.people.splice(1, 1);
    const calls = harness.directory.calls.length;
    const refreshed = await refresh(harness.auth, { refreshToken: tokens.refreshToken });
    expect(refreshed.user.roles).toEqual(["engineer"]);
    expect(harness.directory.calls).toHaveLength(calls);
  });

  it("LDAP-4: the directory down: 50300, and the refresh token is still usable once it is back", async () => {
    const harness = await makeDirectoryAuth();
    const tokens = await directorySignIn(harness, "bob");
    harness.directory.down = true;
    expect((await authError(refresh(harness.auth, { refreshToken: tokens.refreshToken }))).code).toBe(ErrorCode.Unavailable);
    harness.directory.down = false;
    expect((await refresh(harness.auth, { refreshToken: tokens.refreshToken })).user.username).toBe("bob");
  });

  it("a directory user's session ends at refresh on an instance with no directory, or once directory login is off", async () => {
    const harness = await makeDirectoryAuth();
    const tokens = await directorySignIn(harness, "bob");
    const without = makeAuth({ storage: harness.storage, clock: harness.clock });
    expect((await authError(refresh(without.auth, { refreshToken: tokens.refreshToken }))).code).toBe(ErrorCode.InvalidToken);

    const again = await directorySignIn(harness, "bob");
    // Written as another process might, without the token-version raise of saveDirectoryPolicy.
    await writeDirectorySettings(harness.auth, { ...(await readDirectorySettings(harness.auth)), enabled: false });
    expect((await authError(refresh(harness.auth, { refreshToken: again.refreshToken }))).code).toBe(ErrorCode.InvalidToken);
  });

  it("a spent, unknown or expired refresh token reads nothing from the directory", async () => {
    const harness = await makeDirectoryAuth();
    const tokens = await directorySignIn(harness, "bob");
    await refresh(harness.auth, { refreshToken: tokens.refreshToken });
    const later = await directorySignIn(harness, "bob");
    await authError(refresh(harness.auth, { refreshToken: tokens.refreshToken }));
    await authError(refresh(harness.auth, { refreshToken: "A".repeat(43) }));
    // The very millisecond its idle lifetime (7 days) ends.
    harness.clock.advance(7 * 86_400_000);
    await authError(refresh(harness.auth, { refreshToken: later.refreshToken }));
    expect(harness.directory.calls.filter((call) => call.method === "lookup")).toHaveLength(1);
  });

  it("with a directory configured, a refresh token whose user is gone from storage is 40101, and an expired one too", async () => {
    // Memory storage cannot lose a user: its rotation is refused, and every user read finds none, as a store that lost one would.
    const harness = await makeDirectoryAuth();
    await addUser(harness.auth, "lou");
    const tokens = await signIn(harness, "lou");
    const findById = vi.spyOn(harness.storage.users, "findById").mockResolvedValue(null);
    const rotate = vi.spyOn(harness.storage.sessions, "rotateRefresh").mockResolvedValue({ outcome: "refused" });
    expect((await authError(refresh(harness.auth, { refreshToken: tokens.refreshToken }))).code).toBe(ErrorCode.InvalidToken);
    findById.mockRestore();
    rotate.mockRestore();
    const later = await signIn(harness, "lou");
    harness.clock.advance(7 * 86_400_000);
    expect((await authError(refresh(harness.auth, { refreshToken: later.refreshToken }))).code).toBe(ErrorCode.InvalidToken);
  });

  it("local users' refreshes never reach the directory", async () => {
    const harness = await makeDirectoryAuth();
    await addUser(harness.auth, "lou");
    const tokens = await signIn(harness, "lou");
    await refresh(harness.auth, { refreshToken: tokens.refreshToken });
    expect(harness.directory.calls).toEqual([]);
  });
});
