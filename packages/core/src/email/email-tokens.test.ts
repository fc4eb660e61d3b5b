import { describe, expect, it } from "vitest";
import { changeEmail, verifyEmail } from "../flows/change-email.js";
import { changePassword } from "../flows/change-password.js";
import { authError, goodPassword } from "../flows/fixtures.test-support.js";
import { forgotPassword } from "../flows/forgot-password.js";
import { resetPassword } from "../flows/reset-password.js";
import { memoryStorage } from "../storage/memory.js";
import type { Storage } from "../storage/types.js";
import { emailDeliveriesSettled } from "./deliver.js";
import { addUserWithEmail, makeEmailAuth, sentTo, tokenOf } from "./email.test-support.js";

const invalidLink = { code: 40101, message: "The link is invalid, expired or already used" };

describe("email link tokens", () => {
  it("PR-2: a token whose newest-token record is gone is refused, with the one message every refusal has", async () => {
    const storage = memoryStorage();
    const hidingNewest: Storage = {
      ...storage,
      challenges: {
        ...storage.challenges,
        find: (id, kind, now) => (kind.endsWith("_newest") ? Promise.resolve(null) : storage.challenges.find(id, kind, now)),
      },
    };
    const harness = makeEmailAuth({ storage: hidingNewest });
    await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    await forgotPassword(harness.auth, { username: "alice" });
    await emailDeliveriesSettled(harness.auth);
    const error = await authError(
      resetPassword(harness.auth, {
        token: tokenOf(sentTo(harness, "alice@example.com")[0]),
        newPassword: "a new long passphrase",
      }),
    );
    expect({ code: error.code, message: error.message }).toEqual(invalidLink);
  });

  it("EV-1: a password change voids reset links, not a verification link", async () => {
    const harness = makeEmailAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    await changeEmail(harness.auth, { userId, email: "new@example.com", password: goodPassword });
    await forgotPassword(harness.auth, { username: "alice" });
    await emailDeliveriesSettled(harness.auth);
    const newPassword = "a new long passphrase";
    await changePassword(harness.auth, { userId, currentPassword: goodPassword, newPassword });
    const reset = await authError(
      resetPassword(harness.auth, {
        token: tokenOf(sentTo(harness, "alice@example.com", "password_reset")[0]),
        newPassword: "another long passphrase",
      }),
    );
    expect({ code: reset.code, message: reset.message }).toEqual(invalidLink);
    expect(
      await verifyEmail(harness.auth, { token: tokenOf(sentTo(harness, "new@example.com", "email_verification")[0]) }),
    ).toEqual({ verified: true });
  });
});
