import { describe, expect, it } from "vitest";
import { fakeDirectory, groupsDn, person, workingPolicy } from "../directory/directory.test-support.js";
import { defaultDirectoryPolicy } from "../directory/policy.js";
import { readDirectorySettings } from "../directory/policy-store.js";
import { storageUnavailable } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { getDirectoryPolicy, previewDirectoryUser, saveDirectoryPolicy, testDirectoryPolicy } from "./directory-policy.js";
import { addUser, authError, makeAuth, signIn } from "./fixtures.test-support.js";
import { login } from "./login.js";
import { verifyAccessToken } from "./verify-access-token.js";

const people = [person("alice", [groupsDn.engineers, groupsDn.admins]), person("nora", [groupsDn.sales])];

describe("getDirectoryPolicy and saveDirectoryPolicy", () => {
  it("before any save: the defaults, disabled, no credential", async () => {
    const { auth } = makeAuth({ directory: fakeDirectory() });
    expect(await getDirectoryPolicy(auth)).toEqual({ ...defaultDirectoryPolicy, credentialConfigured: false });
  });

  it("ST-3: the saved policy is shown without the bind password; an empty one keeps it; it is never stored in plain text", async () => {
    const { auth, storage } = makeAuth({ directory: fakeDirectory() });
    const saved = await saveDirectoryPolicy(auth, workingPolicy);
    expect(saved).toEqual({ ...defaultDirectoryPolicy, ...workingPolicy, bindPassword: undefined, credentialConfigured: true });
    expect(Object.keys(saved)).not.toContain("bindPassword");
    expect(await getDirectoryPolicy(auth)).toEqual(saved);
    await saveDirectoryPolicy(auth, { bindPassword: "", searchTimeoutSecs: 3 });
    expect((await readDirectorySettings(auth)).bindPassword).toBe(workingPolicy.bindPassword);
    expect(JSON.stringify(await storage.settings.get("directory.policy"))).not.toContain(workingPolicy.bindPassword);
  });

  it("a bad field is 42200 naming it, and nothing is saved or raised", async () => {
    const { auth, events } = makeAuth({ directory: fakeDirectory() });
    const error = await authError(saveDirectoryPolicy(auth, { ...workingPolicy, userFilter: "(uid=alice)" }));
    expect(error.code).toBe(ErrorCode.ValidationFailed);
    expect(error.message).toMatch(/^userFilter /);
    expect((await getDirectoryPolicy(auth)).enabled).toBe(false);
    expect(events).toEqual([]);
  });

  it("TV-1: saving raises the token version of every directory user and of no local user, at once even with a token-state cache", async () => {
    const directory = fakeDirectory(people);
    const harness = makeAuth({ directory, tokenStateCacheSeconds: 60 });
    await saveDirectoryPolicy(harness.auth, { ...workingPolicy, fallbackRole: "staff" });
    await addUser(harness.auth, "lou");
    const local = await signIn(harness, "lou");
    const signedIn = await Promise.all(
      ["alice", "nora"].map((username) =>
        login(harness.auth, { username, password: `${username} directory password`, provider: "directory" }),
      ),
    );
    const tokens = signedIn.map((result) => (result.status === "authenticated" ? result.tokens.accessToken : ""));
    for (const token of [local.accessToken, ...tokens]) await verifyAccessToken(harness.auth, { token });

    await saveDirectoryPolicy(harness.auth, { searchTimeoutSecs: 4 });
    for (const token of tokens) {
      expect((await authError(verifyAccessToken(harness.auth, { token }))).code).toBe(ErrorCode.InvalidToken);
    }
    expect((await verifyAccessToken(harness.auth, { token: local.accessToken })).userId).toBe(local.user.id);
    expect(harness.events.at(-1)).toEqual({
      type: "directory_policy.saved",
      enabled: true,
      directoryUsers: 2,
      at: harness.clock.now,
    });
  });
});

describe("testDirectoryPolicy", () => {
  it("without a directory given to createAuth: a configuration failure that says so", async () => {
    const { auth } = makeAuth();
    expect(await testDirectoryPolicy(auth, workingPolicy)).toEqual({
      ok: false,
      category: "configuration",
      message: "No directory is configured: pass directory to createAuth",
    });
  });

  it("a policy that does not validate is a configuration failure naming the field, and the directory is not reached", async () => {
    const directory = fakeDirectory();
    const { auth } = makeAuth({ directory });
    const result = await testDirectoryPolicy(auth, { ...workingPolicy, serverUrl: "https://ldap.example.com" });
    expect(result).toMatchObject({ ok: false, category: "configuration" });
    expect(result.ok === false && result.message).toMatch(/^serverUrl /);
    expect(directory.calls).toEqual([]);
  });

  it("{} tries the saved policy with its bind password; given fields try over it, unsaved; the directory's answer is returned", async () => {
    const directory = fakeDirectory();
    const { auth } = makeAuth({ directory });
    await saveDirectoryPolicy(auth, workingPolicy);
    expect(await testDirectoryPolicy(auth, {})).toEqual({ ok: true });
    expect(await testDirectoryPolicy(auth)).toEqual({ ok: true });
    directory.checkResult = { ok: false, category: "bind", message: "The service account bind failed" };
    expect(await testDirectoryPolicy(auth, { serverUrl: "ldaps://ldap2.example.com", bindPassword: "another" })).toEqual(
      directory.checkResult,
    );
    const [first, second, third] = directory.calls.map((call) => call.settings);
    expect(first).toEqual(await readDirectorySettings(auth));
    expect(second).toEqual(first);
    expect(third).toEqual({ ...first, serverUrl: "ldaps://ldap2.example.com", bindPassword: "another" });
    expect((await readDirectorySettings(auth)).serverUrl).toBe("ldaps://ldap.example.com");
  });

  it("a failure other than validation is not turned into an answer: storage that cannot be reached stays 50300", async () => {
    const { auth, storage } = makeAuth({ directory: fakeDirectory() });
    storage.settings.get = async () => {
      throw storageUnavailable(new Error("connect ECONNREFUSED"));
    };
    expect((await authError(testDirectoryPolicy(auth, {}))).code).toBe(ErrorCode.Unavailable);
    storage.settings.get = async () => {
      throw new Error("storage down");
    };
    await expect(testDirectoryPolicy(auth, {})).rejects.toThrow("storage down");
  });
});

describe("previewDirectoryUser", () => {
  it("the identity, groups, matched rule and roles of a user, read with the service account, while the policy is disabled", async () => {
    const directory = fakeDirectory(people);
    const { auth } = makeAuth({ directory });
    await saveDirectoryPolicy(auth, { ...workingPolicy, enabled: false });
    expect(await previewDirectoryUser(auth, { username: "alice" })).toEqual({
      username: "alice",
      displayName: "alice Example",
      email: "alice@example.com",
      groups: [groupsDn.engineers, groupsDn.admins],
      matchedRule: { group: groupsDn.admins, role: "admin", priority: 1 },
      roles: ["admin"],
    });
    expect(directory.calls.map((call) => [call.method, call.settings.bindPassword])).toEqual([
      ["lookup", workingPolicy.bindPassword],
    ]);
  });

  it("LDAP-5: a user in no mapped group: no rule, and the fallback role or none", async () => {
    const { auth } = makeAuth({ directory: fakeDirectory(people) });
    await saveDirectoryPolicy(auth, workingPolicy);
    expect(await previewDirectoryUser(auth, { username: "nora" })).toMatchObject({ matchedRule: null, roles: [] });
    await saveDirectoryPolicy(auth, { fallbackRole: "staff" });
    expect(await previewDirectoryUser(auth, { username: "nora" })).toMatchObject({ matchedRule: null, roles: ["staff"] });
  });

  it("40400 with no directory, with no saved server, and for a username no entry has; 40001 without a username", async () => {
    const directory = fakeDirectory(people);
    const withDirectory = makeAuth({ directory }).auth;
    const answer = async (promise: Promise<unknown>) => {
      const { code, message } = await authError(promise);
      return { code, message };
    };
    const none = { code: ErrorCode.NotFound, message: "No directory is configured" };
    expect(await answer(previewDirectoryUser(withDirectory, { username: "alice" }))).toEqual(none);
    expect(await answer(previewDirectoryUser(makeAuth().auth, { username: "alice" }))).toEqual(none);
    await saveDirectoryPolicy(withDirectory, workingPolicy);
    expect(await answer(previewDirectoryUser(withDirectory, { username: "nobody" }))).toEqual({
      code: ErrorCode.NotFound,
      message: "No directory entry has this username",
    });
    expect(await answer(previewDirectoryUser(withDirectory, { username: "" }))).toEqual({
      code: ErrorCode.MissingParameter,
      message: "username is required",
    });
    expect(directory.calls).toHaveLength(1);
    const withoutDirectory = makeAuth({ storage: withDirectory.storage }).auth;
    expect(await answer(previewDirectoryUser(withoutDirectory, { username: "alice" }))).toEqual(none);
  });
});
