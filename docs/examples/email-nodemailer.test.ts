// Runs docs/examples/email-nodemailer.ts against a real SMTP server on loopback (smtp-server):
// a reset link asked for over the flow arrives there, and its link resets the password.
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import {
  createAuth,
  createUser,
  emailDeliveriesSettled,
  forgotPassword,
  login,
  memoryStorage,
  resetPassword,
} from "@portcullis/core";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodemailerSend } from "./email-nodemailer.js";

interface Received {
  from: string;
  to: string[];
  data: string;
}

const received: Received[] = [];
let server: SMTPServer;
let port: number;

beforeAll(async () => {
  server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          data: Buffer.concat(chunks).toString("utf8"),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** The text of a quoted-printable body, soft line breaks joined. */
const unfold = (data: string) => data.replace(/=\r?\n/g, "").replace(/=3D/g, "=");

describe("docs/examples/email-nodemailer.ts", () => {
  it("delivers a reset link through SMTP, and the link resets the password", async () => {
    const auth = createAuth({
      storage: memoryStorage(),
      issuer: "https://api.example.com",
      audience: "example-api",
      secrets: { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("base64url") },
      email: {
        send: nodemailerSend({ host: "127.0.0.1", port, defaultFrom: "Example <no-reply@example.com>" }),
        resetUrl: "https://app.example.com/reset-password",
        verifyUrl: "https://app.example.com/verify-email",
      },
    });
    await createUser(auth, {
      username: "ada",
      password: "correct horse battery staple",
      email: "ada@example.com",
      emailVerified: true,
    });
    await forgotPassword(auth, { username: "ada" });
    await emailDeliveriesSettled(auth);
    expect(received).toHaveLength(1);
    const [message] = received as [Received];
    expect(message).toMatchObject({ from: "no-reply@example.com", to: ["ada@example.com"] });
    const link = /https:\/\/app\.example\.com\/reset-password#token=([A-Za-z0-9_-]{43})/.exec(unfold(message.data));
    expect(link).not.toBeNull();
    await resetPassword(auth, { token: link?.[1] as string, newPassword: "a new and long passphrase" });
    expect((await login(auth, { username: "ada", password: "a new and long passphrase" })).status).toBe("authenticated");
    await emailDeliveriesSettled(auth);
    expect(received).toHaveLength(2);
    expect(received[1]?.to).toEqual(["ada@example.com"]);
    expect(unfold(received[1]?.data ?? "")).toContain("the password was reset");
  });
});
