import { describe, expect, it } from "vitest";
import { sha256 } from "../crypto/random.js";
import { emailDeliveriesSettled } from "../email/deliver.js";
import { type EmailHarness, addUserWithEmail, makeEmailAuth, sentTo, tokenOf } from "../email/email.test-support.js";
import { ErrorCode } from "../errors/codes.js";
import { createUser } from "../flows/create-user.js";
import type { AuthOverrides } from "../flows/fixtures.test-support.js";
import { authError, enrolTotp, goodPassword, makeAuth, nextCode, outcome } from "../flows/fixtures.test-support.js";
import { login } from "../flows/login.js";
import { verifyTotp } from "../flows/verify-totp.js";
import type { UserRecord } from "../storage/types.js";
import { beginEmailSignIn } from "./begin-email-sign-in.js";
import { emailBindingCookie, emailBindingFrom } from "./binding-cookie.js";
import type { EmailSignInConfig, ResolvedEmailSignInConfig } from "./email-sign-in-config.js";
import { decide, finishEmailSignIn } from "./finish-email-sign-in.js";
import type { EmailSignInData } from "./sign-in-challenge.js";
import { codeDigest, randomDigits } from "./sign-in-challenge.js";

const signInUrl = "https://app.example.com/email-sign-in";

/** An auth with email sign-in on (`emailSignIn` merged), the sign-in budgets past reach unless given. */
function signInAuth(emailSignIn: EmailSignInConfig = {}, overrides: AuthOverrides = {}): EmailHarness {
  return makeEmailAuth(
    {
      emailSignIn: { enabled: true, ...emailSignIn },
      ...overrides,
      throttle: {
        emailSignInRequests: [{ limit: 1000, window: "15m" }],
        emailSignInRequestsIp: [{ limit: 1000, window: "15m" }],
        ...overrides.throttle,
      },
    },
    { signInUrl, recipientLimit: [{ limit: 1000, window: "1h" }] },
  );
}

/** Begins a sign-in for `email`, waits for its message, and returns the binding with the code and link token sent (if any). */
async function begin(harness: EmailHarness, email: string, ip?: string) {
  const before = harness.outbox.length;
  const { binding, expiresIn } = await beginEmailSignIn(harness.auth, { email, ip });
  await emailDeliveriesSettled(harness.auth);
  const message = harness.outbox.slice(before).at(-1);
  return { binding, expiresIn, message, code: message?.code, token: message?.link ? tokenOf(message) : undefined };
}

describe("emailSignIn options", () => {
  it("PL-9: default to off, codes of 6 digits for 10 minutes, 5 attempts, no sign-up", () => {
    expect(makeAuth().auth.config.emailSignIn).toEqual({
      enabled: false,
      method: "code",
      codeLength: 6,
      ttlMs: 600_000,
      maxAttempts: 5,
      signUp: false,
    });
  });

  it("PL-9: refuse what cannot work: no email, a link without email.signInUrl, sign-up without signUp.enabled, out-of-range values, unknown options", () => {
    expect(() => makeAuth({ emailSignIn: { enabled: true } })).toThrow(/emailSignIn.enabled needs email/);
    expect(() => makeEmailAuth({ emailSignIn: { enabled: true, method: "both" } })).toThrow(/needs email.signInUrl/);
    expect(() => makeEmailAuth({ emailSignIn: { enabled: true, signUp: true } })).toThrow(/needs signUp.enabled/);
    expect(() => makeEmailAuth({ emailSignIn: { codeLength: 5 } })).toThrow(/codeLength must be from 6 to 8/);
    expect(() => makeEmailAuth({ emailSignIn: { codeLength: 9 } })).toThrow(/codeLength must be from 6 to 8/);
    expect(() => makeEmailAuth({ emailSignIn: { ttl: "30s" } })).toThrow(/ttl must be from "1m" to "1h"/);
    expect(() => makeEmailAuth({ emailSignIn: { ttl: "2h" } })).toThrow(/ttl must be from "1m" to "1h"/);
    expect(() => makeEmailAuth({ emailSignIn: { maxAttempts: 0 } })).toThrow(/maxAttempts/);
    expect(() => makeEmailAuth({ emailSignIn: { method: "sms" as never } })).toThrow(/method must be/);
    expect(() => makeEmailAuth({ emailSignIn: { enable: true } as never })).toThrow(/emailSignIn\.enable/);
    expect(() => makeEmailAuth({}, { signInUrl: "http://app.example.com/in" })).toThrow(/signInUrl must be an https: URL/);
    expect(makeEmailAuth({ emailSignIn: { enabled: true, method: "link" } }, { signInUrl }).auth.config.emailSignIn.method).toBe(
      "link",
    );
  });
});

describe("randomDigits", () => {
  it("PL-10: draws bytes of 250 and more again rather than reducing them (no modulo bias)", () => {
    const bytes = [255, 250, 9, 249, 0, 251, 123, 17, 42, 99];
    let next = 0;
    const source = (size: number) => Uint8Array.from({ length: size }, () => bytes[next++ % bytes.length] as number);
    expect(randomDigits(source, 6)).toBe("990372");
  });

  it("PL-10: gives every digit alike over many codes", () => {
    const { auth } = makeAuth();
    const counts = new Array(10).fill(0) as number[];
    for (let i = 0; i < 2000; i += 1)
      for (const digit of randomDigits(auth.randomBytes, 8)) counts[Number(digit)] = (counts[Number(digit)] ?? 0) + 1;
    for (const count of counts) expect(Math.abs(count - 1600)).toBeLessThan(200);
  });
});

describe("decide: what a finish proves, from what it read", () => {
  // signUp.enabled on the instance: each case's emailSignIn options say whether sign-up by email is on.
  const { auth } = signInAuth({}, { signUp: { enabled: true } });
  const challenge = { id: "binding-hash" };
  const data = {
    emailKey: "a@example.com",
    codeHash: codeDigest(auth, "binding-hash", "123456"),
    linkHash: sha256("link-token"),
  };
  const codeOnly = { ...data, linkHash: null };
  const holder = (changes: Partial<UserRecord> = {}): UserRecord => ({
    id: "u1",
    username: "a",
    usernameKey: "a",
    passwordHash: null,
    roles: [],
    disabled: false,
    tokenVersion: 0,
    source: "local",
    email: "a@example.com",
    emailVerified: true,
    createdAt: 0,
    updatedAt: 0,
    ...changes,
  });
  const config = (changes: Partial<ResolvedEmailSignInConfig> = {}): ResolvedEmailSignInConfig => ({
    ...auth.config.emailSignIn,
    ...changes,
  });
  const right = { code: "123456" };
  const wrong = { code: "654321" };
  const link = { token: "link-token" };
  const cases: [string, ResolvedEmailSignInConfig, EmailSignInData, UserRecord | null, object, string][] = [
    ["PL-1: the right code of a local holder", config(), data, holder(), right, "sign_in"],
    ["PL-1: the right link of a local holder", config({ method: "both" }), data, holder(), link, "sign_in"],
    ["PL-5: a wrong code", config(), data, holder(), wrong, "refused"],
    ["PL-5: a link token where no link was made", config(), codeOnly, holder(), link, "refused"],
    ["PL-1: a code when the messages carry links only", config({ method: "link" }), data, holder(), right, "refused"],
    ["PL-4: a disabled holder, told 40300 later (EN-1)", config(), data, holder({ disabled: true }), right, "sign_in"],
    ["a directory's account", config(), data, holder({ source: "directory" }), right, "refused"],
    ["PL-8: the right code to nobody, sign-up off", config(), data, null, right, "refused"],
    ["PL-8: the right code to nobody, sign-up on", config({ signUp: true }), data, null, right, "sign_up"],
    ["PL-8: a link to nobody never signs up", config({ signUp: true, method: "both" }), data, null, link, "refused"],
  ];
  it.each(cases)("%s", (_name, options, stored, found, presented, expected) => {
    expect(decide(auth, options, challenge, stored, found, presented).outcome).toBe(expected);
  });
});

describe("the binding cookie", () => {
  it("PL-2: over TLS __Host-portcullis_email_sign_in, Secure, on /; over plain HTTP on the email sign-in routes; sent twice is refused", async () => {
    const { auth } = signInAuth();
    expect(emailBindingCookie(auth, "b1", true, 600)).toBe(
      "__Host-portcullis_email_sign_in=b1; Path=/; HttpOnly; SameSite=Lax; Max-Age=600; Secure",
    );
    expect(emailBindingCookie(auth, "b1", false, 600)).toBe(
      "portcullis_email_sign_in=b1; Path=/api/v1/auth/email-sign-in; HttpOnly; SameSite=Lax; Max-Age=600",
    );
    expect(emailBindingFrom("portcullis_email_sign_in=plain; __Host-portcullis_email_sign_in=host", true)).toBe("host");
    expect(emailBindingFrom("portcullis_email_sign_in=plain", true)).toBeUndefined();
    expect(emailBindingFrom("portcullis_email_sign_in=plain", false)).toBe("plain");
    expect(() => emailBindingFrom("__Host-portcullis_email_sign_in=a; __Host-portcullis_email_sign_in=b", true)).toThrow(
      "The code or link is invalid or expired",
    );
  });
});

describe("email sign-in", () => {
  it("PL-3: known verified, unknown, unverified, disabled and directory-less addresses get the same answer and the same stored work; only the verified, enabled account is sent a code", async () => {
    const harness = signInAuth();
    const { auth, outbox } = harness;
    await addUserWithEmail(auth, "known", "known@example.com");
    await addUserWithEmail(auth, "unverified", "unverified@example.com", false);
    await createUser(auth, {
      username: "disabled",
      password: goodPassword,
      disabled: true,
      email: "disabled@example.com",
      emailVerified: true,
    });
    const put: unknown[] = [];
    const originalPut = auth.storage.challenges.put.bind(auth.storage.challenges);
    auth.storage.challenges.put = async (record) => {
      put.push({ kind: record.kind, userId: record.userId, attempts: record.attempts, keys: Object.keys(record.data).sort() });
      return originalPut(record);
    };
    const answers = [];
    for (const email of ["KNOWN@example.com", "nobody@example.com", "unverified@example.com", "disabled@example.com"]) {
      const answer = await beginEmailSignIn(auth, { email });
      expect(answer.binding).toMatch(/^[A-Za-z0-9_-]{43}$/);
      answers.push({ ...answer, binding: "…" });
    }
    expect(new Set(answers.map((answer) => JSON.stringify(answer))).size).toBe(1);
    expect(answers[0]).toEqual({ binding: "…", expiresIn: 600 });
    expect(new Set(put.map((entry) => JSON.stringify(entry))).size).toBe(1);
    expect(put[0]).toEqual({ kind: "email_sign_in", userId: null, attempts: 0, keys: ["codeHash", "emailKey", "linkHash"] });
    await emailDeliveriesSettled(auth);
    expect(outbox.map(({ kind, to }) => ({ kind, to }))).toEqual([{ kind: "sign_in", to: "known@example.com" }]);
    expect(outbox[0]?.code).toMatch(/^\d{6}$/);
    expect(outbox[0]?.text).toContain(outbox[0]?.code);
    expect(outbox[0]?.link).toBeUndefined();
    const requested = harness.events.filter((event) => event.type === "email_sign_in.requested");
    expect(requested.map((event) => ("userId" in event ? event.userId !== null : "?"))).toEqual([true, false, false, true]);
  });

  it("PL-10: the stored challenge holds neither the code nor the link's token, only keyed or hashed digests", async () => {
    const harness = signInAuth({ method: "both" });
    await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    const { binding, code, token } = await begin(harness, "alice@example.com");
    const stored = JSON.stringify(await harness.storage.challenges.find(sha256(binding), "email_sign_in", harness.auth.now()));
    expect(stored).not.toContain(code);
    expect(stored).not.toContain(token);
    expect(stored).not.toContain(binding);
  });

  it("PL-1: a right code signs in, amr email, once; the account's failures are cleared", async () => {
    const harness = signInAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    const { binding, code } = await begin(harness, "alice@example.com");
    const result = await finishEmailSignIn(harness.auth, { binding, code: code as string });
    expect(result.status).toBe("authenticated");
    const succeeded = harness.events.find((event) => event.type === "login.succeeded");
    expect(succeeded).toMatchObject({ userId, amr: ["email"] });
    expect(await outcome(finishEmailSignIn(harness.auth, { binding, code: code as string }))).toBe(40100);
  });

  it("PL-2: a link (method link) signs in with its token; a code is then never taken, as none was sent", async () => {
    const harness = signInAuth({ method: "link" });
    await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    const { binding, message, token } = await begin(harness, "alice@example.com");
    expect(message?.code).toBeUndefined();
    expect(message?.link?.startsWith(`${signInUrl}#token=`)).toBe(true);
    const stored = await harness.storage.challenges.find(sha256(binding), "email_sign_in", harness.auth.now());
    expect(stored).not.toBeNull();
    expect(await outcome(finishEmailSignIn(harness.auth, { binding, token: token as string }))).toBe("fulfilled");
  });

  it("PL-1: method both: the message has the code and the link; either signs in, and the other is then spent", async () => {
    const harness = signInAuth({ method: "both" });
    await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    const first = await begin(harness, "alice@example.com");
    expect(first.message?.text).toContain(first.code);
    expect(first.message?.text).toContain(first.message?.link);
    expect(await outcome(finishEmailSignIn(harness.auth, { binding: first.binding, token: first.token as string }))).toBe(
      "fulfilled",
    );
    expect(await outcome(finishEmailSignIn(harness.auth, { binding: first.binding, code: first.code as string }))).toBe(40100);
  });

  it("PL-1: of 20 concurrent finishes with the right code, exactly one signs in; the others get 40100", async () => {
    const harness = signInAuth();
    await addUserWithEmail(harness.auth, "racer", "racer@example.com");
    const { binding, code } = await begin(harness, "racer@example.com");
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, () => outcome(finishEmailSignIn(harness.auth, { binding, code: code as string }))),
    );
    expect(outcomes.filter((value) => value === "fulfilled")).toHaveLength(1);
    expect(outcomes.filter((value) => value === 40100)).toHaveLength(19);
  });

  it("PL-2: the code works only with its own binding: another sign-in's binding, or none, is refused", async () => {
    const harness = signInAuth();
    await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    const mine = await begin(harness, "alice@example.com");
    const theirs = await begin(harness, "nobody@example.com");
    expect(await outcome(finishEmailSignIn(harness.auth, { binding: theirs.binding, code: mine.code as string }))).toBe(40100);
    expect(await outcome(finishEmailSignIn(harness.auth, { binding: "", code: mine.code as string }))).toBe(40001);
    expect(await outcome(finishEmailSignIn(harness.auth, { binding: mine.binding }))).toBe(40001);
    expect(await outcome(finishEmailSignIn(harness.auth, { binding: mine.binding, code: mine.code as string, token: "x" }))).toBe(
      40002,
    );
    expect(await outcome(finishEmailSignIn(harness.auth, { binding: mine.binding, code: 123456 as never }))).toBe(40002);
  });

  it("PL-3: every refusal says the same: wrong code, unknown address, spent, expired", async () => {
    const harness = signInAuth();
    await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    const known = await begin(harness, "alice@example.com");
    const unknown = await begin(harness, "nobody@example.com");
    const messages = [
      await authError(
        finishEmailSignIn(harness.auth, { binding: known.binding, code: "000000" === known.code ? "111111" : "000000" }),
      ),
      await authError(finishEmailSignIn(harness.auth, { binding: unknown.binding, code: "000000" })),
      await authError(finishEmailSignIn(harness.auth, { binding: "never-issued", code: "000000" })),
    ].map((error) => [error.code, error.message]);
    for (const message of messages) expect(message).toEqual([40100, "The code or link is invalid or expired"]);
  });

  it("PL-6: a code is void after emailSignIn.ttl", async () => {
    const harness = signInAuth({ ttl: "2m" });
    await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    const { binding, code, expiresIn } = await begin(harness, "alice@example.com");
    expect(expiresIn).toBe(120);
    harness.clock.advance(120_000);
    expect(await outcome(finishEmailSignIn(harness.auth, { binding, code: code as string }))).toBe(40100);
  });

  it("PL-5: attempts are capped per code (maxAttempts): after them the right code is refused too", async () => {
    const harness = signInAuth({ maxAttempts: 3 }, { throttle: { account: [{ limit: 1000, window: "15m" }] } });
    await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    const { binding, code } = await begin(harness, "alice@example.com");
    const wrong = code === "000000" ? "000001" : "000000";
    for (let attempt = 0; attempt < 3; attempt += 1) {
      expect(await outcome(finishEmailSignIn(harness.auth, { binding, code: wrong }))).toBe(40100);
    }
    expect(await outcome(finishEmailSignIn(harness.auth, { binding, code: code as string }))).toBe(40100);
  });

  it("PL-5: wrong codes spend the account's failure budget: the password is then throttled too, and the answer stays 40100", async () => {
    const harness = signInAuth({ maxAttempts: 10 }, { throttle: { account: [{ limit: 3, window: "15m" }] } });
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    const { binding, code } = await begin(harness, "alice@example.com");
    const wrong = code === "000000" ? "000001" : "000000";
    for (let attempt = 0; attempt < 5; attempt += 1) {
      expect(await outcome(finishEmailSignIn(harness.auth, { binding, code: wrong }))).toBe(40100);
    }
    expect(harness.events.filter((event) => event.type === "login.failed" && event.userId === userId)).toHaveLength(5);
    expect(harness.events.some((event) => event.type === "throttled" && event.scope === "account")).toBe(true);
    expect(await outcome(login(harness.auth, { username: "alice", password: goodPassword }))).toBe(ErrorCode.TooManyAttempts);
    // A spent budget refuses the right code too, with the same answer (RL-4, PL-3).
    expect(await outcome(finishEmailSignIn(harness.auth, { binding, code: code as string }))).toBe(40100);
    harness.clock.advance(15 * 60_000);
    const fresh = await begin(harness, "alice@example.com");
    expect((await finishEmailSignIn(harness.auth, { binding: fresh.binding, code: fresh.code as string })).status).toBe(
      "authenticated",
    );
  });

  it("PL-4: a user with TOTP gets 40102 after the email code, then signs in with TOTP; the session's amr is email and otp", async () => {
    const harness = signInAuth({}, { throttle: { account: [{ limit: 1000, window: "15m" }] } });
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    const { secret } = await enrolTotp(harness.auth, userId);
    const { binding, code } = await begin(harness, "alice@example.com");
    const result = await finishEmailSignIn(harness.auth, { binding, code: code as string });
    if (result.status !== "totp_required") throw new Error(`expected the 40102 step, got ${result.status}`);
    const tokens = await verifyTotp(harness.auth, { tempToken: result.tempToken, code: nextCode(harness, secret) });
    expect(tokens.user.id).toBe(userId);
    const succeeded = harness.events.filter((event) => event.type === "login.succeeded").at(-1);
    expect(succeeded).toMatchObject({ userId, amr: ["email", "otp"] });
    const payload = JSON.parse(Buffer.from(tokens.accessToken.split(".")[1] as string, "base64url").toString());
    expect(payload.amr).toEqual(["email", "otp", "mfa"]);
  });

  it("PL-4: an account disabled after the begin is told 40300 once the code is proven", async () => {
    const harness = signInAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    const { binding, code } = await begin(harness, "alice@example.com");
    await harness.storage.users.update(userId, { disabled: true }, harness.auth.now());
    expect(await outcome(finishEmailSignIn(harness.auth, { binding, code: code as string }))).toBe(40300);
  });

  it("PL-7: every finish takes one attempt from the client address's budget; only a sign-up spends unauthenticatedWrites; a storage failure is told as such", async () => {
    const harness = signInAuth(
      {},
      {
        throttle: {
          account: [{ limit: 1000, window: "15m" }],
          ip: [{ limit: 2, window: "15m" }],
          unauthenticatedWrites: [{ limit: 1, window: "15m" }],
        },
      },
    );
    await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    const ip = "203.0.113.7";
    for (let round = 0; round < 2; round += 1) {
      const { binding, code } = await begin(harness, "alice@example.com");
      expect((await finishEmailSignIn(harness.auth, { binding, code: code as string, ip })).status).toBe("authenticated");
    }
    const third = await begin(harness, "alice@example.com");
    expect(await outcome(finishEmailSignIn(harness.auth, { binding: third.binding, code: third.code as string, ip }))).toBe(
      42900,
    );
    const failing = await begin(harness, "alice@example.com");
    harness.auth.storage.counters.hit = async () => {
      throw new Error("counters down");
    };
    await expect(finishEmailSignIn(harness.auth, { binding: failing.binding, code: failing.code as string })).rejects.toThrow(
      "counters down",
    );
  });

  it("PL-7: throttles: emailSignInRequests per address asked for, emailSignInRequestsIp per client address, each 42900", async () => {
    const harness = signInAuth(
      {},
      { throttle: { emailSignInRequests: [{ limit: 2, window: "15m" }], emailSignInRequestsIp: [{ limit: 3, window: "15m" }] } },
    );
    const { auth } = harness;
    expect(await outcome(beginEmailSignIn(auth, { email: "a@example.com", ip: "192.0.2.1" }))).toBe("fulfilled");
    expect(await outcome(beginEmailSignIn(auth, { email: "A@example.com", ip: "192.0.2.2" }))).toBe("fulfilled");
    expect(await outcome(beginEmailSignIn(auth, { email: "a@EXAMPLE.com", ip: "192.0.2.3" }))).toBe(42900);
    expect(harness.events.at(-1)).toMatchObject({ type: "throttled", scope: "emailSignInRequests" });
    expect(await outcome(beginEmailSignIn(auth, { email: "b@example.com", ip: "192.0.2.1" }))).toBe("fulfilled");
    expect(await outcome(beginEmailSignIn(auth, { email: "c@example.com", ip: "192.0.2.1" }))).toBe("fulfilled");
    expect(await outcome(beginEmailSignIn(auth, { email: "d@example.com", ip: "192.0.2.1" }))).toBe(42900);
    expect(harness.events.at(-1)).toMatchObject({ type: "throttled", scope: "emailSignInRequestsIp" });
  });

  it("PL-9: begin refuses a missing or malformed address, and both routes' flows are 40400 when off", async () => {
    const harness = signInAuth();
    expect(await outcome(beginEmailSignIn(harness.auth, { email: "" }))).toBe(40001);
    expect(await outcome(beginEmailSignIn(harness.auth, { email: "not an address" }))).toBe(40002);
    const off = makeEmailAuth();
    expect(await outcome(beginEmailSignIn(off.auth, { email: "a@example.com" }))).toBe(40400);
    expect(await outcome(finishEmailSignIn(off.auth, { binding: "x", code: "123456" }))).toBe(40400);
  });

  it("PL-8: sign-up by code: an address nobody holds gets a sign_up code, which makes a local account without a password, the address verified and its username", async () => {
    const harness = signInAuth({ signUp: true, method: "both" }, { signUp: { enabled: true, defaultRoles: ["member"] } });
    const { binding, message, code } = await begin(harness, "New.Comer@Example.com");
    expect(message).toMatchObject({ kind: "sign_up", to: "new.comer@example.com" });
    expect(message?.link).toBeUndefined();
    const result = await finishEmailSignIn(harness.auth, { binding, code: code as string });
    if (result.status !== "authenticated") throw new Error(result.status);
    const user = await harness.storage.users.findByVerifiedEmail("new.comer@example.com");
    expect(user).toMatchObject({ username: "new.comer@example.com", passwordHash: null, emailVerified: true, roles: ["member"] });
    expect(harness.events).toContainEqual(expect.objectContaining({ type: "user.created", by: "sign_up", userId: user?.id }));
    // The next begin is a sign-in of that account.
    const again = await begin(harness, "new.comer@example.com");
    expect(again.message?.kind).toBe("sign_in");
  });

  it("PL-8: a sign-up spends the client address's unauthenticatedWrites before the code: a throttled one leaves the code usable", async () => {
    const harness = signInAuth(
      { signUp: true },
      { signUp: { enabled: true }, throttle: { unauthenticatedWrites: [{ limit: 1, window: "1m" }] } },
    );
    const first = await begin(harness, "first@example.com");
    const second = await begin(harness, "second@example.com");
    const ip = "192.0.2.9";
    expect(await outcome(finishEmailSignIn(harness.auth, { binding: first.binding, code: first.code as string, ip }))).toBe(
      "fulfilled",
    );
    const throttled = { binding: second.binding, code: second.code as string, ip };
    expect(await outcome(finishEmailSignIn(harness.auth, throttled))).toBe(42900);
    harness.clock.advance(60_000);
    expect(await outcome(finishEmailSignIn(harness.auth, throttled))).toBe("fulfilled");
  });

  it("PL-8: without sign-up by email, an address nobody holds is sent nothing and no code is taken for it", async () => {
    const harness = signInAuth({}, { signUp: { enabled: true } });
    const { binding, message } = await begin(harness, "stranger@example.com");
    expect(message).toBeUndefined();
    expect(sentTo(harness, "stranger@example.com")).toEqual([]);
    expect(await outcome(finishEmailSignIn(harness.auth, { binding, code: "123456" }))).toBe(40100);
  });
});
