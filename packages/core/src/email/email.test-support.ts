/**
 * Shared fixture of the email tests: an auth whose `email.send` puts every message in an outbox,
 * and helpers to read the token out of a link. Not a test file itself.
 */
import type { Auth } from "../auth.js";
import { createUser } from "../flows/create-user.js";
import { type AuthOverrides, type Harness, goodPassword, makeAuth } from "../flows/fixtures.test-support.js";
import type { EmailConfig, EmailMessage } from "./email-config.js";

export const resetUrl = "https://app.example.com/reset-password";
export const verifyUrl = "https://app.example.com/verify-email";

/** A harness whose messages land in `outbox`; `failing` makes the next sends throw. */
export interface EmailHarness extends Harness {
  outbox: EmailMessage[];
  /** While true, `send` throws instead of delivering. */
  failing: { now: boolean };
}

/** An auth with `email` configured: `send` collects into `outbox` (merged with `emailOverrides`). */
export function makeEmailAuth(overrides: AuthOverrides = {}, emailOverrides: Partial<EmailConfig> = {}): EmailHarness {
  const outbox: EmailMessage[] = [];
  const failing = { now: false };
  const send = async (message: EmailMessage) => {
    if (failing.now) throw new Error("smtp down");
    outbox.push(message);
  };
  const harness = makeAuth({ onInternalError: () => {}, ...overrides, email: { send, resetUrl, verifyUrl, ...emailOverrides } });
  return { ...harness, outbox, failing };
}

/** The token a message's link carries after `#token=`. */
export function tokenOf(message: EmailMessage | undefined): string {
  const link = message?.link;
  if (!link) throw new Error("the message holds no link");
  const token = new URL(link).hash.replace(/^#token=/, "");
  if (!token) throw new Error(`no token in ${link}`);
  return token;
}

/** The messages of a kind sent to an address. */
export function sentTo(harness: EmailHarness, to: string, kind?: EmailMessage["kind"]): EmailMessage[] {
  return harness.outbox.filter((message) => message.to === to && (kind === undefined || message.kind === kind));
}

/** Creates a local user with a password and an address, verified unless told otherwise. */
export async function addUserWithEmail(auth: Auth, username: string, email: string, emailVerified = true): Promise<string> {
  return (await createUser(auth, { username, password: goodPassword, email, emailVerified })).id;
}
