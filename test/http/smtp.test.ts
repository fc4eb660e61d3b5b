import { EventEmitter, once } from "node:events";
// Issue 24 end to end through a real mail server: `email.send` wired to nodemailer as the docs
// show, delivering to an SMTP server (smtp-server) on loopback. A forgot request over HTTP puts a
// message in the server's hands; the link read out of that message's text resets the password;
// the notice follows. A server that refuses the recipient changes no answer of forgot (PR-1) and
// is reported (email.failed), while POST /auth/email, which waits for its link, answers 50300.
import type { AddressInfo } from "node:net";
import { type AuthEvent, type EmailMessage, createUser, emailDeliveriesSettled } from "@portcullis/core";
import nodemailer from "nodemailer";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestAuth, generousThrottle, makeTestAuth, testPassword } from "../fixtures/auth.js";
import { call, post } from "./client.js";
import { expectEnvelope } from "./contract-suite.js";
import { describeOpenApiDrift } from "./openapi-drift.js";
import { type RunningServer, adapters } from "./servers.js";

const base = "/api/v1/auth";
const resetUrl = "https://app.example.com/reset-password";
const verifyUrl = "https://app.example.com/verify-email";
const sender = "Example <no-reply@example.com>";
const newPassword = "a brand new passphrase for the test";

/** A message as the SMTP server received it: the envelope and the raw MIME text. */
interface ReceivedMail {
  mailFrom: string;
  rcptTo: string[];
  raw: string;
}

/** A running SMTP server on loopback, without AUTH or STARTTLS, keeping every message it accepts. */
interface MailServer {
  port: number;
  received: ReceivedMail[];
  /** Waits for the `count`-th message (1-based) to arrive (the test's own timeout guards against a hang). */
  nth(count: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

async function startMailServer(options: { refuseRecipients?: boolean } = {}): Promise<MailServer> {
  const received: ReceivedMail[] = [];
  const arrivals = new EventEmitter();
  const server = new SMTPServer({
    disabledCommands: ["AUTH", "STARTTLS"],
    logger: false,
    onRcptTo(_address, _session, callback) {
      if (!options.refuseRecipients) return callback();
      const refusal = Object.assign(new Error("No such user here"), { responseCode: 550 });
      callback(refusal);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        const mailFrom = session.envelope.mailFrom;
        received.push({
          mailFrom: mailFrom ? mailFrom.address : "",
          rcptTo: session.envelope.rcptTo.map((recipient) => recipient.address),
          raw: Buffer.concat(chunks).toString("utf8"),
        });
        arrivals.emit("message");
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    received,
    async nth(count) {
      while (received.length < count) await once(arrivals, "message");
      return received[count - 1] as ReceivedMail;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Headers of a MIME entity, unfolded, by lower-cased name. */
function headersOf(head: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r\n[ \t]+/g, " ").split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return headers;
}

/** Quoted-printable (RFC 2045 §6.7) to text: soft line breaks dropped, `=XX` bytes decoded as UTF-8. */
function decodeQuotedPrintable(body: string): string {
  const bytes: number[] = [];
  const text = body.replace(/=\r?\n/g, "");
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index] as string;
    if (character === "=" && /^[0-9A-Fa-f]{2}$/.test(text.slice(index + 1, index + 3))) {
      bytes.push(Number.parseInt(text.slice(index + 1, index + 3), 16));
      index += 2;
    } else bytes.push(...Buffer.from(character, "utf8"));
  }
  return Buffer.from(bytes).toString("utf8");
}

function decodeBody(headers: Map<string, string>, body: string): string {
  const encoding = (headers.get("content-transfer-encoding") ?? "7bit").toLowerCase();
  if (encoding === "quoted-printable") return decodeQuotedPrintable(body);
  if (encoding === "base64") return Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8");
  return body;
}

/** What a received message says: its headers, and its text and HTML parts decoded. */
interface ParsedMail {
  headers: Map<string, string>;
  text: string;
  html: string;
}

/** Reads the message nodemailer writes for `{ text, html }`: multipart/alternative of a text and an HTML part (or one part alone). */
function parseMail(raw: string): ParsedMail {
  const split = raw.indexOf("\r\n\r\n");
  const headers = headersOf(raw.slice(0, split));
  const body = raw.slice(split + 4);
  const contentType = headers.get("content-type") ?? "text/plain";
  const parts: { headers: Map<string, string>; body: string }[] = [];
  const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1];
  if (contentType.toLowerCase().startsWith("multipart/") && boundary) {
    for (const section of body.split(`--${boundary}`).slice(1)) {
      if (section.startsWith("--")) break;
      const content = section.replace(/^\r\n/, "");
      const end = content.indexOf("\r\n\r\n");
      parts.push({ headers: headersOf(content.slice(0, end)), body: content.slice(end + 4).replace(/\r\n$/, "") });
    }
  } else parts.push({ headers, body });
  const partOf = (type: string) => {
    const part = parts.find((candidate) => (candidate.headers.get("content-type") ?? "").toLowerCase().startsWith(type));
    return part ? decodeBody(part.headers, part.body).replace(/\r\n/g, "\n") : "";
  };
  return { headers, text: partOf("text/plain"), html: partOf("text/html") };
}

/** The auth of one test: `email.send` through nodemailer to `mailServer`, as docs/flows/email.md wires it. */
function authSendingTo(mailServer: MailServer): TestAuth & { events: AuthEvent[]; internalErrors: unknown[] } {
  const transport = nodemailer.createTransport({ host: "127.0.0.1", port: mailServer.port, secure: false, ignoreTLS: true });
  const send = async (m: EmailMessage) => {
    await transport.sendMail({ from: m.from, to: m.to, subject: m.subject, text: m.text, html: m.html });
  };
  const events: AuthEvent[] = [];
  const internalErrors: unknown[] = [];
  const testAuth = makeTestAuth({
    throttle: generousThrottle,
    email: { send, resetUrl, verifyUrl, from: sender, appName: "Example" },
    onInternalError: (error) => internalErrors.push(error),
  });
  for (const type of ["email.sent", "email.failed"] as const)
    testAuth.auth.events.on(type, (event) => {
      events.push(event);
    });
  return { ...testAuth, events, internalErrors };
}

describe.each(adapters)("email through a real SMTP server on loopback, over HTTP on %s", (_name, start) => {
  describe("a server that accepts the message", () => {
    let mailServer: MailServer;
    let testAuth: ReturnType<typeof authSendingTo>;
    let server: RunningServer;
    beforeAll(async () => {
      mailServer = await startMailServer();
      testAuth = authSendingTo(mailServer);
      server = await start(testAuth.auth);
    });
    afterAll(async () => {
      await emailDeliveriesSettled(testAuth.auth);
      await server?.close();
      await mailServer?.close();
    });

    it("PR-2/PR-4/PR-5: forgot → the message arrives → its link's token resets the password → the new one signs in → the notice arrives", async () => {
      const { auth } = testAuth;
      await createUser(auth, { username: "alice", password: testPassword, email: "alice@example.com", emailVerified: true });
      const signedIn = await post(server, `${base}/login`, { username: "alice", password: testPassword });
      expectEnvelope(signedIn, 0);

      const forgot = await post(server, `${base}/password/forgot`, { email: "Alice@Example.com" });
      expectEnvelope(forgot, 0);
      expect(forgot.body.data).toEqual({});
      const resetMail = await mailServer.nth(1);
      expect(resetMail.rcptTo).toEqual(["alice@example.com"]);
      expect(resetMail.mailFrom).toBe("no-reply@example.com");
      const message = parseMail(resetMail.raw);
      expect(message.headers.get("subject")).toBe("Reset your Example password");
      expect(message.headers.get("from")).toBe(sender);
      expect(message.headers.get("to")).toBe("alice@example.com");
      const link = /https:\/\/\S+/.exec(message.text)?.[0] ?? "";
      expect(link).toMatch(/^https:\/\/app\.example\.com\/reset-password#token=[A-Za-z0-9_-]{43,}$/);
      expect(message.html).toContain(`href="${link}"`);
      const token = link.slice(link.indexOf("#token=") + "#token=".length);

      const reset = await post(server, `${base}/password/reset`, { token, newPassword });
      expectEnvelope(reset, 0);
      expect(reset.body.data).toEqual({ reset: true });
      expectEnvelope(await call(server, "GET", `${base}/me`, { token: signedIn.body.data.accessToken }), 40101);
      const fresh = await post(server, `${base}/login`, { username: "alice", password: newPassword });
      expectEnvelope(fresh, 0);
      expect(fresh.body.data.user).toMatchObject({ username: "alice", email: "alice@example.com", emailVerified: true });
      expectEnvelope(await post(server, `${base}/login`, { username: "alice", password: testPassword }), 40100);
      expectEnvelope(await post(server, `${base}/password/reset`, { token, newPassword: `${newPassword}!` }), 40101);

      const noticeMail = await mailServer.nth(2);
      expect(noticeMail.rcptTo).toEqual(["alice@example.com"]);
      const notice = parseMail(noticeMail.raw);
      expect(notice.headers.get("subject")).toBe("Security notice for your Example account");
      expect(notice.text).toContain("the password was reset through a link sent to this address");
      expect(notice.text).not.toContain("#token=");
      await emailDeliveriesSettled(auth);
      expect(testAuth.events.map((event) => event.type)).toEqual(["email.sent", "email.sent"]);
      expect(testAuth.internalErrors).toEqual([]);
    });
  });

  describe("a server that refuses the recipient", () => {
    let mailServer: MailServer;
    let testAuth: ReturnType<typeof authSendingTo>;
    let server: RunningServer;
    beforeAll(async () => {
      mailServer = await startMailServer({ refuseRecipients: true });
      testAuth = authSendingTo(mailServer);
      server = await start(testAuth.auth);
    });
    afterAll(async () => {
      await emailDeliveriesSettled(testAuth.auth);
      await server?.close();
      await mailServer?.close();
    });

    it("PR-1: forgot still answers {} as for an unknown account, and the refusal is reported as email.failed", async () => {
      const { auth, events, internalErrors } = testAuth;
      const user = await createUser(auth, {
        username: "bob",
        password: testPassword,
        email: "bob@example.com",
        emailVerified: true,
      });
      const known = await post(server, `${base}/password/forgot`, { username: "bob" });
      const unknown = await post(server, `${base}/password/forgot`, { username: "nobody" });
      expectEnvelope(known, 0);
      expect({ status: known.status, body: known.text }).toEqual({ status: unknown.status, body: unknown.text });
      expect(known.body.data).toEqual({});
      await emailDeliveriesSettled(auth);
      expect(events).toEqual([
        { type: "email.failed", kind: "password_reset", userId: user.id, reason: "failed", at: auth.now() },
      ]);
      expect(internalErrors).toHaveLength(1);
      expect(String(internalErrors[0])).not.toContain("bob@example.com");
      expect(mailServer.received).toEqual([]);
    });

    it("POST /auth/email, which waits for its link, answers 50300 and the account keeps its address", async () => {
      const { auth, events } = testAuth;
      await createUser(auth, { username: "carol", password: testPassword, email: "carol@example.com", emailVerified: true });
      const signedIn = await post(server, `${base}/login`, { username: "carol", password: testPassword });
      expectEnvelope(signedIn, 0);
      const token = signedIn.body.data.accessToken as string;
      events.length = 0;
      const change = await post(server, `${base}/email`, { email: "carol@new.example" }, { token });
      expectEnvelope(change, 50300);
      await emailDeliveriesSettled(auth);
      // No link went out, so nothing was asked for: no notice to the old address either.
      expect(events.map((event) => ({ type: event.type, kind: (event as { kind?: string }).kind }))).toEqual([
        { type: "email.failed", kind: "email_verification" },
      ]);
      const me = await call(server, "GET", `${base}/me`, { token });
      expectEnvelope(me, 0);
      expect(me.body.data).toMatchObject({ email: "carol@example.com", emailVerified: true });
    });
  });
});

describeOpenApiDrift({ exercises: ["forgotPassword", "resetPassword", "changeEmail", "login", "getPublicUser"] });
