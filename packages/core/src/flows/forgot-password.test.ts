import { describe, expect, it } from "vitest";
import { fakeDirectory, groupsDn, person, workingPolicy } from "../directory/directory.test-support.js";
import { emailDeliveriesSettled } from "../email/deliver.js";
import { type EmailHarness, addUserWithEmail, makeEmailAuth, resetUrl, sentTo, tokenOf } from "../email/email.test-support.js";
import { ErrorCode } from "../errors/codes.js";
import { createUser } from "./create-user.js";
import { saveDirectoryPolicy } from "./directory-policy.js";
import { addUser, authError, goodPassword, makeAuth, outcome } from "./fixtures.test-support.js";
import { forgotPassword } from "./forgot-password.js";
import { login } from "./login.js";
import { resetPassword } from "./reset-password.js";

/** Asks for a reset link and waits until it was sent or reported. */
async function forgot(harness: EmailHarness, input: Parameters<typeof forgotPassword>[1]) {
  const answer = await forgotPassword(harness.auth, input);
  await emailDeliveriesSettled(harness.auth);
  return answer;
}

/** One account of each state PR-1 names, each with an address of its own. */
async function accountsOfEveryState(harness: EmailHarness) {
  const { auth } = harness;
  await addUserWithEmail(auth, "known", "known@example.com");
  await createUser(auth, {
    username: "disabled",
    password: goodPassword,
    disabled: true,
    email: "disabled@example.com",
    emailVerified: true,
  });
  await addUser(auth, "addressless");
  await addUserWithEmail(auth, "unverified", "unverified@example.com", false);
  await createUser(auth, { username: "passwordless", email: "passwordless@example.com", emailVerified: true });
  await saveDirectoryPolicy(auth, workingPolicy);
  const signedIn = await login(auth, { username: "bob", password: "bob directory password", provider: "directory" });
  if (signedIn.status !== "authenticated") throw new Error(signedIn.status);
  const bobId = signedIn.tokens.user.id;
  await auth.storage.users.setEmail(bobId, { email: "bob@example.com", verified: true }, auth.now());
  // Even holding a local hash, a directory account's password is the directory's: no reset link.
  await auth.storage.users.update(bobId, { passwordHash: await auth.passwords.hash(goodPassword) }, auth.now());
}

const everyState = ["known", "nobody", "disabled", "addressless", "unverified", "passwordless", "bob"];

const directoryAuth = () => makeEmailAuth({ directory: fakeDirectory([person("bob", [groupsDn.engineers])]) });

describe("forgotPassword", () => {
  it("PR-1: known, unknown, disabled, address-less, unverified, directory and passwordless accounts all answer {}; only the eligible one gets a link", async () => {
    const harness = directoryAuth();
    await accountsOfEveryState(harness);
    for (const username of everyState) {
      expect(await forgot(harness, { username }), username).toEqual({});
    }
    expect(harness.outbox.map((message) => [message.kind, message.to])).toEqual([["password_reset", "known@example.com"]]);
    expect(harness.events.filter((event) => event.type.startsWith("email."))).toHaveLength(1);
  });

  it("PR-1: by address likewise: only the local, enabled account with a password that holds it verified gets a link", async () => {
    const harness = directoryAuth();
    await accountsOfEveryState(harness);
    for (const email of everyState.map((name) => `${name}@example.com`)) {
      expect(await forgot(harness, { email }), email).toEqual({});
    }
    expect(harness.outbox.map((message) => message.to)).toEqual(["known@example.com"]);
  });

  it("PR-1: the answer does not wait for the send", async () => {
    let release = () => {};
    let handedOver = 0;
    const send = () =>
      new Promise<void>((resolve) => {
        handedOver += 1;
        release = resolve;
      });
    const harness = makeEmailAuth({}, { send });
    await addUserWithEmail(harness.auth, "slow", "slow@example.com");
    expect(await forgotPassword(harness.auth, { username: "slow" })).toEqual({});
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(handedOver).toBe(1);
    release();
    await emailDeliveriesSettled(harness.auth);
    expect(harness.events.filter((event) => event.type === "email.sent")).toHaveLength(1);
  });

  it("PR-1: an address finds only the account holding it verified, compared by case", async () => {
    const harness = makeEmailAuth();
    await addUserWithEmail(harness.auth, "claimer", "shared@example.com", false);
    await addUserWithEmail(harness.auth, "holder", "Shared@Example.com");
    await forgot(harness, { email: "SHARED@example.COM" });
    expect(harness.outbox).toEqual([
      expect.objectContaining({ kind: "password_reset", to: "Shared@Example.com", text: expect.stringContaining("holder") }),
    ]);
  });

  it("PR-1, PR-5: the link is email.resetUrl with the token in its fragment, whatever else the input holds", async () => {
    const harness = makeEmailAuth();
    await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    await forgot(harness, { username: "alice", host: "evil.example", forwarded: "host=evil.example" } as never);
    const link = harness.outbox[0]?.link as string;
    expect(link).toMatch(new RegExp(`^${resetUrl.replace(/[./]/g, "\\$&")}#token=[A-Za-z0-9_-]{43}$`));
    expect(harness.outbox[0]?.text).toContain(link);
    expect(JSON.stringify(harness.outbox)).not.toContain("evil");
  });

  it("PR-1: a failing send still answers {}, and is reported", async () => {
    const harness = makeEmailAuth();
    await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    harness.failing.now = true;
    expect(await forgot(harness, { username: "alice" })).toEqual({});
    expect(harness.events.filter((event) => event.type === "email.failed")).toEqual([
      expect.objectContaining({ kind: "password_reset", reason: "failed" }),
    ]);
    harness.failing.now = false;
    await forgot(harness, { username: "alice" });
    expect(sentTo(harness, "alice@example.com", "password_reset")).toHaveLength(1);
  });

  it("both username and email is 40002; neither is 40001; an email that is no address is 40002", async () => {
    const harness = makeEmailAuth();
    expect(await outcome(forgotPassword(harness.auth, { username: "a", email: "a@example.com" }))).toBe(
      ErrorCode.MalformedParameter,
    );
    expect(await outcome(forgotPassword(harness.auth, {}))).toBe(ErrorCode.MissingParameter);
    expect(await outcome(forgotPassword(harness.auth, { username: "" }))).toBe(ErrorCode.MissingParameter);
    for (const email of ["not-an-address", "a@", "@example.com", "a b@example.com"]) {
      expect(await outcome(forgotPassword(harness.auth, { email })), email).toBe(ErrorCode.MalformedParameter);
    }
    expect(await outcome(forgotPassword(harness.auth, { username: { $ne: "" } } as never))).toBe(ErrorCode.MalformedParameter);
  });

  it("without email configured: 40400", async () => {
    expect(await outcome(forgotPassword(makeAuth().auth, { username: "alice" }))).toBe(ErrorCode.NotFound);
  });

  it("PR-1: throttle.passwordResetRequests limits the requests for one account, known or not, by username or address", async () => {
    const harness = makeEmailAuth();
    await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    for (const username of ["alice", "Alice", "ALICE"]) expect(await forgot(harness, { username })).toEqual({});
    expect(await outcome(forgotPassword(harness.auth, { username: "alice" }))).toBe(ErrorCode.TooManyAttempts);
    for (let request = 0; request < 3; request += 1) await forgot(harness, { username: "nobody" });
    expect(await outcome(forgotPassword(harness.auth, { username: "nobody" }))).toBe(ErrorCode.TooManyAttempts);
    for (let request = 0; request < 3; request += 1) await forgot(harness, { email: "Alice@example.com" });
    expect(await outcome(forgotPassword(harness.auth, { email: "alice@EXAMPLE.com" }))).toBe(ErrorCode.TooManyAttempts);
    expect(await forgot(harness, { username: "bob" })).toEqual({});
    expect(harness.outbox).toHaveLength(6);
    harness.clock.advance(15 * 60_000);
    expect(await forgot(harness, { username: "alice" })).toEqual({});
  });

  it("PR-1: throttle.passwordResetRequestsIp limits one client address across accounts", async () => {
    const harness = makeEmailAuth({ throttle: { passwordResetRequestsIp: [{ limit: 4, window: "15m" }] } });
    for (let request = 0; request < 4; request += 1) {
      expect(await forgot(harness, { username: `user${request}`, ip: "198.51.100.7" })).toEqual({});
    }
    expect(await outcome(forgotPassword(harness.auth, { username: "another", ip: "198.51.100.7" }))).toBe(
      ErrorCode.TooManyAttempts,
    );
    expect(await forgot(harness, { username: "another", ip: "203.0.113.9" })).toEqual({});
    expect(harness.events.filter((event) => event.type === "throttled")).toEqual([
      expect.objectContaining({ scope: "passwordResetRequestsIp" }),
    ]);
  });

  it("RL-5, PR-1: flooding forgot never spends the account's sign-in budget", async () => {
    const harness = makeEmailAuth({ throttle: { passwordResetRequests: [{ limit: 1000, window: "15m" }] } });
    await addUserWithEmail(harness.auth, "target", "target@example.com");
    for (let request = 0; request < 30; request += 1) {
      await forgotPassword(harness.auth, { username: "target", ip: `198.51.100.${request}` });
    }
    await emailDeliveriesSettled(harness.auth);
    for (let attempt = 0; attempt < 4; attempt += 1) {
      expect(await outcome(login(harness.auth, { username: "target", password: `wrong ${attempt}` }))).toBe(40100);
    }
    expect((await login(harness.auth, { username: "target", password: goodPassword })).status).toBe("authenticated");
    expect(harness.events.filter((event) => event.type === "throttled")).toEqual([]);
  });

  it("a link it sends resets the password", async () => {
    const harness = makeEmailAuth();
    await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    await forgot(harness, { username: "alice", acceptLanguage: "de" });
    const token = tokenOf(harness.outbox[0]);
    expect(await resetPassword(harness.auth, { token, newPassword: "a brand new passphrase" })).toEqual({ reset: true });
  });
});

describe("forgotPassword's refusals", () => {
  it("names the field it refuses, and a username that can be nobody's answers {} without a budget of its own", async () => {
    const harness = makeEmailAuth();
    const refusal = async (input: object) => {
      const error = await authError(forgotPassword(harness.auth, input as never));
      return { code: error.code, message: error.message };
    };
    expect(await refusal({})).toEqual({ code: 40001, message: "username or email is required" });
    expect(await refusal({ username: "alice", email: "alice@example.com" })).toEqual({
      code: 40002,
      message: "Send the username or the email address, not both",
    });
    expect(await refusal({ username: 5 })).toEqual({ code: 40002, message: "username must be a string" });
    expect(await refusal({ email: 5 })).toEqual({ code: 40002, message: "email must be a string" });
    for (let attempt = 0; attempt < 5; attempt++) {
      expect(await forgot(harness, { username: ` spaced ${attempt} ` })).toEqual({});
    }
    expect(harness.outbox).toEqual([]);
  });
});
