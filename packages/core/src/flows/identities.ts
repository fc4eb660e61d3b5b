import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { beginOAuthSignIn, providerNamed } from "../oauth/authorize.js";
import { directoryProvider } from "../oauth/provider-config.js";
import type { IdentityRecord } from "../storage/types.js";
import { endOtherSessions } from "../users/sessions.js";
import { signInWaysOf } from "../users/sign-in-ways.js";
import { signedInUser } from "../users/signed-in-user.js";
import { requiredString } from "./input.js";
import { type ReauthenticationProof, requireRecentAuthentication } from "./reauthenticate.js";

/** A provider account linked to a user, as the user sees it. Times are epoch milliseconds. */
export interface LinkedIdentity {
  provider: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
  createdAt: number;
  lastUsedAt: number | null;
}

function toLinkedIdentity(record: IdentityRecord): LinkedIdentity {
  const { provider, subject, email, emailVerified, createdAt, lastUsedAt } = record;
  return { provider, subject, email, emailVerified, createdAt, lastUsedAt };
}

/**
 * The provider accounts linked to a signed-in user, oldest first. A directory account's link to its
 * entry is not one of them: it is what the account is.
 *
 * @throws {AuthError} 40101 user gone or disabled.
 */
export async function listIdentities(auth: Auth, input: { userId: string }): Promise<LinkedIdentity[]> {
  const user = await signedInUser(auth, input.userId);
  const identities = await auth.storage.identities.listByUser(user.id);
  return identities
    .filter((identity) => identity.provider !== directoryProvider)
    .sort((a, b) => a.createdAt - b.createdAt)
    .map(toLinkedIdentity);
}

/** The input of {@link linkIdentity}: the user, the provider, the return path, and the proof of a recent sign-in. */
export interface LinkIdentityInput extends ReauthenticationProof {
  userId: string;
  provider: string;
  /** Where the app sends the browser afterwards: a path of this app only (OA-8). */
  redirect?: string;
}

/**
 * Begins linking a provider to a signed-in user who has just proven it is them (the password, a
 * TOTP code, or a recent sign-in, as for registering a passkey): a stolen access token alone
 * cannot add the thief's provider account. The browser then goes through the provider as for a
 * sign-in; the callback links the provider account (40900 if it is linked to someone else), ends
 * every session the user had, the one the link began from included, and signs the user in
 * afresh: the session it makes is the one that goes on (SE-2).
 *
 * @throws {AuthError} 40001 no proof, 40100 wrong password, 40103 wrong code, 40101 user gone or disabled, 40400 unknown provider, 50300 provider unreachable.
 */
export async function linkIdentity(auth: Auth, input: LinkIdentityInput): Promise<{ authUrl: string; browserBinding: string }> {
  const user = await signedInUser(auth, input.userId);
  providerNamed(auth, input.provider);
  await requireRecentAuthentication(auth, user, input);
  return beginOAuthSignIn(auth, { provider: input.provider, redirect: input.redirect, userId: user.id });
}

/** The input of {@link unlinkIdentity}. */
export interface UnlinkIdentityInput {
  userId: string;
  provider: string;
  subject: string;
  /** The session the change is made from: it goes on, the user's others end (SE-2). */
  sessionId?: string;
}

/**
 * Removes a linked provider account from a signed-in user and ends every other session of the
 * user, `sessionId` going on (SE-2; every session when none is given).
 * The account's last way to sign in (no password, directory, passkey, other identity or email sign-in) is kept
 * (40900); a directory account's link to its entry is never removed (40400).
 *
 * @throws {AuthError} 40101 user gone or disabled, 40400 no such link, 40900 the last way to sign in.
 */
export async function unlinkIdentity(auth: Auth, input: UnlinkIdentityInput): Promise<void> {
  const user = await signedInUser(auth, input.userId);
  const provider = requiredString(input.provider, "provider");
  const subject = requiredString(input.subject, "subject");
  const linked = provider === directoryProvider ? null : await auth.storage.identities.find(provider, subject);
  if (linked?.userId !== user.id) throw new AuthError(ErrorCode.NotFound, "No such linked account");
  const ways = await signInWaysOf(auth, user);
  if (!ways.password && ways.passkeys === 0 && ways.identities < 2 && !ways.email) {
    throw new AuthError(ErrorCode.Conflict, "This linked account is the only way to sign in to the account; add another first");
  }
  if (!(await auth.storage.identities.unlink(user.id, provider, subject))) {
    throw new AuthError(ErrorCode.NotFound, "No such linked account");
  }
  await endOtherSessions(auth, { userId: user.id, keepSessionId: input.sessionId, reason: "identity_unlinked" });
  auth.emit({ type: "identity.unlinked", userId: user.id, provider, at: auth.now() });
}
