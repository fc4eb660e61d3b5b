import type { Auth } from "../auth.js";
import { deliverEmail, deliverLater } from "./deliver.js";
import type { NoticeReason } from "./email-config.js";

/**
 * Sends a notice of a security change to the user's verified address, after the change's answer;
 * nothing when the account has none (an unverified address proves nothing: EV-1).
 */
export function sendNotice(auth: Auth, userId: string, notice: NoticeReason, acceptLanguage?: string): void {
  deliverLater(auth, async () => {
    const user = await auth.storage.users.findById(userId);
    if (!user?.email || !user.emailVerified) return;
    await deliverEmail(auth, { kind: "notice", notice, to: user.email, userId, username: user.username, acceptLanguage });
  });
}

/**
 * Turns the events of security changes into notices (ASVS 6.3.7): a password changed (by the user
 * or an administrator) or reset, the second factor turned off (by the user or an administrator),
 * a passkey added. An address change notifies the old address itself (`changeEmail`).
 */
export function sendSecurityNotices(auth: Auth): void {
  auth.events.on("password.changed", (event) => sendNotice(auth, event.userId, "password_changed"));
  auth.events.on("password.reset", (event) => sendNotice(auth, event.userId, "password_reset"));
  auth.events.on("totp.disabled", (event) => sendNotice(auth, event.userId, "second_factor_disabled"));
  auth.events.on("user.updated", (event) => {
    if (event.changes.includes("totp_removed")) sendNotice(auth, event.userId, "second_factor_disabled");
  });
  auth.events.on("passkey.registered", (event) => sendNotice(auth, event.userId, "passkey_added"));
}
