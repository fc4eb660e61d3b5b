// The demo's local mail server: what nodemailer sends it over SMTP on loopback comes out decoded,
// newest first, as the outbox page shows it.
import type { EmailMessage } from "@portcullis/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type DemoMailServer, outboxLimit, sendThroughSmtp, startDemoMailServer } from "./mail.js";

let mail: DemoMailServer;

beforeAll(async () => {
  mail = await startDemoMailServer();
});

afterAll(async () => {
  await mail.close();
});

const message = (overrides: Partial<EmailMessage>): EmailMessage => ({
  kind: "password_reset",
  to: "someone@example.test",
  subject: "Reset your password",
  text: "Hello",
  html: "<p>Hello</p>",
  locale: "en",
  ...overrides,
});

it("decodes what nodemailer sends: non-ASCII headers and bodies, long lines, both parts, the envelope", async () => {
  const send = sendThroughSmtp(mail, "Portcullis demo <no-reply@example.test>");
  const link = `http://localhost:3000/reset-password#token=${"A_b-9".repeat(20)}`;
  const text = `Grüße, Zoë! Ein Link für dich:\n\n${link}\n\nEr gilt 30 Minuten. ${"Lange Zeile ".repeat(20)}`;
  const html = `<p>Grüße, Zoë!</p><p><a href="${link}">${link}</a></p><p>${"Lange Zeile ".repeat(20)}</p>`;
  await send(message({ to: "zoë@example.test", subject: "Passwort zurücksetzen – Grüße", text, html }));
  const received = await mail.waitFor((sent) => sent.subject.startsWith("Passwort"));
  expect(received).toMatchObject({
    from: "Portcullis demo <no-reply@example.test>",
    envelopeFrom: "no-reply@example.test",
    subject: "Passwort zurücksetzen – Grüße",
    text,
    html,
  });
  expect(received.to).toContain("example.test");
  expect(received.receivedAt).toBeGreaterThan(Date.now() - 10_000);
});

it("keeps the newest first, at most outboxLimit, and numbers them", async () => {
  const send = sendThroughSmtp(mail, "demo <no-reply@example.test>");
  await send(message({ subject: "first" }));
  await send(message({ subject: "second", from: "Someone <someone@example.test>" }));
  const [newest, older] = mail.messages();
  expect([newest?.subject, older?.subject]).toEqual(["second", "first"]);
  expect(newest?.from).toBe("Someone <someone@example.test>");
  expect((newest?.id ?? 0) - (older?.id ?? 0)).toBe(1);
  expect(mail.messages().length).toBeLessThanOrEqual(outboxLimit);
  await expect(mail.waitFor((sent) => sent.subject === "never", 50)).rejects.toThrow(/within 50 ms/);
});
