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

describe("PR-2: links and the account's address", () => {
  const newPassword = "a new long passphrase";

  /** Asks for a reset link for `username` and returns the token of the newest one sent to `to`. */
  async function resetLinkTo(harness: ReturnType<typeof makeEmailAuth>, username: string, to: string): Promise<string> {
    await forgotPassword(harness.auth, { username });
    await emailDeliveriesSettled(harness.auth);
    const links = sentTo(harness, to, "password_reset");
    return tokenOf(links[links.length - 1]);
  }

  /** Asks for `email` as the user's address and returns the token of the link sent to it. */
  async function verificationLinkTo(harness: ReturnType<typeof makeEmailAuth>, userId: string, email: string): Promise<string> {
    await changeEmail(harness.auth, { userId, email, password: goodPassword });
    await emailDeliveriesSettled(harness.auth);
    const links = sentTo(harness, email, "email_verification");
    return tokenOf(links[links.length - 1]);
  }

  const refusal = async (promise: Promise<unknown>) => {
    const error = await authError(promise);
    return { code: error.code, message: error.message };
  };

  it("PR-2: a reset link mailed to the old address is void once the user changed to a new one and verified it", async () => {
    const harness = makeEmailAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "old@example.com");
    const oldLink = await resetLinkTo(harness, "alice", "old@example.com");
    const verification = await verificationLinkTo(harness, userId, "new@example.com");
    expect(await verifyEmail(harness.auth, { token: verification })).toEqual({ verified: true });
    const hashBefore = (await harness.storage.users.findById(userId))?.passwordHash;
    expect(await refusal(resetPassword(harness.auth, { token: oldLink, newPassword }))).toEqual(invalidLink);
    expect((await harness.storage.users.findById(userId))?.passwordHash).toBe(hashBefore);
    // A link to the new address works.
    const newLink = await resetLinkTo(harness, "alice", "new@example.com");
    expect(await resetPassword(harness.auth, { token: newLink, newPassword })).toEqual({ reset: true });
  });

  it("PR-2: a reset link is refused once the address it was sent to is no longer the account's verified one, however it changed", async () => {
    const harness = makeEmailAuth();
    const { storage } = harness;
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    const moved = await resetLinkTo(harness, "alice", "alice@example.com");
    await storage.users.setEmail(userId, { email: "elsewhere@example.com", verified: true }, harness.auth.now());
    expect(await refusal(resetPassword(harness.auth, { token: moved, newPassword }))).toEqual(invalidLink);

    await storage.users.setEmail(userId, { email: "alice@example.com", verified: true }, harness.auth.now());
    const unverified = await resetLinkTo(harness, "alice", "alice@example.com");
    await storage.users.setEmail(userId, { email: "alice@example.com", verified: false }, harness.auth.now());
    expect(await refusal(resetPassword(harness.auth, { token: unverified, newPassword }))).toEqual(invalidLink);

    await storage.users.setEmail(userId, { email: "alice@example.com", verified: true }, harness.auth.now());
    const removed = await resetLinkTo(harness, "alice", "alice@example.com");
    await storage.users.setEmail(userId, null, harness.auth.now());
    expect(await refusal(resetPassword(harness.auth, { token: removed, newPassword }))).toEqual(invalidLink);
  });

  it("PR-2: addresses compare as emailKeyOf does: the same address in another case or NFKC form keeps the link", async () => {
    const harness = makeEmailAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    const token = await resetLinkTo(harness, "alice", "alice@example.com");
    await harness.storage.users.setEmail(userId, { email: "\uFF21LICE@Example.COM", verified: true }, harness.auth.now());
    expect(await resetPassword(harness.auth, { token, newPassword })).toEqual({ reset: true });
  });

  it("PR-2, EV-1: a verified address change voids the user's outstanding verification links", async () => {
    const harness = makeEmailAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    const pending = await verificationLinkTo(harness, userId, "pending@example.com");
    // The service's own code (or an administrator's tool) sets another verified address meanwhile.
    await harness.storage.users.setEmail(userId, { email: "chosen@example.com", verified: true }, harness.auth.now());
    expect(await refusal(verifyEmail(harness.auth, { token: pending }))).toEqual(invalidLink);
    const user = await harness.storage.users.findById(userId);
    expect({ email: user?.email, verified: user?.emailVerified }).toEqual({ email: "chosen@example.com", verified: true });
  });

  it("PR-2, EV-1: a verification link keeps working while the account's address is what it was when the link was sent", async () => {
    const harness = makeEmailAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com", false);
    const link = await verificationLinkTo(harness, userId, "alice@example.com");
    await harness.storage.users.setEmail(userId, { email: "Alice@Example.com", verified: false }, harness.auth.now());
    expect(await verifyEmail(harness.auth, { token: link })).toEqual({ verified: true });
  });
});
