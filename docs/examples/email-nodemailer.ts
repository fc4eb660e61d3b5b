import type { EmailMessage } from "@portcullis/core";
import nodemailer from "nodemailer";

/** Where {@link nodemailerSend} delivers: an SMTP server, and the sender when `email.from` is not set. */
export interface SmtpOptions {
  host: string;
  port: number;
  /** TLS from the first byte (port 465). Default false: STARTTLS when the server offers it. */
  secure?: boolean;
  /** SMTP AUTH, when the server asks for it. */
  auth?: { user: string; pass: string };
  /** The sender of messages whose `from` is not set. */
  defaultFrom: string;
}

/**
 * An `email.send` for Portcullis that hands each message to an SMTP server through nodemailer.
 * Portcullis writes the message (subject, text and HTML) and waits for the returned promise, at
 * most `email.sendTimeout`; a rejection is reported and answered as the route says.
 *
 * @example
 * ```ts
 * const auth = createAuth({
 *   ...config,
 *   email: {
 *     send: nodemailerSend({ host: "smtp.example.com", port: 587, auth: { user, pass }, defaultFrom: "Example <no-reply@example.com>" }),
 *     resetUrl: "https://app.example.com/reset-password",
 *     verifyUrl: "https://app.example.com/verify-email",
 *   },
 * });
 * ```
 */
export function nodemailerSend(options: SmtpOptions): (message: EmailMessage) => Promise<void> {
  const transport = nodemailer.createTransport({
    host: options.host,
    port: options.port,
    secure: options.secure ?? false,
    ...(options.auth ? { auth: options.auth } : {}),
  });
  return async (message) => {
    await transport.sendMail({
      from: message.from ?? options.defaultFrom,
      to: message.to,
      subject: message.subject,
      text: message.text,
      html: message.html,
    });
  };
}
