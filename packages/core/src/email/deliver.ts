import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { EmailKind, EmailMessage, NoticeReason, ResolvedEmailConfig } from "./email-config.js";
import { takeRecipientMessage } from "./recipient-limit.js";
import { writeMessage } from "./templates.js";

/** One message to send: to whom, of what kind, and for which account. */
export interface Delivery {
  kind: EmailKind;
  notice?: NoticeReason;
  to: string;
  /** Null for a `sign_up` message: no account holds the address yet. */
  userId: string | null;
  username: string;
  /**
   * Makes the reset or verification link (issuing its token): called only once the recipient's
   * budget allowed the message, so a withheld message voids no link sent before it.
   */
  link?: () => Promise<string>;
  /** The one-time code of a `sign_in` or `sign_up` message. */
  code?: string;
  /** The request's `Accept-Language`, which chooses a localized template. */
  acceptLanguage?: string | undefined;
  /** For an invitation: the organization's name (`username` is then the inviting member's). */
  organization?: string;
  /** Minutes the link works for, when not `email.tokenLifetime` (an invitation's). */
  expiresInMinutes?: number;
}

/** The email options of an auth whose `email` is configured; throws 40400 otherwise, as its routes answer. */
export function emailConfigOf(auth: Auth): ResolvedEmailConfig {
  const config = auth.config.email;
  if (config === null) throw new AuthError(ErrorCode.NotFound, "Email is not configured");
  return config;
}

class SendTimedOut extends Error {
  constructor(ms: number) {
    super(`email.send did not settle within ${ms} ms`);
    this.name = "SendTimedOut";
  }
}

/** `email.send` of one message, failing after `sendTimeoutMs`. */
async function sendWithin(config: ResolvedEmailConfig, message: EmailMessage): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SendTimedOut(config.sendTimeoutMs)), config.sendTimeoutMs);
  });
  try {
    await Promise.race([Promise.resolve().then(() => config.send(message)), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Writes and sends one message, once the budget of the address it goes to allows it
 * (`email.recipientLimit`, EM-1): past it, nothing is sent and no link made, `email.failed` is
 * emitted with `reason: "recipient_limit"`, and the call resolves as a sent one does, so no
 * answer tells it. A send that throws or outlasts `email.sendTimeout` is reported (the
 * `email.failed` event; `onInternalError` with the request id `"email"`, the error naming the
 * kind, never the address or link) and becomes {@link AuthError} 50300; a sent one emits `email.sent`.
 *
 * @throws {AuthError} 50300 when the send failed.
 */
export async function deliverEmail(auth: Auth, delivery: Delivery): Promise<void> {
  const config = emailConfigOf(auth);
  const { kind, notice, userId } = delivery;
  const describe = notice ? { kind, notice, userId } : { kind, userId };
  if (!(await takeRecipientMessage(auth, config, delivery))) {
    auth.emit({ type: "email.failed", ...describe, reason: "recipient_limit", at: auth.now() });
    return;
  }
  const link = await delivery.link?.();
  try {
    const { username, organization, expiresInMinutes, code } = delivery;
    const values = { kind, notice, username, link, code, organization, expiresInMinutes };
    const content = writeMessage(config, values, delivery.acceptLanguage);
    const message: EmailMessage = {
      kind,
      ...(notice ? { notice } : {}),
      to: delivery.to,
      ...(config.from ? { from: config.from } : {}),
      ...content,
      ...(link ? { link } : {}),
      ...(code ? { code } : {}),
    };
    await sendWithin(config, message);
  } catch (error) {
    const reason = error instanceof SendTimedOut ? "timed_out" : "failed";
    auth.emit({ type: "email.failed", ...describe, reason, at: auth.now() });
    const what = `a ${kind}${notice ? ` (${notice})` : ""} message was not sent`;
    report(
      auth,
      new Error(`${what}: ${reason === "timed_out" ? "email.send timed out" : "email.send failed"}`, { cause: error }),
    );
    throw new AuthError(ErrorCode.Unavailable, "The message could not be sent; try again later");
  }
  auth.emit({ type: "email.sent", ...describe, at: auth.now() });
}

/** `onInternalError` with the request id `"email"`; a reporter that throws has nobody left to tell. */
function report(auth: Auth, error: unknown): void {
  try {
    auth.onInternalError(error, "email");
  } catch {
    // The message is lost either way; the caller's answer must not change for it.
  }
}

const inFlight = new WeakMap<Auth, Set<Promise<void>>>();

/**
 * Runs `work` (building and sending a message) after the caller answers: failures are reported by
 * {@link deliverEmail} and go no further. Used where the answer must not depend on whether a
 * message was sent (PR-1), and for notices.
 */
export function deliverLater(auth: Auth, work: () => Promise<void>): void {
  let pending = inFlight.get(auth);
  if (!pending) {
    pending = new Set();
    inFlight.set(auth, pending);
  }
  // setImmediate: the work starts once the answer being written has been handed to the socket.
  const running: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
    .then(work)
    .catch((error: unknown) => {
      if (error instanceof AuthError && error.code === ErrorCode.Unavailable) return;
      report(auth, error);
    })
    .finally(() => pending.delete(running));
  pending.add(running);
}

/**
 * Resolves once every message started by `deliverLater` before the call, and any they started,
 * has been sent or reported: for tests, and for a service that waits for its mail on shutdown.
 */
export async function emailDeliveriesSettled(auth: Auth): Promise<void> {
  const pending = inFlight.get(auth);
  while (pending && pending.size > 0) await Promise.all([...pending]);
}
