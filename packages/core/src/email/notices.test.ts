import { describe, expect, it, vi } from "vitest";
import { removeTotp } from "../flows/admin-user-changes.js";
import { changePassword, setPassword } from "../flows/change-password.js";
import { createUser } from "../flows/create-user.js";
import { addUser, enrolTotp, goodPassword, nextCode, signIn } from "../flows/fixtures.test-support.js";
import { forgotPassword } from "../flows/forgot-password.js";
import { setUserDisabled, setUserRoles } from "../flows/manage-users.js";
import { makeAuthenticator, passkeys, registerPasskey } from "../flows/passkeys.test-support.js";
import { resetPassword } from "../flows/reset-password.js";
import { disableTotp } from "../flows/totp-enrolment.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { emailDeliveriesSettled } from "./deliver.js";
import { type EmailHarness, addUserWithEmail, makeEmailAuth, tokenOf } from "./email.test-support.js";
import type { EmailMessage } from "./email-config.js";
import { sendNotice } from "./notices.js";

const newPassword = "a brand new passphrase";

/** The notices sent so far, as [address, reason]. */
async function notices(harness: EmailHarness): Promise<[string, EmailMessage["notice"]][]> {
  await emailDeliveriesSettled(harness.auth);
  return harness.outbox.filter((message) => message.kind === "notice").map((message) => [message.to, message.notice]);
}

describe("security notices", () => {
  it("ASVS 6.3.7: a password change by the user sends password_changed to the verified address, without a link", async () => {
    const harness = makeEmailAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    await changePassword(harness.auth, { userId, currentPassword: goodPassword, newPassword });
    expect(await notices(harness)).toEqual([["alice@example.com", "password_changed"]]);
    const [notice] = harness.outbox;
    expect(notice).not.toHaveProperty("link");
    expect(notice?.text).toMatch(/the password was changed/);
    expect(harness.events).toContainEqual(expect.objectContaining({ type: "email.sent", kind: "notice", userId }));
  });

  it("a password set by the service or an administrator sends password_changed", async () => {
    const harness = makeEmailAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    await setPassword(harness.auth, { userId, newPassword });
    expect(await notices(harness)).toEqual([["alice@example.com", "password_changed"]]);
  });

  it("PR-4: a reset sends password_reset", async () => {
    const harness = makeEmailAuth();
    await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    await forgotPassword(harness.auth, { username: "alice" });
    await emailDeliveriesSettled(harness.auth);
    await resetPassword(harness.auth, { token: tokenOf(harness.outbox[0]), newPassword });
    expect(await notices(harness)).toEqual([["alice@example.com", "password_reset"]]);
  });

  it("turning TOTP off sends second_factor_disabled", async () => {
    const harness = makeEmailAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    const { secret } = await enrolTotp(harness.auth, userId);
    expect(await notices(harness)).toEqual([]);
    await disableTotp(harness.auth, { userId, password: goodPassword, code: nextCode(harness, secret) });
    expect(await notices(harness)).toEqual([["alice@example.com", "second_factor_disabled"]]);
  });

  it("an administrator removing TOTP sends second_factor_disabled", async () => {
    const harness = makeEmailAuth();
    const adminUserId = await addUser(harness.auth, "root", goodPassword, ["admin"]);
    const { sessionId } = await verifyAccessToken(harness.auth, { token: (await signIn(harness, "root")).accessToken });
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    await enrolTotp(harness.auth, userId);
    await removeTotp(harness.auth, { adminUserId, sessionId, userId });
    expect(await notices(harness)).toEqual([["alice@example.com", "second_factor_disabled"]]);
  });

  it("a passkey registered sends passkey_added", async () => {
    const harness = makeEmailAuth({ passkeys });
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    await registerPasskey(harness.auth, userId, makeAuthenticator());
    expect(await notices(harness)).toEqual([["alice@example.com", "passkey_added"]]);
  });

  it("EV-1: no notice goes to an unverified address, nor to an account without one", async () => {
    const harness = makeEmailAuth({ passkeys });
    const unverified = await addUserWithEmail(harness.auth, "unverified", "unverified@example.com", false);
    const addressless = (await createUser(harness.auth, { username: "addressless", password: goodPassword })).id;
    for (const userId of [unverified, addressless]) {
      await registerPasskey(harness.auth, userId, makeAuthenticator());
      await changePassword(harness.auth, { userId, currentPassword: goodPassword, newPassword });
      await setPassword(harness.auth, { userId, newPassword: "another long passphrase" });
    }
    const { secret } = await enrolTotp(harness.auth, unverified, "another long passphrase");
    await disableTotp(harness.auth, { userId: unverified, password: "another long passphrase", code: nextCode(harness, secret) });
    await emailDeliveriesSettled(harness.auth);
    expect(harness.outbox).toEqual([]);
    expect(harness.events.filter((event) => event.type.startsWith("email."))).toEqual([]);
  });

  it("an account gone by the time the notice is sent gets none, and nothing is reported", async () => {
    const onInternalError = vi.fn();
    const harness = makeEmailAuth({ onInternalError });
    sendNotice(harness.auth, "no-such-user", "password_changed");
    await emailDeliveriesSettled(harness.auth);
    expect(harness.outbox).toEqual([]);
    expect(onInternalError).not.toHaveBeenCalled();
    expect(harness.events.filter((event) => event.type.startsWith("email."))).toEqual([]);
  });

  it("a change of roles or of the disabled flag sends no notice: only totp_removed among user.updated does", async () => {
    const harness = makeEmailAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    await enrolTotp(harness.auth, userId);
    await setUserRoles(harness.auth, { userId, roles: ["editor"] });
    await setUserDisabled(harness.auth, { userId, disabled: true });
    await setUserDisabled(harness.auth, { userId, disabled: false });
    const updates = harness.events.filter((event) => event.type === "user.updated");
    expect(updates.map((event) => (event.type === "user.updated" ? event.changes : []))).toEqual([
      ["roles"],
      ["disabled"],
      ["disabled"],
    ]);
    expect(await notices(harness)).toEqual([]);
  });

  it("the notice goes to the address the account holds when it is sent", async () => {
    const harness = makeEmailAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    await harness.storage.users.setEmail(userId, { email: "moved@example.com", verified: true }, harness.clock.now);
    await setPassword(harness.auth, { userId, newPassword });
    expect(await notices(harness)).toEqual([["moved@example.com", "password_changed"]]);
  });
});
