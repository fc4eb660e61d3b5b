import type { Auth } from "../auth.js";
import { keyedTag } from "../crypto/keyed-tag.js";
import { hitTiers } from "../throttle/throttle.js";
import { emailKeyOf } from "../users/email.js";
import type { NoticeReason, ResolvedEmailConfig } from "./email-config.js";

/**
 * Notices of a change made to the account that holds the address. Nobody else can cause them, and
 * they are what tells the owner of a thief, so they may use the budget twice over: a flood of
 * links and `address_in_use` notices others cause cannot use it up before them.
 */
const ownChangeNotices: ReadonlySet<NoticeReason | undefined> = new Set<NoticeReason>([
  "password_changed",
  "password_reset",
  "second_factor_disabled",
  "passkey_added",
  "email_changed",
]);

/**
 * Takes one message from the budget of the address it goes to (`email.recipientLimit`, EM-1):
 * counters shared by every instance that shares the storage, keyed by a keyed tag of the
 * address's `emailKeyOf` (never the address), one per tier. False when a tier is spent: the
 * message must not be sent.
 */
export async function takeRecipientMessage(
  auth: Auth,
  config: ResolvedEmailConfig,
  message: { notice?: NoticeReason | undefined; to: string },
): Promise<boolean> {
  const share = ownChangeNotices.has(message.notice) ? 2 : 1;
  const tiers = config.recipientLimit.map((tier) => ({ limit: tier.limit * share, windowMs: tier.windowMs }));
  const key = `recipient:${keyedTag(auth.secretBox, "portcullis email recipient v1", emailKeyOf(message.to))}`;
  return (await hitTiers(auth, key, tiers, auth.now())) === 0;
}
