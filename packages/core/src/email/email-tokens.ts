import type { Auth } from "../auth.js";
import { opaqueToken } from "../crypto/ids.js";
import { keyedTag } from "../crypto/keyed-tag.js";
import { constantTimeEqual, sha256 } from "../crypto/random.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { ChallengeRecord, UserRecord } from "../storage/types.js";
import { emailKeyOf } from "../users/email.js";
import { passwordStamp } from "../users/password-stamp.js";
import { emailConfigOf } from "./deliver.js";

/** What an email link's token is for. */
export type EmailTokenKind = "password_reset" | "email_verification";

/** What a token keeps: the account's state when it was issued, and the address it verifies. */
interface EmailTokenData {
  tokenVersion: number;
  /** The {@link passwordStamp} at issue: a password change voids a reset link (PR-2). */
  passwordStamp: string;
  /** The {@link addressStamp} at issue: a change of the account's address voids the link (PR-2). */
  addressStamp: string;
  /** For `email_verification`: the address the link proves. */
  email?: string;
}

/**
 * A stamp of the account's address as links compare it: the keyed tag of its `emailKeyOf` and
 * whether it is verified (of the empty string with no address), so the address is never stored
 * with the token in plain text. A reset link is sent to the verified address, so its stamp records
 * the address it was sent to; a verification link's, the address it would replace. Either is
 * refused once the account's address is no longer that one (PR-2): a verified address change
 * voids every link the user had.
 */
function addressStamp(auth: Auth, user: UserRecord): string {
  const address = user.email === null ? "" : `${user.emailVerified ? "verified" : "unverified"}:${emailKeyOf(user.email)}`;
  return keyedTag(auth.secretBox, "portcullis email link address v1", address);
}

/**
 * The id of the challenge that names a user's newest token of a kind: keyed, so no presented
 * token hashes to it, and a kind of its own, so it is never found as a token.
 */
function newestTokenId(auth: Auth, kind: EmailTokenKind, userId: string): string {
  return keyedTag(auth.secretBox, "portcullis newest email token v1", `${kind}:${userId}`);
}

/**
 * Issues the token of a reset or verification link: 256 random bits, stored only as its SHA-256,
 * living `email.tokenLifetime` (PR-2). It becomes the user's newest of its kind: every older one is
 * void from now on.
 */
export async function issueEmailToken(auth: Auth, kind: EmailTokenKind, user: UserRecord, email?: string): Promise<string> {
  const { tokenLifetimeMs } = emailConfigOf(auth);
  const { value, hash } = opaqueToken(auth);
  const now = auth.now();
  const data: EmailTokenData = {
    tokenVersion: user.tokenVersion,
    passwordStamp: passwordStamp(auth, user),
    addressStamp: addressStamp(auth, user),
    ...(email ? { email } : {}),
  };
  const base = { userId: user.id, attempts: 0, createdAt: now, expiresAt: now + tokenLifetimeMs };
  await auth.storage.challenges.put({ ...base, id: hash, kind, data: { ...data } });
  await auth.storage.challenges.put({
    ...base,
    id: newestTokenId(auth, kind, user.id),
    kind: newestKind[kind],
    data: { newest: hash },
  });
  return value;
}

const newestKind = { password_reset: "password_reset_newest", email_verification: "email_verification_newest" } as const;

/** A link's token that checked out, and its account. */
export interface OpenEmailToken {
  hash: string;
  user: UserRecord;
  /** For `email_verification`: the address it proves. */
  email: string | undefined;
}

const invalidLink = () => new AuthError(ErrorCode.InvalidToken, "The link is invalid, expired or already used");

/**
 * Checks a link's token without spending it: live, the user's newest of its kind, and issued to
 * the account as it still is (same token version and address; for a reset, the same password).
 *
 * @throws {AuthError} 40101 otherwise.
 */
export async function openEmailToken(auth: Auth, kind: EmailTokenKind, token: string): Promise<OpenEmailToken> {
  const hash = sha256(token);
  const now = auth.now();
  const record = await auth.storage.challenges.find(hash, kind, now);
  if (!record?.userId) throw invalidLink();
  const data = record.data as Partial<EmailTokenData>;
  const newest = await auth.storage.challenges.find(newestTokenId(auth, kind, record.userId), newestKind[kind], now);
  if (!constantTimeEqual(String(newest?.data.newest), hash)) throw invalidLink();
  const user = await auth.storage.users.findById(record.userId);
  if (!user || user.disabled || user.tokenVersion !== data.tokenVersion) throw invalidLink();
  if (!constantTimeEqual(String(data.addressStamp), addressStamp(auth, user))) throw invalidLink();
  if (kind === "password_reset" && !constantTimeEqual(String(data.passwordStamp), passwordStamp(auth, user))) throw invalidLink();
  return { hash, user, email: data.email };
}

/**
 * Spends a token {@link openEmailToken} checked, with one atomic consume: of concurrent uses, one
 * goes on (PR-2).
 *
 * @throws {AuthError} 40101 when another use spent it first, or it expired meanwhile.
 */
export async function spendEmailToken(auth: Auth, kind: EmailTokenKind, opened: OpenEmailToken): Promise<ChallengeRecord> {
  const spent = await auth.storage.challenges.consume(opened.hash, kind, auth.now());
  if (!spent) throw invalidLink();
  return spent;
}

/** The link a message carries: the configured page, the token in its fragment (PR-5). */
export function linkWithToken(base: string, token: string): string {
  return `${base}#token=${token}`;
}
