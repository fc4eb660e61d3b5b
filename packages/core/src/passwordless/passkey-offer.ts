import type { Auth } from "../auth.js";
import type { AuthMethod, UserRecord } from "../storage/types.js";
import { signedInUser } from "../users/signed-in-user.js";
import { passkeyConfig } from "../webauthn/ceremony.js";

/** The sign-ins a passkey would replace, after which one is offered: a password (local or a directory's) and an email code or link. */
const offeredAfter: ReadonlySet<AuthMethod> = new Set<AuthMethod>(["pwd", "ldap", "email"]);

/** The counter that remembers an account's declined offer for `passkeys.offerDeclinedFor`. */
const declinedKey = (userId: string) => `passkey-offer-declined:${userId}`;

/**
 * Whether the answer of a sign-in proven by `amr` says to offer a passkey (PL-13): passkeys are
 * on with `offerAfterSignIn`, the sign-in was a password or an email code or link, the account has
 * no passkey, and it has not declined the offer within `passkeys.offerDeclinedFor` (PL-14).
 * Whether the platform has an authenticator only the browser knows: the client asks it.
 */
export async function passkeyOfferDue(auth: Auth, user: UserRecord, amr: readonly AuthMethod[]): Promise<boolean> {
  const config = auth.config.passkeys;
  if (!config?.offerAfterSignIn || !amr.some((method) => offeredAfter.has(method))) return false;
  const [passkeys, declined] = await Promise.all([
    auth.storage.passkeys.listByUser(user.id),
    auth.storage.counters.peek(declinedKey(user.id), auth.now()),
  ]);
  return passkeys.length === 0 && declined === 0;
}

/** The input of {@link declinePasskeyOffer}. */
export interface DeclinePasskeyOfferInput {
  /** The signed-in user who declines. */
  userId: string;
}

/**
 * Declines the passkey offer of a sign-in (`POST /auth/public-key/offer/decline`; PL-14): the
 * account's sign-ins say `offerPasskey: false` for `passkeys.offerDeclinedFor` (90 days by
 * default), kept in the counters store so every instance knows it. Declining again within that
 * time changes nothing; registering a passkey ends the offer anyway.
 *
 * @throws {AuthError} 40101 user gone or disabled, 40400 passkeys not configured.
 * @example
 * ```ts
 * await declinePasskeyOffer(auth, { userId });
 * ```
 */
export async function declinePasskeyOffer(auth: Auth, input: DeclinePasskeyOfferInput): Promise<void> {
  const config = passkeyConfig(auth);
  const user = await signedInUser(auth, input.userId);
  await auth.storage.counters.hit(declinedKey(user.id), 1, config.offerDeclinedForSeconds * 1000, auth.now());
}
