import type { Auth } from "../auth.js";
import { deliverEmail, deliverLater, emailConfigOf } from "../email/deliver.js";
import { issueEmailToken, linkWithToken, openEmailToken, spendEmailToken } from "../email/email-tokens.js";
import { sendNotice } from "../email/notices.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { UserRecord } from "../storage/types.js";
import { takeAttempt } from "../throttle/throttle.js";
import { emailKeyOf, normalizeEmail } from "../users/email.js";
import { endOtherSessions } from "../users/sessions.js";
import { requiredString } from "./input.js";
import { type ReauthenticationProof, requireRecentAuthentication } from "./reauthenticate.js";

/** The input of {@link changeEmail} (`POST /auth/email`): the new address and the proof it is the user. */
export interface ChangeEmailInput extends ReauthenticationProof {
  userId: string;
  email: string;
  /** The request's `Accept-Language`, which chooses a localized template. */
  acceptLanguage?: string | undefined;
}

/** What {@link changeEmail} answers: a link is on its way to the new address. */
export interface EmailChangePending {
  pending: true;
}

/**
 * Asks to set the signed-in user's address (`POST /auth/email`; EV-1): after recent
 * re-authentication (`requireRecentAuthentication`) and within `throttle.emailChanges`, a link to
 * `email.verifyUrl` goes to the new address; the account keeps its current address, verified or
 * not, until the link is used (`verifyEmail`). The same address again sends a new link (how a
 * user verifies the address they signed up with). A notice goes to the current verified address
 * when the new one differs, and every other session of the user ends, the one of `sessionId` going on
 * (SE-2): the request is the change made from a session; the link may be opened anywhere. An address another account holds verified gets a notice that it stays
 * with that account instead of a link, with the same answer after the same work: whether an
 * address has an account is not told here.
 *
 * @throws {AuthError} 40001 no `email` or no proof, 40002 not an address, 40100/40103 a wrong proof,
 *   40400 unknown user or email not configured, 42900 throttled, 50300 the link could not be sent.
 * @example
 * ```ts
 * await changeEmail(auth, { userId, sessionId, email: "new@example.com", password });
 * ```
 */
export async function changeEmail(auth: Auth, input: ChangeEmailInput): Promise<EmailChangePending> {
  emailConfigOf(auth);
  const email = normalizeEmail(requiredString(input.email, "email"));
  const user = await auth.storage.users.findById(requiredString(input.userId, "userId"));
  if (!user) throw new AuthError(ErrorCode.NotFound, "No such user");
  await requireRecentAuthentication(auth, user, input);
  await takeAttempt(auth, "emailChanges", user.id);
  const key = emailKeyOf(email);
  await deliverAddressMessage(auth, user, email, input.acceptLanguage);
  auth.emit({ type: "email.change_requested", userId: user.id, at: auth.now() });
  const changes = user.email === null || emailKeyOf(user.email) !== key;
  if (changes) await endOtherSessions(auth, { userId: user.id, keepSessionId: input.sessionId, reason: "email_changed" });
  if (changes && user.emailVerified) sendNotice(auth, user.id, "email_changed", input.acceptLanguage);
  return { pending: true };
}

/**
 * Sends `email` the message a user's request for it calls for: a verification link (the user's
 * newest, voiding older ones), or, when another account holds the address verified, a notice to
 * that address that it stays where it is (`address_in_use`). Either way one message is sent, so
 * neither the answer nor its time tells the requester whether the address has an account.
 */
async function deliverAddressMessage(
  auth: Auth,
  user: UserRecord,
  email: string,
  acceptLanguage: string | undefined,
): Promise<void> {
  const holder = await auth.storage.users.findByVerifiedEmail(emailKeyOf(email));
  if (holder !== null && holder.id !== user.id) {
    const notice = { kind: "notice", notice: "address_in_use", to: email } as const;
    await deliverEmail(auth, { ...notice, userId: holder.id, username: holder.username, acceptLanguage });
    return;
  }
  await deliverEmail(auth, {
    kind: "email_verification",
    to: email,
    userId: user.id,
    username: user.username,
    link: async () =>
      linkWithToken(emailConfigOf(auth).verifyUrl, await issueEmailToken(auth, "email_verification", user, email)),
    acceptLanguage,
  });
}

/**
 * Sends a verification link for the address a user just gave (sign-up), after the caller
 * answers; a failed send is reported, and `POST /auth/email` with the same address sends another.
 */
export function sendVerificationLink(auth: Auth, user: UserRecord, email: string, acceptLanguage?: string): void {
  deliverLater(auth, () => deliverAddressMessage(auth, user, email, acceptLanguage));
}

/** The input of {@link verifyEmail} (`POST /auth/email/verify`). */
export interface VerifyEmailInput {
  /** The token of the verification link: what follows `#token=`. */
  token: string;
}

/** What {@link verifyEmail} answers. */
export interface EmailVerified {
  verified: true;
}

/**
 * Verifies an address with its link's token (EV-1): live, the user's newest verification link,
 * issued at the account's current token version, spent by one atomic consume. The account's
 * address becomes the one the link was sent to, verified; one store write refuses it when another
 * account holds that address verified meanwhile.
 *
 * @throws {AuthError} 40001 no token, 40101 a link invalid, expired, used or voided, 40400 email not
 *   configured, 40900 another account holds the address verified.
 */
export async function verifyEmail(auth: Auth, input: VerifyEmailInput): Promise<EmailVerified> {
  emailConfigOf(auth);
  const opened = await openEmailToken(auth, "email_verification", requiredString(input.token, "token"));
  await spendEmailToken(auth, "email_verification", opened);
  const change = await auth.storage.users.setEmail(opened.user.id, { email: opened.email as string, verified: true }, auth.now());
  if (change.outcome === "taken") throw new AuthError(ErrorCode.Conflict, "Another account holds this address");
  if (change.outcome === "unknown") throw new AuthError(ErrorCode.InvalidToken, "The link is invalid, expired or already used");
  auth.emit({ type: "email.verified", userId: opened.user.id, at: auth.now() });
  return { verified: true };
}
