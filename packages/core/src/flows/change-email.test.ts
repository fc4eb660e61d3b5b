import { describe, expect, it } from "vitest";
import { emailDeliveriesSettled } from "../email/deliver.js";
import { type EmailHarness, addUserWithEmail, makeEmailAuth, sentTo, tokenOf, verifyUrl } from "../email/email.test-support.js";
import { ErrorCode } from "../errors/codes.js";
import { importUsers } from "../index.js";
import { adminCreateUser } from "./admin-users.js";
import { changeEmail, verifyEmail } from "./change-email.js";
import { createUser } from "./create-user.js";
import { addUser, authError, goodPassword, makeAuth, outcome, tokensOf } from "./fixtures.test-support.js";
import { forgotPassword } from "./forgot-password.js";
import { signOutEverywhere } from "./manage-users.js";
import { register } from "./register.js";
import { expectOnlyCurrentSessionLives, signedInSession, twoSessions } from "./sessions.test-support.js";

/** The user's stored address and whether it is verified. */
async function addressOf(harness: EmailHarness, userId: string) {
  const user = await harness.storage.users.findById(userId);
  return { email: user?.email, verified: user?.emailVerified };
}

/** Asks for `email` with the password as proof, and waits for the messages. */
async function askFor(harness: EmailHarness, userId: string, email: string) {
  const answer = await changeEmail(harness.auth, { userId, email, password: goodPassword });
  await emailDeliveriesSettled(harness.auth);
  return answer;
}

/** The token of the newest verification link sent to `email`. */
function newestLink(harness: EmailHarness, email: string): string {
  const links = sentTo(harness, email, "email_verification");
  return tokenOf(links[links.length - 1]);
}

describe("changeEmail", () => {
  it("EV-1: needs re-authentication: a recent sign-in, or the password", async () => {
    const harness = makeEmailAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    const { sessionId } = await signedInSession(harness, "alice");
    expect(await changeEmail(harness.auth, { userId, sessionId, email: "fresh@example.com" })).toEqual({ pending: true });
    harness.clock.advance(5 * 60_000 + 1);
    expect(await outcome(changeEmail(harness.auth, { userId, sessionId, email: "later@example.com" }))).toBe(
      ErrorCode.MissingParameter,
    );
    expect(await outcome(changeEmail(harness.auth, { userId, email: "later@example.com" }))).toBe(ErrorCode.MissingParameter);
    expect(
      await outcome(changeEmail(harness.auth, { userId, sessionId, email: "later@example.com", password: "not my password" })),
    ).toBe(ErrorCode.AuthenticationFailed);
    await emailDeliveriesSettled(harness.auth);
    expect(sentTo(harness, "later@example.com")).toEqual([]);
    expect(await changeEmail(harness.auth, { userId, sessionId, email: "later@example.com", password: goodPassword })).toEqual({
      pending: true,
    });
  });

  it("EV-1: the link goes to the new address, a notice to the old verified one; the account keeps the old address until verified", async () => {
    const harness = makeEmailAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    expect(await askFor(harness, userId, "Alice.New@example.com")).toEqual({ pending: true });
    const [link] = sentTo(harness, "Alice.New@example.com");
    expect(link).toMatchObject({ kind: "email_verification" });
    expect(link?.link).toMatch(new RegExp(`^${verifyUrl.replace(/[./]/g, "\\$&")}#token=[A-Za-z0-9_-]{43}$`));
    expect(sentTo(harness, "alice@example.com")).toEqual([expect.objectContaining({ kind: "notice", notice: "email_changed" })]);
    expect(sentTo(harness, "alice@example.com")[0]).not.toHaveProperty("link");
    expect(await addressOf(harness, userId)).toEqual({ email: "alice@example.com", verified: true });
    expect(harness.events.filter((event) => event.type === "email.change_requested")).toEqual([
      expect.objectContaining({ userId }),
    ]);
    expect(JSON.stringify(harness.events)).not.toContain("Alice.New");
    // Until verified, the new address finds nothing and the old one still does.
    await forgotPassword(harness.auth, { email: "alice.new@example.com" });
    await forgotPassword(harness.auth, { email: "alice@example.com" });
    await emailDeliveriesSettled(harness.auth);
    expect(sentTo(harness, "alice@example.com", "password_reset")).toHaveLength(1);
    expect(sentTo(harness, "Alice.New@example.com", "password_reset")).toHaveLength(0);
  });

  it("EV-1: the link verifies the new address, once", async () => {
    const harness = makeEmailAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    await askFor(harness, userId, "Alice.New@example.com");
    const token = newestLink(harness, "Alice.New@example.com");
    expect(await verifyEmail(harness.auth, { token })).toEqual({ verified: true });
    expect(await addressOf(harness, userId)).toEqual({ email: "Alice.New@example.com", verified: true });
    expect(harness.events.filter((event) => event.type === "email.verified")).toEqual([expect.objectContaining({ userId })]);
    expect(await outcome(verifyEmail(harness.auth, { token }))).toBe(ErrorCode.InvalidToken);
    expect(await harness.storage.users.findByVerifiedEmail("alice@example.com")).toBeNull();
    expect((await harness.storage.users.findByVerifiedEmail("alice.new@example.com"))?.id).toBe(userId);
  });

  it("EV-1: a newer link voids the older one", async () => {
    const harness = makeEmailAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    await askFor(harness, userId, "first@example.com");
    const older = newestLink(harness, "first@example.com");
    await askFor(harness, userId, "second@example.com");
    const newer = newestLink(harness, "second@example.com");
    expect(await outcome(verifyEmail(harness.auth, { token: older }))).toBe(ErrorCode.InvalidToken);
    expect(await addressOf(harness, userId)).toEqual({ email: "alice@example.com", verified: true });
    expect(await verifyEmail(harness.auth, { token: newer })).toEqual({ verified: true });
    expect(await addressOf(harness, userId)).toEqual({ email: "second@example.com", verified: true });
  });

  it("EV-1: a link is voided when the token version rises, and expires", async () => {
    const harness = makeEmailAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    await askFor(harness, userId, "new@example.com");
    harness.clock.advance(30 * 60_000);
    expect(await outcome(verifyEmail(harness.auth, { token: newestLink(harness, "new@example.com") }))).toBe(
      ErrorCode.InvalidToken,
    );
    await askFor(harness, userId, "new@example.com");
    await signOutEverywhere(harness.auth, { userId });
    expect(await outcome(verifyEmail(harness.auth, { token: newestLink(harness, "new@example.com") }))).toBe(
      ErrorCode.InvalidToken,
    );
    expect(await addressOf(harness, userId)).toEqual({ email: "alice@example.com", verified: true });
  });

  it("EV-1: an address another account holds verified gets no link but a notice that it stays, and the answer is the same", async () => {
    const harness = makeEmailAuth();
    await addUserWithEmail(harness.auth, "bob", "bob@example.com");
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    const taken = await askFor(harness, userId, "bob@example.com");
    const free = await askFor(harness, userId, "free@example.com");
    expect(taken).toEqual(free);
    expect(sentTo(harness, "bob@example.com", "email_verification")).toEqual([]);
    expect(sentTo(harness, "bob@example.com", "notice").map((message) => message.notice)).toEqual(["address_in_use"]);
    expect(sentTo(harness, "free@example.com", "email_verification")).toHaveLength(1);
  });

  it("SE-2: asking for a new address ends the user's other sessions and keeps this one; the same address again ends none", async () => {
    const harness = makeEmailAuth();
    const userId = await addUserWithEmail(harness.auth, "mover", "mover@example.com");
    const before = await twoSessions(harness, userId, "mover");
    const sessionId = before.current.sessionId;
    await changeEmail(harness.auth, { userId, sessionId, email: "moved@example.com", password: goodPassword });
    await expectOnlyCurrentSessionLives(harness, before, "email_changed");
    const third = await signedInSession(harness, "mover");
    await changeEmail(harness.auth, { userId, sessionId, email: "MOVER@example.com", password: goodPassword });
    expect(harness.events.filter((event) => event.type === "sessions.ended")).toHaveLength(1);
    expect((await harness.storage.sessions.findSession(third.sessionId))?.revokedAt).toBeNull();
  });

  it("EV-1: an address equal after NFKC and lower-casing counts as the same address", async () => {
    const harness = makeEmailAuth();
    await addUserWithEmail(harness.auth, "bob", "bob@example.com");
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    for (const variant of ["BOB@EXAMPLE.COM", "Bob@Example.com", "\uFF42\uFF4F\uFF42@example.com"]) {
      expect(await askFor(harness, userId, variant)).toEqual({ pending: true });
    }
    expect(harness.outbox.filter((message) => message.kind === "email_verification")).toEqual([]);
    expect(harness.outbox.filter((message) => message.notice === "address_in_use")).toHaveLength(3);
    // The user's own address in another case is no change: a new link, no notice.
    await askFor(harness, userId, "ALICE@example.com");
    expect(sentTo(harness, "ALICE@example.com", "email_verification")).toHaveLength(1);
    expect(harness.outbox.filter((message) => message.notice === "email_changed")).toHaveLength(3);
  });

  it("EV-1: verifying an address another account verified meanwhile is 40900, and changes nothing", async () => {
    const harness = makeEmailAuth();
    const aliceId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    const bobId = await addUser(harness.auth, "bob");
    await askFor(harness, aliceId, "shared@example.com");
    const aliceToken = newestLink(harness, "shared@example.com");
    await askFor(harness, bobId, "Shared@Example.com");
    expect(await verifyEmail(harness.auth, { token: newestLink(harness, "Shared@Example.com") })).toEqual({ verified: true });
    expect(await outcome(verifyEmail(harness.auth, { token: aliceToken }))).toBe(ErrorCode.Conflict);
    expect(await addressOf(harness, aliceId)).toEqual({ email: "alice@example.com", verified: true });
    expect(await addressOf(harness, bobId)).toEqual({ email: "Shared@Example.com", verified: true });
  });

  it("EV-1: a verification token is not a reset token, nor the reverse", async () => {
    const harness = makeEmailAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    await forgotPassword(harness.auth, { username: "alice" });
    await emailDeliveriesSettled(harness.auth);
    const resetToken = tokenOf(sentTo(harness, "alice@example.com", "password_reset")[0]);
    expect(await outcome(verifyEmail(harness.auth, { token: resetToken }))).toBe(ErrorCode.InvalidToken);
    expect(await outcome(verifyEmail(harness.auth, { token: "made-up" }))).toBe(ErrorCode.InvalidToken);
    expect(await addressOf(harness, userId)).toEqual({ email: "alice@example.com", verified: true });
  });

  it("throttle.emailChanges: the sixth request in an hour is 42900", async () => {
    const harness = makeEmailAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    for (let request = 0; request < 5; request += 1) await askFor(harness, userId, `new${request}@example.com`);
    expect(await outcome(changeEmail(harness.auth, { userId, email: "one-more@example.com", password: goodPassword }))).toBe(
      ErrorCode.TooManyAttempts,
    );
    await emailDeliveriesSettled(harness.auth);
    expect(sentTo(harness, "one-more@example.com")).toEqual([]);
    harness.clock.advance(60 * 60_000);
    expect(await askFor(harness, userId, "one-more@example.com")).toEqual({ pending: true });
  });

  it("throttle.emailChanges is each user's own: another user's requests spend none of it", async () => {
    const harness = makeEmailAuth();
    const aliceId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    const bobId = await addUserWithEmail(harness.auth, "bob", "bob@example.com");
    for (let request = 0; request < 5; request += 1) await askFor(harness, aliceId, `alice${request}@example.com`);
    expect(await askFor(harness, bobId, "bob-new@example.com")).toEqual({ pending: true });
  });

  it("a link that cannot be sent is 50300, reported as email.failed", async () => {
    const harness = makeEmailAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    harness.failing.now = true;
    expect(await outcome(changeEmail(harness.auth, { userId, email: "new@example.com", password: goodPassword }))).toBe(
      ErrorCode.Unavailable,
    );
    expect(harness.events).toContainEqual(expect.objectContaining({ type: "email.failed", kind: "email_verification" }));
    expect(await addressOf(harness, userId)).toEqual({ email: "alice@example.com", verified: true });
  });

  it("bad input: 40001 no address, 40002 not an address, 40400 an unknown user or email not configured", async () => {
    const harness = makeEmailAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    expect(await outcome(changeEmail(harness.auth, { userId, email: "", password: goodPassword }))).toBe(
      ErrorCode.MissingParameter,
    );
    expect(await outcome(changeEmail(harness.auth, { userId, email: "no-at-sign", password: goodPassword }))).toBe(
      ErrorCode.MalformedParameter,
    );
    expect(await outcome(changeEmail(harness.auth, { userId: "nobody", email: "a@example.com", password: goodPassword }))).toBe(
      ErrorCode.NotFound,
    );
    expect(await outcome(changeEmail(makeAuth().auth, { userId, email: "a@example.com", password: goodPassword }))).toBe(
      ErrorCode.NotFound,
    );
    expect(await outcome(verifyEmail(makeAuth().auth, { token: "x" }))).toBe(ErrorCode.NotFound);
    expect(await outcome(verifyEmail(harness.auth, { token: "" }))).toBe(ErrorCode.MissingParameter);
  });
});

describe("sign-up with an address", () => {
  it("EV-1: stores the address unverified and sends a verification link to it, which verifies it", async () => {
    const harness = makeEmailAuth({ signUp: { enabled: true } });
    const tokens = tokensOf(
      await register(harness.auth, { username: "newcomer", password: goodPassword, email: "newcomer@example.com" }),
    );
    const userId = tokens.user.id;
    expect(await addressOf(harness, userId)).toEqual({ email: "newcomer@example.com", verified: false });
    await emailDeliveriesSettled(harness.auth);
    expect(harness.outbox).toEqual([expect.objectContaining({ kind: "email_verification", to: "newcomer@example.com" })]);
    expect(await verifyEmail(harness.auth, { token: tokenOf(harness.outbox[0]) })).toEqual({ verified: true });
    expect(await addressOf(harness, userId)).toEqual({ email: "newcomer@example.com", verified: true });
  });

  it("EV-1: an address another account holds verified is stored unverified and never becomes the newcomer's", async () => {
    const harness = makeEmailAuth({ signUp: { enabled: true } });
    await addUserWithEmail(harness.auth, "holder", "held@example.com");
    const tokens = tokensOf(
      await register(harness.auth, { username: "claimer", password: goodPassword, email: "HELD@example.com" }),
    );
    await emailDeliveriesSettled(harness.auth);
    expect(await addressOf(harness, tokens.user.id)).toEqual({ email: "HELD@example.com", verified: false });
    for (const link of sentTo(harness, "HELD@example.com", "email_verification")) {
      expect(await outcome(verifyEmail(harness.auth, { token: tokenOf(link) }))).toBe(ErrorCode.Conflict);
    }
    expect((await harness.storage.users.findByVerifiedEmail("held@example.com"))?.username).toBe("holder");
  });
});

describe("changeEmail's and verifyEmail's refusals", () => {
  const answerOf = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (error) {
      const { code, message } = error as { code: number; message: string };
      return { code, message };
    }
    throw new Error("expected a refusal");
  };

  it("name the field they refuse and the account they cannot find", async () => {
    const harness = makeEmailAuth();
    const userId = await addUser(harness.auth, "alice");
    expect(await answerOf(changeEmail(harness.auth, { userId, password: goodPassword } as never))).toEqual({
      code: 40001,
      message: "email is required",
    });
    expect(await answerOf(changeEmail(harness.auth, { email: "a@example.com", password: goodPassword } as never))).toEqual({
      code: 40001,
      message: "userId is required",
    });
    expect(
      await answerOf(changeEmail(harness.auth, { userId: "nobody", email: "a@example.com", password: goodPassword })),
    ).toEqual({
      code: 40400,
      message: "No such user",
    });
    expect(await answerOf(verifyEmail(harness.auth, {} as never))).toEqual({ code: 40001, message: "token is required" });
  });

  it("EV-1: verifying an address taken meanwhile says so; an account gone meanwhile is an invalid link", async () => {
    const harness = makeEmailAuth();
    const aliceId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    await askFor(harness, aliceId, "shared@example.com");
    await addUserWithEmail(harness.auth, "bob", "shared@example.com");
    expect(await answerOf(verifyEmail(harness.auth, { token: newestLink(harness, "shared@example.com") }))).toEqual({
      code: 40900,
      message: "Another account holds this address",
    });

    const storage = harness.storage;
    const vanishing = makeEmailAuth({
      storage: { ...storage, users: { ...storage.users, setEmail: async () => ({ outcome: "unknown" as const }) } },
    });
    const carolId = await addUserWithEmail(vanishing.auth, "carol", "carol@example.com");
    await askFor(vanishing, carolId, "carol@new.example");
    expect(await answerOf(verifyEmail(vanishing.auth, { token: newestLink(vanishing, "carol@new.example") }))).toEqual({
      code: 40101,
      message: "The link is invalid, expired or already used",
    });
  });
});

describe("EV-1: an address holding a character no one sees is refused by every flow that takes one", () => {
  const invisibles = [0x034f, 0xfe0f, 0x3164, 0x180b].map((codePoint) => String.fromCodePoint(codePoint));
  const hidden = { code: 40002, message: "email must not hold spaces, control or invisible characters" };
  const refusal = async (promise: Promise<unknown>) => {
    const error = await authError(promise);
    return { code: error.code, message: error.message };
  };

  it("EV-1: changeEmail, sign-up, createUser and adminCreateUser answer 40002 for U+034F, U+FE0F, U+3164 and U+180B, storing and sending nothing", async () => {
    const harness = makeEmailAuth({ signUp: { enabled: true } });
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    const adminUserId = await addUser(harness.auth, "admin", goodPassword, ["admin"]);
    for (const [index, invisible] of invisibles.entries()) {
      const email = `bob${invisible}@example.com`;
      expect(await refusal(changeEmail(harness.auth, { userId, email, password: goodPassword }))).toEqual(hidden);
      expect(await refusal(register(harness.auth, { username: `signer-${index}`, password: goodPassword, email }))).toEqual(
        hidden,
      );
      expect(await refusal(createUser(harness.auth, { username: `made-${index}`, password: goodPassword, email }))).toEqual(
        hidden,
      );
      expect(
        await refusal(
          adminCreateUser(harness.auth, { adminUserId, username: `admin-made-${index}`, password: goodPassword, email }),
        ),
      ).toEqual(hidden);
    }
    await emailDeliveriesSettled(harness.auth);
    expect(harness.outbox).toEqual([]);
    for (const prefix of ["signer-", "made-", "admin-made-"]) {
      expect(await harness.storage.users.findByUsernameKey(`${prefix}0`)).toBeNull();
    }
  });

  it("EV-1: the import refuses such an address with the record's line, and writes nothing", async () => {
    const harness = makeEmailAuth();
    const refusals: { position: number; field: string; reason: string }[] = [];
    const records = invisibles.map((invisible, index) => ({
      username: `imported-${index}`,
      email: `carol${invisible}@example.com`,
    }));
    const summary = await importUsers(harness.auth, records, { onRefused: (refused) => refusals.push(refused) });
    expect(summary).toMatchObject({ imported: 0, refused: invisibles.length });
    expect(refusals.map(({ field }) => field)).toEqual(invisibles.map(() => "email"));
    for (const { reason } of refusals) expect(reason).toContain("invisible characters");
  });
});
