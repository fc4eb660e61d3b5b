import { describe, expect, it, vi } from "vitest";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { authError, makeAuth } from "../flows/fixtures.test-support.js";
import { type Delivery, deliverEmail, deliverLater, emailConfigOf, emailDeliveriesSettled } from "./deliver.js";
import { resetUrl, verifyUrl } from "./email.test-support.js";
import type { EmailConfig, EmailMessage } from "./email-config.js";

const address = "alice@example.com";
const link = `${resetUrl}#token=secret-token-value`;
const delivery: Delivery = { kind: "password_reset", to: address, userId: "user-1", username: "alice", link: async () => link };

/** An auth whose `email.send` is `send`, with `onInternalError` recorded. */
function deliveryAuth(send: EmailConfig["send"], options: Partial<EmailConfig> = {}) {
  const onInternalError = vi.fn();
  const harness = makeAuth({ onInternalError, email: { send, resetUrl, verifyUrl, ...options } });
  return { ...harness, onInternalError };
}

describe("deliverEmail", () => {
  it("hands send the written message, from passed through, and emits email.sent", async () => {
    const sent: EmailMessage[] = [];
    const { auth, events, clock } = deliveryAuth(
      (message) => {
        sent.push(message);
      },
      { from: "Example <no-reply@example.com>", appName: "Example" },
    );
    await deliverEmail(auth, { ...delivery, acceptLanguage: "de" });
    expect(sent).toEqual([
      {
        kind: "password_reset",
        to: address,
        from: "Example <no-reply@example.com>",
        subject: "Reset your Example password",
        text: expect.stringContaining(link),
        html: expect.stringContaining(link),
        link,
        locale: "en",
      },
    ]);
    expect(events).toEqual([{ type: "email.sent", kind: "password_reset", userId: "user-1", at: clock.now }]);
  });

  it("a notice carries its reason and no link; without from, the message has none", async () => {
    const sent: EmailMessage[] = [];
    const { auth, events } = deliveryAuth(async (message) => {
      sent.push(message);
    });
    await deliverEmail(auth, { kind: "notice", notice: "passkey_added", to: address, userId: "user-1", username: "alice" });
    expect(sent[0]).toMatchObject({ kind: "notice", notice: "passkey_added", to: address });
    expect(sent[0]).not.toHaveProperty("from");
    expect(sent[0]).not.toHaveProperty("link");
    expect(events).toEqual([expect.objectContaining({ type: "email.sent", kind: "notice", notice: "passkey_added" })]);
  });

  it("a send that throws: email.failed (failed), onInternalError with request id email and neither address nor link, then 50300", async () => {
    const smtpError = new Error(`550 mailbox ${address} unavailable`);
    const { auth, events, onInternalError, clock } = deliveryAuth(async () => {
      throw smtpError;
    });
    const error = await authError(deliverEmail(auth, delivery));
    expect([error.code, error.message]).toEqual([ErrorCode.Unavailable, "The message could not be sent; try again later"]);
    expect(events).toEqual([{ type: "email.failed", kind: "password_reset", userId: "user-1", reason: "failed", at: clock.now }]);
    expect(onInternalError).toHaveBeenCalledTimes(1);
    const [reported, requestId] = onInternalError.mock.calls[0] as [Error, string];
    expect(requestId).toBe("email");
    expect(reported.message).toBe("a password_reset message was not sent: email.send failed");
    expect(reported.message).not.toContain(address);
    expect(reported.message).not.toContain("secret-token-value");
    expect(reported.cause).toBe(smtpError);
    expect(JSON.stringify(events)).not.toContain(address);
    expect(JSON.stringify(events)).not.toContain("secret-token-value");
  });

  it("a send that throws at once (not a rejected promise) is reported the same way", async () => {
    const { auth, events, onInternalError } = deliveryAuth(() => {
      throw new Error("synchronous failure");
    });
    expect((await authError(deliverEmail(auth, delivery))).code).toBe(ErrorCode.Unavailable);
    expect(events).toEqual([expect.objectContaining({ type: "email.failed", reason: "failed" })]);
    expect(onInternalError).toHaveBeenCalledWith(expect.any(Error), "email");
  });

  it("a send that never settles times out after sendTimeout: email.failed (timed_out) and 50300", async () => {
    const { auth, events, onInternalError } = deliveryAuth(() => new Promise<void>(() => {}), { sendTimeout: "1s" });
    const started = performance.now();
    const error = await authError(deliverEmail(auth, { ...delivery, kind: "notice", notice: "password_reset", link: undefined }));
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(error.code).toBe(ErrorCode.Unavailable);
    expect(events).toEqual([
      expect.objectContaining({
        type: "email.failed",
        kind: "notice",
        notice: "password_reset",
        userId: "user-1",
        reason: "timed_out",
      }),
    ]);
    const [reported, requestId] = onInternalError.mock.calls[0] as [Error, string];
    expect(requestId).toBe("email");
    expect(reported.message).toBe("a notice (password_reset) message was not sent: email.send timed out");
    expect((reported.cause as Error).message).toBe("email.send did not settle within 1000 ms");
    expect((reported.cause as Error).name).toBe("SendTimedOut");
  });

  it("a send that settles, or fails, leaves no timer behind", async () => {
    const { auth } = deliveryAuth(async () => {});
    const failing = deliveryAuth(async () => {
      throw new Error("down");
    });
    vi.useFakeTimers();
    try {
      await deliverEmail(auth, delivery);
      expect(vi.getTimerCount()).toBe(0);
      expect((await authError(deliverEmail(failing.auth, delivery))).code).toBe(ErrorCode.Unavailable);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a template that throws is reported as failed, never sent", async () => {
    const send = vi.fn();
    const { auth, events, onInternalError } = deliveryAuth(send, {
      templates: { password_reset: () => ({ subject: "a\nb", text: "", html: "" }) },
    });
    expect((await authError(deliverEmail(auth, delivery))).code).toBe(ErrorCode.Unavailable);
    expect(send).not.toHaveBeenCalled();
    expect(events).toEqual([expect.objectContaining({ type: "email.failed", reason: "failed" })]);
    expect(onInternalError).toHaveBeenCalledOnce();
  });

  it("without email configured: 40400, as its routes", async () => {
    const { auth } = makeAuth();
    expect(() => emailConfigOf(auth)).toThrow(AuthError);
    const error = await authError(deliverEmail(auth, delivery));
    expect([error.code, error.message]).toEqual([ErrorCode.NotFound, "Email is not configured"]);
  });
});

describe("deliverLater", () => {
  it("runs after the caller goes on; emailDeliveriesSettled waits for it and for what it starts", async () => {
    const sent: EmailMessage[] = [];
    const { auth } = deliveryAuth(async (message) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      sent.push(message);
    });
    deliverLater(auth, async () => {
      await deliverEmail(auth, delivery);
      deliverLater(auth, () => deliverEmail(auth, { ...delivery, to: "second@example.com" }));
    });
    expect(sent).toEqual([]);
    await emailDeliveriesSettled(auth);
    expect(sent.map((message) => message.to)).toEqual([address, "second@example.com"]);
  });

  it("a failed send stops there (reported once by deliverEmail); any other error goes to onInternalError", async () => {
    const { auth, onInternalError } = deliveryAuth(async () => {
      throw new Error("down");
    });
    deliverLater(auth, () => deliverEmail(auth, delivery));
    await emailDeliveriesSettled(auth);
    expect(onInternalError).toHaveBeenCalledTimes(1);
    const bug = new Error("storage unreachable");
    deliverLater(auth, async () => {
      throw bug;
    });
    await emailDeliveriesSettled(auth);
    expect(onInternalError).toHaveBeenCalledTimes(2);
    expect(onInternalError).toHaveBeenLastCalledWith(bug, "email");
  });

  it("only an AuthError 50300 counts as reported already: another AuthError, or another error with its code, is reported", async () => {
    const { auth, onInternalError } = deliveryAuth(async () => {});
    const thrown = [
      new AuthError(ErrorCode.NotFound, "Email is not configured"),
      Object.assign(new Error("looks like 50300"), { code: ErrorCode.Unavailable }),
      new AuthError(ErrorCode.Unavailable, "already reported"),
    ];
    for (const error of thrown) {
      deliverLater(auth, async () => {
        throw error;
      });
    }
    await emailDeliveriesSettled(auth);
    expect(onInternalError.mock.calls).toEqual([
      [thrown[0], "email"],
      [thrown[1], "email"],
    ]);
  });
});

describe("a reporter that throws", () => {
  it("changes no answer: deliverEmail still throws 50300, and deliverLater's failure goes no further", async () => {
    const throwingReporter = vi.fn(() => {
      throw new Error("the reporter is broken");
    });
    const { auth } = makeAuth({
      onInternalError: throwingReporter,
      email: {
        send: async () => {
          throw new Error("smtp down");
        },
        resetUrl,
        verifyUrl,
      },
    });
    expect((await authError(deliverEmail(auth, delivery))).code).toBe(ErrorCode.Unavailable);
    deliverLater(auth, async () => {
      throw new Error("not a delivery failure");
    });
    await emailDeliveriesSettled(auth);
    expect(throwingReporter).toHaveBeenCalledTimes(2);
  });
});
