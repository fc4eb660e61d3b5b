// Issue 42 item 1 over HTTP on every adapter: the email sign-in routes off without
// `emailSignIn` (40400), one answer for every address (PL-3, bytes and time), the binding cookie
// and the body's binding, one sign-in per code under 20 concurrent finishes (PL-1), and the 40102
// step for a TOTP user (PL-4).
import { type EmailMessage, createUser, emailDeliveriesSettled } from "@portcullis/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type TestAuth,
  createTestUser,
  createTotpUser,
  createUserWithVerifiedEmail,
  makeTestAuth,
  nextTotpCode,
  testPassword,
} from "../fixtures/auth.js";
import { expectSameTime, timeAnswersFromAnotherProcess } from "./answer-timing.js";
import { type CallResult, post } from "./client.js";
import { expectEnvelope } from "./contract-suite.js";
import { makeEmailAuth, emailThrottle as throttle } from "./email-auth.js";
import { describeOpenApiDrift } from "./openapi-drift.js";
import { type RunningServer, adapters } from "./servers.js";

const base = "/api/v1/auth";
/** A test auth with email sign-in by code and link, messages in `outbox` after `sendDelayMs`. */
const makeSignInAuth = ({ sendDelayMs }: { sendDelayMs?: number } = {}) =>
  makeEmailAuth({ sendDelayMs, config: { emailSignIn: { enabled: true, method: "both" } } });

/** What of an answer must not tell addresses apart: status, every header but `date`, the binding cookie's shape, and the body's shape. */
function answerOf(result: CallResult) {
  const headers = [...result.headers.entries()]
    .filter(([name]) => name !== "date" && name !== "content-length")
    .map(([name, value]) => [name, name === "set-cookie" ? value.replace(/=[A-Za-z0-9_-]{43};/, "=…;") : value]);
  const body = result.text.replace(/"binding":"[A-Za-z0-9_-]{43}"/, '"binding":"…"');
  return { status: result.status, headers, body, length: result.text.length };
}

/** The binding cookie of a begin's answer, as a `Cookie` header. */
const cookieOf = (result: CallResult): string => (result.headers.get("set-cookie") ?? "").split(";")[0] as string;

describe.each(adapters)("email sign-in over HTTP on %s", (_name, start) => {
  describe("without emailSignIn", () => {
    let server: RunningServer;
    beforeAll(async () => {
      server = await start(makeTestAuth({ throttle }).auth);
    });
    afterAll(async () => {
      await server.close();
    });

    it("PL-9: both routes answer 40400", async () => {
      expectEnvelope(await post(server, `${base}/email-sign-in/begin`, { email: "a@example.com" }), 40400);
      expectEnvelope(await post(server, `${base}/email-sign-in/finish`, { binding: "x", code: "123456" }), 40400);
    });
  });

  describe("with emailSignIn", () => {
    let testAuth: TestAuth & { outbox: EmailMessage[] };
    let server: RunningServer;
    beforeAll(async () => {
      testAuth = makeSignInAuth();
      server = await start(testAuth.auth);
    });
    afterAll(async () => {
      await emailDeliveriesSettled(testAuth.auth);
      await server.close();
    });

    /** Begins a sign-in for `email` and returns the answer and the message it caused. */
    async function begin(email: string) {
      const answer = await post(server, `${base}/email-sign-in/begin`, { email });
      expectEnvelope(answer, 0);
      await emailDeliveriesSettled(testAuth.auth);
      return { answer, message: testAuth.outbox.at(-1) };
    }

    it("PL-3: begin answers byte for byte alike for a known verified, an unknown, an unverified and a disabled address; only the known one is sent a message", async () => {
      const { auth, outbox } = testAuth;
      await createUserWithVerifiedEmail(auth, "known");
      await createUser(auth, { username: "unverified", password: testPassword, email: "unverified@example.com" });
      await createUser(auth, {
        username: "disabled",
        password: testPassword,
        email: "disabled@example.com",
        emailVerified: true,
        disabled: true,
      });
      outbox.length = 0;
      const answers = [];
      for (const email of ["Known@example.com", "nobody@example.com", "unverified@example.com", "disabled@example.com"]) {
        answers.push(answerOf(await post(server, `${base}/email-sign-in/begin`, { email })));
      }
      const [first, ...others] = answers;
      expect(JSON.parse(first?.body ?? "")).toEqual({ code: 0, message: "OK", data: { binding: "…", expiresIn: 600 } });
      expect(first?.headers).toContainEqual([
        "set-cookie",
        "portcullis_email_sign_in=…; Path=/api/v1/auth/email-sign-in; HttpOnly; SameSite=Lax; Max-Age=600",
      ]);
      for (const other of others) expect(other).toEqual(first);
      await emailDeliveriesSettled(auth);
      expect(outbox.map(({ kind, to }) => ({ kind, to }))).toEqual([{ kind: "sign_in", to: "known@example.com" }]);
    });

    it("PL-1: of 20 concurrent finishes with the right code and the binding cookie, exactly one signs in; the others get 40100", async () => {
      await createUserWithVerifiedEmail(testAuth.auth, "racer");
      const { answer, message } = await begin("racer@example.com");
      const cookie = cookieOf(answer);
      const results = await Promise.all(
        Array.from({ length: 20 }, () =>
          post(server, `${base}/email-sign-in/finish`, { code: message?.code }, { headers: { cookie } }),
        ),
      );
      const codes = results.map((result) => result.body.code);
      expect(codes.filter((code) => code === 0)).toHaveLength(1);
      expect(codes.filter((code) => code === 40100)).toHaveLength(19);
      const winner = results.find((result) => result.body.code === 0) as CallResult;
      expect(winner.body.data.user.username).toBe("racer");
      expect(winner.headers.get("set-cookie")).toMatch(
        /portcullis_email_sign_in=; Path=\/api\/v1\/auth\/email-sign-in; HttpOnly; SameSite=Lax; Max-Age=0/,
      );
      expect(winner.headers.get("set-cookie")).toMatch(/portcullis_device=/);
    });

    it("PL-1: the link's token with the body's binding (a client without cookies) signs in once; the cookie wins over the body", async () => {
      await createUserWithVerifiedEmail(testAuth.auth, "linker");
      const { answer, message } = await begin("linker@example.com");
      const token = new URL(message?.link as string).hash.replace("#token=", "");
      const other = await begin("nobody-else@example.com");
      // Another sign-in's binding in the cookie: the body's binding is not read.
      const withOtherCookie = await post(
        server,
        `${base}/email-sign-in/finish`,
        { token, binding: answer.body.data.binding },
        { headers: { cookie: cookieOf(other.answer) } },
      );
      expectEnvelope(withOtherCookie, 40100);
      expect(withOtherCookie.body.message).toBe("The code or link is invalid or expired");
      expectEnvelope(await post(server, `${base}/email-sign-in/finish`, { token, binding: answer.body.data.binding }), 0);
      expectEnvelope(await post(server, `${base}/email-sign-in/finish`, { token, binding: answer.body.data.binding }), 40100);
      expectEnvelope(await post(server, `${base}/email-sign-in/finish`, { token }), 40001);
      expectEnvelope(await post(server, `${base}/email-sign-in/finish`, { binding: "b", code: "1", token: "t" }), 40002);
    });

    it("PL-4: a TOTP user gets 40102 after the email code, then signs in with TOTP", async () => {
      const user = await createTotpUser(testAuth.auth, "second");
      await testAuth.auth.storage.users.setEmail(user.id, { email: "second@example.com", verified: true }, testAuth.auth.now());
      const { answer, message } = await begin("second@example.com");
      const step = await post(
        server,
        `${base}/email-sign-in/finish`,
        { code: message?.code },
        { headers: { cookie: cookieOf(answer) } },
      );
      expectEnvelope(step, 40102);
      const tempToken = step.body.data.tempToken as string;
      const signedIn = await post(server, `${base}/2fa/verify`, { tempToken, code: await nextTotpCode(testAuth, user.secret) });
      expectEnvelope(signedIn, 0);
      const claims = JSON.parse(
        Buffer.from(String(signedIn.body.data.accessToken).split(".")[1] as string, "base64url").toString(),
      );
      expect(claims.amr).toEqual(["email", "otp", "mfa"]);
    });

    it("PL-9: a password user's password still works beside it, and a malformed address is 40002", async () => {
      await createTestUser(testAuth.auth, "plain");
      expectEnvelope(await post(server, `${base}/login`, { username: "plain", password: testPassword }), 0);
      expectEnvelope(await post(server, `${base}/email-sign-in/begin`, { email: "no address" }), 40002);
      expectEnvelope(await post(server, `${base}/email-sign-in/begin`, {}), 40001);
    });
  });

  describe("PL-3 timing", () => {
    let testAuth: TestAuth & { outbox: EmailMessage[] };
    let server: RunningServer;
    beforeAll(async () => {
      // A send that takes 25 ms, as a mail server's round trip does: an answer that waited for it would show.
      testAuth = makeSignInAuth({ sendDelayMs: 25 });
      server = await start(testAuth.auth);
    });
    afterAll(async () => {
      await emailDeliveriesSettled(testAuth.auth);
      await server.close();
    });

    it("PL-3: begin answers a known address in the time it answers an unknown one (EN-2's method: median ratio within 0.5 to 2, 81 samples each, from a client process of its own)", async () => {
      const { auth, outbox } = testAuth;
      await createUserWithVerifiedEmail(auth, "timed");
      await expectSameTime(async () => {
        const sent = outbox.length;
        const timed = await timeAnswersFromAnotherProcess({
          url: `${server.baseUrl}${base}/email-sign-in/begin`,
          samples: 81,
          known: { email: "timed@example.com" },
          unknown: { email: "%s@example.com" },
        });
        await emailDeliveriesSettled(auth);
        expect(outbox.length - sent).toBe(81 + 10);
        return timed;
      });
    });
  });
});

describeOpenApiDrift({ exercises: ["beginEmailSignIn", "finishEmailSignIn", "login", "verifyTotp"] });
