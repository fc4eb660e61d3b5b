/**
 * The test auth of the email tests over HTTP: `email.send` puts each message in an outbox, after
 * a delay when asked (a mail server's round trip), with budgets high enough that only a test meant
 * to be throttled is.
 */
import type { AuthConfig, EmailConfig, EmailMessage } from "@portcullis/core";
import { type TestAuth, generousThrottle, makeTestAuth } from "../fixtures/auth.js";

export const resetUrl = "https://app.example.com/reset-password";
export const verifyUrl = "https://app.example.com/verify-email";
export const signInUrl = "https://app.example.com/email-sign-in";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Budgets high enough that only a test meant to be throttled is: the forgot and email sign-in budgets included. */
export const emailThrottle = {
  ...generousThrottle,
  passwordResetRequests: [{ limit: 100_000, window: "15m" as const }],
  passwordResetRequestsIp: [{ limit: 100_000, window: "15m" as const }],
  emailSignInRequests: [{ limit: 100_000, window: "15m" as const }],
  emailSignInRequestsIp: [{ limit: 100_000, window: "15m" as const }],
};

/** What {@link makeEmailAuth} takes. */
export interface EmailAuthOptions {
  /** How long each send takes before the message lands in the outbox. */
  sendDelayMs?: number;
  /** Other options of the auth, beside `email` and `throttle`. */
  config?: Partial<AuthConfig>;
  recipientLimit?: EmailConfig["recipientLimit"];
}

/** A test auth whose `email.send` puts each message in `outbox`, after `sendDelayMs`; `email.signInUrl` set. */
export function makeEmailAuth(options: EmailAuthOptions = {}): TestAuth & { outbox: EmailMessage[] } {
  const outbox: EmailMessage[] = [];
  const send = async (message: EmailMessage) => {
    if (options.sendDelayMs) await sleep(options.sendDelayMs);
    outbox.push(message);
  };
  // Past email.recipientLimit's default, so that only the tests of the budget meet it (EM-1).
  const recipientLimit = options.recipientLimit ?? [{ limit: 100_000, window: "1h" as const }];
  const email = { send, resetUrl, verifyUrl, signInUrl, recipientLimit };
  return { ...makeTestAuth({ throttle: emailThrottle, email, ...options.config }), outbox };
}
