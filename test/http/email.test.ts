// Issue 24 over HTTP on every adapter: the email routes off without `email` (40400), forgot's
// one answer for every account (PR-1, bytes and time), links built from configuration only
// (PR-5), one reset per token under concurrency (PR-2), no reset past the second factor (PR-3),
// and an address change that needs re-authentication and its own link (EV-1).
import { type AuthEvent, type EmailMessage, createUser, emailDeliveriesSettled } from "@portcullis/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestAuth, createTestUser, createTotpUser, makeTestAuth, nextTotpCode, testPassword } from "../fixtures/auth.js";
import { expectSameTime, timeAnswersFromAnotherProcess } from "./answer-timing.js";
import { type CallResult, call, post, rawExchange } from "./client.js";
import { expectEnvelope } from "./contract-suite.js";
import { makeEmailAuth, resetUrl, emailThrottle as throttle, verifyUrl } from "./email-auth.js";
import { describeOpenApiDrift } from "./openapi-drift.js";
import { type RunningServer, adapters } from "./servers.js";

const base = "/api/v1/auth";
const newPassword = "a brand new passphrase for the test";
const minutes = (count: number) => count * 60_000;

/** The token of a message's link: what follows `#token=`. */
function tokenOf(message: EmailMessage | undefined): string {
  const match = /#token=([A-Za-z0-9_-]+)$/.exec(message?.link ?? "");
  if (!match) throw new Error(`no link with a token in ${JSON.stringify(message)}`);
  return match[1] as string;
}

/** What of an answer must not tell accounts apart: status, every header but `date`, and the raw body. */
function answerOf(result: CallResult) {
  const headers = [...result.headers.entries()].filter(([name]) => name !== "date");
  return { status: result.status, headers, body: result.text };
}

const emailRoutes = [
  ["/password/forgot", { username: "alice" }],
  ["/password/reset", { token: "x".repeat(43), newPassword }],
  ["/email", { email: "alice@example.com" }],
  ["/email/verify", { token: "x".repeat(43) }],
] as const;

describe.each(adapters)("email routes over HTTP on %s", (_name, start) => {
  describe("without email configured", () => {
    let testAuth: TestAuth;
    let server: RunningServer;
    beforeAll(async () => {
      testAuth = makeTestAuth({ throttle });
      server = await start(testAuth.auth);
    });
    afterAll(async () => {
      await server.close();
    });

    it("the four email routes answer 40400, signed in or not", async () => {
      await createTestUser(testAuth.auth, "alice");
      const signedIn = await post(server, `${base}/login`, { username: "alice", password: testPassword });
      expectEnvelope(signedIn, 0);
      for (const [path, body] of emailRoutes) {
        expectEnvelope(await post(server, `${base}${path}`, body), 40400);
        expectEnvelope(await post(server, `${base}${path}`, body, { token: signedIn.body.data.accessToken }), 40400);
      }
    });
  });

  describe("with email configured", () => {
    let testAuth: TestAuth & { outbox: EmailMessage[] };
    let server: RunningServer;
    beforeAll(async () => {
      testAuth = makeEmailAuth({ config: { http: { trustedProxies: ["127.0.0.1", "::1"] } } });
      server = await start(testAuth.auth);
    });
    afterAll(async () => {
      await server.close();
    });

    /** Asks for a reset link for `username` and returns the token the message holds. */
    async function resetTokenFor(username: string): Promise<string> {
      testAuth.outbox.length = 0;
      expectEnvelope(await post(server, `${base}/password/forgot`, { username }), 0);
      await emailDeliveriesSettled(testAuth.auth);
      expect(testAuth.outbox.map((message) => message.kind)).toEqual(["password_reset"]);
      return tokenOf(testAuth.outbox[0]);
    }

    it("PR-1: forgot gives byte-identical answers for a known, an unknown, a disabled and an address-less account; only the known one is sent a link", async () => {
      const { auth, outbox } = testAuth;
      await createUser(auth, { username: "known", password: testPassword, email: "known@example.com", emailVerified: true });
      await createUser(auth, {
        username: "disabled",
        password: testPassword,
        email: "disabled@example.com",
        emailVerified: true,
        disabled: true,
      });
      await createUser(auth, { username: "unverified", password: testPassword, email: "unverified@example.com" });
      await createTestUser(auth, "addressless");
      outbox.length = 0;
      const asked = [
        { username: "known" },
        { username: "nobody" },
        { username: "disabled" },
        { username: "addressless" },
        { username: "unverified" },
        { email: "KNOWN@example.com" },
        { email: "nobody@example.com" },
        { email: "disabled@example.com" },
        { email: "unverified@example.com" },
      ];
      const answers = [];
      for (const body of asked) answers.push(answerOf(await post(server, `${base}/password/forgot`, body)));
      const [first, ...others] = answers;
      expect(JSON.parse(first?.body ?? "")).toEqual({ code: 0, message: "OK", data: {} });
      for (const other of others) expect(other).toEqual(first);
      await emailDeliveriesSettled(auth);
      expect(outbox.map(({ kind, to }) => ({ kind, to }))).toEqual([
        { kind: "password_reset", to: "known@example.com" },
        { kind: "password_reset", to: "known@example.com" },
      ]);
    });

    it("PR-5: a forgot request with Host, X-Forwarded-Host and Forwarded naming evil.example gets a link to the configured resetUrl only", async () => {
      const { auth, outbox } = testAuth;
      await createUser(auth, {
        username: "host-victim",
        password: testPassword,
        email: "victim@example.com",
        emailVerified: true,
      });
      const body = JSON.stringify({ username: "host-victim" });
      const forged = [
        ["x-forwarded-host: evil.example", "x-forwarded-proto: https"],
        ["forwarded: for=127.0.0.1;host=evil.example;proto=https"],
        ["x-forwarded-host: evil.example", "forwarded: host=evil.example", "x-forwarded-server: evil.example"],
      ];
      for (const extra of forged) {
        outbox.length = 0;
        const head = [
          `POST ${base}/password/forgot HTTP/1.1`,
          "host: evil.example",
          ...extra,
          "content-type: application/json",
          `content-length: ${Buffer.byteLength(body)}`,
          "connection: close",
        ];
        const answer = await rawExchange(server, [`${head.join("\r\n")}\r\n\r\n${body}`]);
        expect(answer.body).toEqual({ code: 0, message: "OK", data: {} });
        await emailDeliveriesSettled(auth);
        expect(outbox).toHaveLength(1);
        const [message] = outbox as [EmailMessage];
        expect(message.link?.startsWith(`${resetUrl}#token=`)).toBe(true);
        expect(JSON.stringify(message)).not.toContain("evil.example");
      }
    });

    it("PR-5: an address change asked with Host and X-Forwarded-Host naming evil.example gets a link to the configured verifyUrl only", async () => {
      const { auth, outbox } = testAuth;
      await createTestUser(auth, "host-mover");
      const signedIn = await post(server, `${base}/login`, { username: "host-mover", password: testPassword });
      expectEnvelope(signedIn, 0);
      outbox.length = 0;
      const body = JSON.stringify({ email: "host-mover@example.com" });
      const head = [
        `POST ${base}/email HTTP/1.1`,
        "host: evil.example",
        "x-forwarded-host: evil.example",
        "x-forwarded-proto: https",
        "forwarded: host=evil.example",
        `authorization: Bearer ${signedIn.body.data.accessToken}`,
        "content-type: application/json",
        `content-length: ${Buffer.byteLength(body)}`,
        "connection: close",
      ];
      const answer = await rawExchange(server, [`${head.join("\r\n")}\r\n\r\n${body}`]);
      expect(answer.body).toEqual({ code: 0, message: "OK", data: { pending: true } });
      await emailDeliveriesSettled(auth);
      expect(outbox).toHaveLength(1);
      expect(outbox[0]?.link?.startsWith(`${verifyUrl}#token=`)).toBe(true);
      expect(JSON.stringify(outbox)).not.toContain("evil.example");
    });

    it("PR-2: 20 concurrent resets with one token give exactly one 200 {reset: true}; the others 40101", async () => {
      await createUser(testAuth.auth, {
        username: "racer",
        password: testPassword,
        email: "racer@example.com",
        emailVerified: true,
      });
      const token = await resetTokenFor("racer");
      const results = await Promise.all(
        Array.from({ length: 20 }, () => post(server, `${base}/password/reset`, { token, newPassword })),
      );
      const winners = results.filter((result) => result.status === 200);
      expect(winners).toHaveLength(1);
      expectEnvelope(winners[0] as CallResult, 0);
      expect(winners[0]?.body.data).toEqual({ reset: true });
      for (const result of results) if (result !== winners[0]) expectEnvelope(result, 40101);
      expectEnvelope(await post(server, `${base}/login`, { username: "racer", password: newPassword }), 0);
      expectEnvelope(await post(server, `${base}/login`, { username: "racer", password: testPassword }), 40100);
    });

    it("PR-3: a TOTP user's reset without a code is 40103 and the old password still signs in; with a code it resets and voids the pending sign-in (PR-4)", async () => {
      const { auth } = testAuth;
      const user = await createTotpUser(auth, "two-step");
      await auth.storage.users.setEmail(user.id, { email: "two-step@example.com", verified: true }, auth.now());
      const token = await resetTokenFor("two-step");
      const refused = await post(server, `${base}/password/reset`, { token, newPassword });
      expectEnvelope(refused, 40103);
      expectEnvelope(await post(server, `${base}/password/reset`, { token, newPassword, totpCode: "000000" }), 40103);
      expectEnvelope(await post(server, `${base}/login`, { username: "two-step", password: newPassword }), 40100);
      const pendingSignIn = await post(server, `${base}/login`, { username: "two-step", password: testPassword });
      expectEnvelope(pendingSignIn, 40102);
      const totpCode = await nextTotpCode(testAuth, user.secret);
      const reset = await post(server, `${base}/password/reset`, { token, newPassword, totpCode });
      expectEnvelope(reset, 0);
      // PR-4: the sign-in the old password began is void.
      const laterCode = await nextTotpCode(testAuth, user.secret);
      const tempToken = pendingSignIn.body.data.tempToken as string;
      expectEnvelope(await post(server, `${base}/2fa/verify`, { tempToken, code: laterCode }), 40100);
      expectEnvelope(await post(server, `${base}/login`, { username: "two-step", password: testPassword }), 40100);
      expectEnvelope(await post(server, `${base}/login`, { username: "two-step", password: newPassword }), 40102);
    });

    it("EV-1: POST /auth/email needs re-authentication; the address counts only after its own link; then /auth/me shows it verified", async () => {
      const { auth, outbox, clock } = testAuth;
      await createTestUser(auth, "mover");
      const signedIn = await post(server, `${base}/login`, { username: "mover", password: testPassword });
      expectEnvelope(signedIn, 0);
      const token = signedIn.body.data.accessToken as string;
      clock.advance(minutes(6));
      outbox.length = 0;
      const withoutProof = await post(server, `${base}/email`, { email: "Mover@Example.com" }, { token });
      expectEnvelope(withoutProof, 40001);
      expectEnvelope(
        await post(server, `${base}/email`, { email: "Mover@Example.com", password: "not the password" }, { token }),
        40100,
      );
      await emailDeliveriesSettled(auth);
      expect(outbox).toEqual([]);

      const pending = await post(server, `${base}/email`, { email: "Mover@Example.com", password: testPassword }, { token });
      expectEnvelope(pending, 0);
      expect(pending.body.data).toEqual({ pending: true });
      await emailDeliveriesSettled(auth);
      expect(outbox.map(({ kind, to }) => ({ kind, to }))).toEqual([{ kind: "email_verification", to: "Mover@Example.com" }]);
      expect(outbox[0]?.link?.startsWith(`${verifyUrl}#token=`)).toBe(true);
      const before = await call(server, "GET", `${base}/me`, { token });
      expectEnvelope(before, 0);
      expect(before.body.data).toMatchObject({ email: null, emailVerified: false });

      const link = tokenOf(outbox[0]);
      const verified = await post(server, `${base}/email/verify`, { token: link });
      expectEnvelope(verified, 0);
      expect(verified.body.data).toEqual({ verified: true });
      expectEnvelope(await post(server, `${base}/email/verify`, { token: link }), 40101);
      const after = await call(server, "GET", `${base}/me`, { token });
      expectEnvelope(after, 0);
      expect(after.body.data).toMatchObject({ username: "mover", email: "Mover@Example.com", emailVerified: true });
    });

    it("EV-1: an address holding U+034F, U+FE0F, U+3164 or U+180B is 40002 at POST /auth/email and at forgot, and nothing is sent", async () => {
      const { auth, outbox } = testAuth;
      await createTestUser(auth, "invisible-ink");
      const signedIn = await post(server, `${base}/login`, { username: "invisible-ink", password: testPassword });
      expectEnvelope(signedIn, 0);
      const token = signedIn.body.data.accessToken as string;
      outbox.length = 0;
      for (const codePoint of [0x034f, 0xfe0f, 0x3164, 0x180b]) {
        const email = `ink${String.fromCodePoint(codePoint)}@example.com`;
        const changed = await post(server, `${base}/email`, { email, password: testPassword }, { token });
        expectEnvelope(changed, 40002);
        expect(changed.body.message).toBe("email must not hold spaces, control or invisible characters");
        expectEnvelope(await post(server, `${base}/password/forgot`, { email }), 40002);
      }
      await emailDeliveriesSettled(auth);
      expect(outbox).toEqual([]);
    });

    it("PR-2: a reset link mailed to the old address is 40101 once the user changed to a new address and verified it; the password is unchanged", async () => {
      const { auth, outbox } = testAuth;
      await createUser(auth, { username: "relocated", password: testPassword, email: "old@example.com", emailVerified: true });
      const oldLink = await resetTokenFor("relocated");
      const signedIn = await post(server, `${base}/login`, { username: "relocated", password: testPassword });
      expectEnvelope(signedIn, 0);
      outbox.length = 0;
      const token = signedIn.body.data.accessToken as string;
      expectEnvelope(await post(server, `${base}/email`, { email: "new@example.com" }, { token }), 0);
      await emailDeliveriesSettled(auth);
      const verification = outbox.find((message) => message.kind === "email_verification" && message.to === "new@example.com");
      expectEnvelope(await post(server, `${base}/email/verify`, { token: tokenOf(verification) }), 0);
      expectEnvelope(await post(server, `${base}/password/reset`, { token: oldLink, newPassword }), 40101);
      expectEnvelope(await post(server, `${base}/login`, { username: "relocated", password: testPassword }), 0);
      expectEnvelope(await post(server, `${base}/login`, { username: "relocated", password: newPassword }), 40100);
    });
  });

  describe("EM-1: email.recipientLimit", () => {
    let testAuth: TestAuth & { outbox: EmailMessage[] };
    let server: RunningServer;
    const withheld: AuthEvent[] = [];
    beforeAll(async () => {
      testAuth = makeEmailAuth({ config: { signUp: { enabled: true } }, recipientLimit: [{ limit: 3, window: "1h" }] });
      testAuth.auth.events.on("email.failed", (event) => {
        withheld.push(event);
      });
      server = await start(testAuth.auth);
    });
    afterAll(async () => {
      await server.close();
    });

    it("EM-1: sign-ups, address changes and forgot naming one address send it 3 messages an hour; every answer past the budget is the answer before it", async () => {
      const { auth, outbox } = testAuth;
      await createUser(auth, { username: "victim", password: testPassword, email: "victim@example.com", emailVerified: true });
      const shapes: string[] = [];
      const shapeOf = (result: CallResult) =>
        JSON.stringify({ status: result.status, code: result.body.code, keys: Object.keys(result.body.data ?? {}) });
      for (let round = 0; round < 6; round += 1) {
        const signedUp = await post(server, `${base}/register`, {
          username: `squatter-${round}`,
          password: testPassword,
          email: round % 2 === 0 ? "VICTIM@example.com" : "victim@example.com",
        });
        expectEnvelope(signedUp, 0);
        shapes.push(shapeOf(signedUp));
      }
      expect(new Set(shapes).size).toBe(1);
      const changer = await post(server, `${base}/register`, { username: "changer", password: testPassword });
      const token = changer.body.data.accessToken as string;
      const changes: string[] = [];
      for (let round = 0; round < 4; round += 1) {
        changes.push(answerOf(await post(server, `${base}/email`, { email: "victim@example.com" }, { token })).body);
      }
      expect(new Set(changes)).toEqual(new Set([JSON.stringify({ code: 0, message: "OK", data: { pending: true } })]));
      for (let round = 0; round < 3; round += 1) {
        expectEnvelope(await post(server, `${base}/password/forgot`, { email: "victim@example.com" }), 0);
      }
      await emailDeliveriesSettled(auth);
      const toVictim = outbox.filter((message) => message.to.toLowerCase() === "victim@example.com");
      expect(toVictim.map((message) => message.notice)).toEqual(["address_in_use", "address_in_use", "address_in_use"]);
      expect(withheld).toHaveLength(6 + 4 + 3 - 3);
      for (const event of withheld) expect(event).toMatchObject({ type: "email.failed", reason: "recipient_limit" });
      expect(JSON.stringify(withheld)).not.toContain("victim@");
      // An hour later the address hears again: the reset link goes out.
      testAuth.clock.advance(60 * 60_000);
      expectEnvelope(await post(server, `${base}/password/forgot`, { email: "victim@example.com" }), 0);
      await emailDeliveriesSettled(auth);
      expect(outbox.filter((message) => message.to === "victim@example.com").at(-1)?.kind).toBe("password_reset");
    });
  });

  describe("PR-1 timing", () => {
    let testAuth: TestAuth & { outbox: EmailMessage[] };
    let server: RunningServer;
    beforeAll(async () => {
      // A send that takes 25 ms, as a mail server's round trip does: an answer that waited for it would show.
      testAuth = makeEmailAuth({ sendDelayMs: 25 });
      server = await start(testAuth.auth);
    });
    afterAll(async () => {
      await emailDeliveriesSettled(testAuth.auth);
      await server.close();
    });

    it("PR-1: forgot answers a known account in the time it answers an unknown one (EN-2's method: median ratio within 0.5 to 2, 81 samples each, from a client process of its own)", async () => {
      const { auth, outbox } = testAuth;
      await createUser(auth, { username: "timed", password: testPassword, email: "timed@example.com", emailVerified: true });
      const samples = 81;
      await expectSameTime(async () => {
        const sent = outbox.length;
        const timed = await timeAnswersFromAnotherProcess({
          url: `${server.baseUrl}${base}/password/forgot`,
          samples,
          known: { username: "timed" },
          unknown: { username: "%s" },
        });
        expect(timed.bodies).toEqual([JSON.stringify({ code: 0, message: "OK", data: {} })]);
        await emailDeliveriesSettled(auth);
        expect(outbox.length - sent).toBe(samples + 10);
        return timed;
      });
    });
  });
});

describeOpenApiDrift({
  exercises: ["forgotPassword", "resetPassword", "changeEmail", "verifyEmail", "login", "getPublicUser", "verifyTotp"],
});
