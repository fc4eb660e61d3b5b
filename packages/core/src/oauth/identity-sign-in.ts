import type { Auth } from "../auth.js";
import { base64url } from "../crypto/random.js";
import { directoryUserNow } from "../directory/sign-in.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { createUserRecord } from "../flows/create-user.js";
import type { LoginResult } from "../flows/login-result.js";
import { completeFirstFactor } from "../flows/pending-login.js";
import type { UserRecord } from "../storage/types.js";
import { emailKeyOf, normalizeEmail } from "../users/email.js";
import type { SessionClient } from "../users/session-use.js";
import { endOtherSessions } from "../users/sessions.js";
import { normalizeUsername } from "../users/username.js";
import { type ProviderAuthentication, notStated, providerSignIn } from "./provider-authentication.js";
import type { ExternalProfile, ResolvedOAuthProvider } from "./provider-config.js";

/**
 * The username an account made on first sign-in starts from: the provider's username, else the
 * local part of the email, cut to 100 characters, if it makes a valid username; else
 * `<provider>-user`.
 */
function baseUsername(provider: ResolvedOAuthProvider, profile: ExternalProfile): string {
  for (const offered of [profile.username, profile.email?.split("@")[0]]) {
    if (typeof offered !== "string") continue;
    try {
      return normalizeUsername([...offered.trim()].slice(0, 100).join("").trim()).username;
    } catch {
      // Not a valid username (empty, too long, control characters): try the next, or the default.
    }
  }
  return `${provider.name}-user`;
}

/** The usernames to try for an account made on first sign-in: the base, then with a random suffix. */
function usernameCandidates(auth: Auth, provider: ResolvedOAuthProvider, profile: ExternalProfile): string[] {
  const base = baseUsername(provider, profile);
  const suffix = () =>
    base64url(auth.randomBytes(4))
      .toLowerCase()
      .replace(/[^a-z0-9]/g, "x");
  return [base, `${base}-${suffix()}`, `${base}-${suffix()}`];
}

/** The provider's email as an account's address (`normalizeEmail`), or null when it gives none or one that is not an address. */
function addressOf(profile: ExternalProfile): string | null {
  const offered = profile.email?.trim();
  if (!offered) return null;
  try {
    return normalizeEmail(offered);
  } catch {
    return null;
  }
}

/**
 * Creates the account of a first sign-in (provisioning): no password, the configured default
 * roles and any the provider mapped, and the provider's email as its address, unverified whatever
 * the provider says (EV-1: an address counts as verified only through its own token). A username
 * that is taken gets a random suffix.
 */
async function provisionUser(auth: Auth, provider: ResolvedOAuthProvider, profile: ExternalProfile): Promise<string> {
  const roles = [...new Set([...provider.provisioning.defaultRoles, ...(profile.roles ?? [])])];
  const email = addressOf(profile) ?? undefined;
  for (const username of usernameCandidates(auth, provider, profile)) {
    try {
      return (await createUserRecord(auth, { username, roles, email, emailVerified: false }, { by: "provider" })).id;
    } catch (error) {
      if (!(error instanceof AuthError) || error.code !== ErrorCode.Conflict) throw error;
    }
  }
  throw new AuthError(ErrorCode.Conflict, "No free username could be found for this account");
}

/** An email as identities keep it and linking compares it: trimmed and lower-cased; null when none. */
function emailKey(email: string | undefined): string | null {
  const trimmed = email?.trim();
  return trimmed ? trimmed.toLowerCase() : null;
}

/**
 * Links (provider, subject) to `userId`; a new link ends every session the user had and emits
 * `identity.linked`. A link is only made while signing in (a first sign-in that joins or makes
 * the account, or the callback of `linkIdentity`), before the session of that sign-in begins: the
 * new session is the one that goes on (SE-2), and the token version does not move, so a
 * temporary token of this sign-in stays good. Returns false when (provider, subject) was already
 * linked, to anyone.
 */
async function storeLink(
  auth: Auth,
  provider: ResolvedOAuthProvider,
  profile: ExternalProfile,
  userId: string,
  now: number,
): Promise<boolean> {
  const linked = await auth.storage.identities.link({
    provider: provider.name,
    subject: profile.subject,
    userId,
    email: emailKey(profile.email),
    emailVerified: profile.emailVerified === true,
    createdAt: now,
    lastUsedAt: now,
  });
  if (linked) {
    await endOtherSessions(auth, { userId, reason: "identity_linked" });
    auth.emit({ type: "identity.linked", userId, provider: provider.name, at: now });
  }
  return linked;
}

/**
 * The account a first sign-in joins by email (OA-7), only when this provider has
 * `linkByVerifiedEmail` on and says the email is verified: the one account that either holds an
 * identity with that verified email from another provider that also has `linkByVerifiedEmail` on,
 * or holds the address verified itself (EV-1: the same key, NFKC and lower case). An account
 * whose address is unverified is never joined: anyone may type any address at sign-up, and
 * joining on it would hand the provider's user to whoever typed it first. None when no account
 * or more than one does.
 */
async function accountByVerifiedEmail(
  auth: Auth,
  provider: ResolvedOAuthProvider,
  profile: ExternalProfile,
): Promise<UserRecord | null> {
  const email = emailKey(profile.email);
  if (!provider.linkByVerifiedEmail || profile.emailVerified !== true || email === null) return null;
  const owners = new Set(
    (await auth.storage.identities.findByVerifiedEmail(email))
      .filter((identity) => identity.provider !== provider.name)
      .filter((identity) => auth.config.oauthProviders.get(identity.provider)?.linkByVerifiedEmail === true)
      .map((identity) => identity.userId),
  );
  const address = addressOf(profile);
  const localHolder = address === null ? null : await auth.storage.users.findByVerifiedEmail(emailKeyOf(address));
  if (localHolder) owners.add(localHolder.id);
  return owners.size === 1 ? auth.storage.users.findById([...owners][0] as string) : null;
}

/**
 * Goes on from a provider's proven sign-in as `completeFirstFactor` does, with what the provider
 * stated of it (STUP-5, `providerSignIn`): a sign-in that counts as two factors asks no TOTP code,
 * and the session's `amr` and sign-in time are the provider's.
 */
function completeProviderSignIn(
  auth: Auth,
  user: UserRecord,
  provider: ResolvedOAuthProvider,
  authentication: ProviderAuthentication,
  client: SessionClient,
): Promise<LoginResult> {
  const { methods, multiFactor, authTime } = providerSignIn(provider, authentication, auth.now());
  return completeFirstFactor(auth, user, methods, client.ip, { complete: multiFactor, userAgent: client.userAgent, authTime });
}

/**
 * Signs in the person a provider vouched for (OA-7): the account linked to (provider, subject);
 * else, where the provider links by verified email, the one account that email already names
 * (linked now); else, with provisioning on, a new account linked now. A disabled account is
 * 40300. What the provider's ID token stated of the sign-in (`authentication`: `acr`, `amr`,
 * `auth_time`) decides the rest (STUP-5, `providerSignIn`): a user with TOTP gets 40102 unless the
 * provider is `trustedForSecondFactor` and asserted a second factor; `amr` is `["fed"]`, or with
 * the provider's values and `mfa` when the sign-in counts as two factors; the session's sign-in
 * time is the provider's `auth_time`. A directory account is signed in only as the directory has
 * it now (see `directoryUserNow`).
 *
 * @throws {AuthError} 40100 no linked account and provisioning off, 40300 disabled.
 */
export async function signInWithIdentity(
  auth: Auth,
  provider: ResolvedOAuthProvider,
  profile: ExternalProfile,
  client: SessionClient = {},
  authentication: ProviderAuthentication = notStated,
): Promise<LoginResult> {
  const { ip } = client;
  const now = auth.now();
  let identity = await auth.storage.identities.find(provider.name, profile.subject);
  if (!identity) {
    const owner = await accountByVerifiedEmail(auth, provider, profile);
    if (owner?.disabled) return completeFirstFactor(auth, owner, ["fed"], ip);
    if (owner) {
      await storeLink(auth, provider, profile, owner.id, now);
    } else {
      if (!provider.provisioning.enabled)
        throw new AuthError(ErrorCode.AuthenticationFailed, "No account is linked to this sign-in");
      const userId = await provisionUser(auth, provider, profile);
      if (!(await storeLink(auth, provider, profile, userId, now))) {
        // A concurrent first sign-in of the same person linked its own new account first.
        await auth.storage.users.update(userId, { disabled: true }, now);
      }
    }
    identity = await auth.storage.identities.find(provider.name, profile.subject);
  }
  const user: UserRecord | null = identity ? await auth.storage.users.findById(identity.userId) : null;
  if (!user) throw new AuthError(ErrorCode.AuthenticationFailed, "No account is linked to this sign-in");
  const current = await directoryUserNow(auth, user, ip);
  return completeProviderSignIn(auth, current, provider, authentication, client);
}

/**
 * Finishes linking a provider account to the user who began the flow with `linkIdentity`: the
 * link is stored (40900 when the provider account is linked to someone else), every session the
 * user had ends, and the user is signed in afresh as {@link signInWithIdentity} signs in (40102
 * with TOTP unless the provider is trusted for the second factor and asserted one).
 *
 * @throws {AuthError} 40300 the account was disabled meanwhile, 40900 linked to another user.
 */
export async function linkAndSignIn(
  auth: Auth,
  provider: ResolvedOAuthProvider,
  profile: ExternalProfile,
  userId: string,
  client: SessionClient = {},
  authentication: ProviderAuthentication = notStated,
): Promise<LoginResult> {
  const { ip } = client;
  const user = await auth.storage.users.findById(userId);
  if (!user || user.disabled) throw new AuthError(ErrorCode.Forbidden, "The account is disabled");
  if (!(await storeLink(auth, provider, profile, user.id, auth.now()))) {
    const existing = await auth.storage.identities.find(provider.name, profile.subject);
    if (existing?.userId !== user.id) {
      throw new AuthError(ErrorCode.Conflict, "This provider account is linked to another user");
    }
  }
  const current = await directoryUserNow(auth, (await auth.storage.users.findById(user.id)) as UserRecord, ip);
  return completeProviderSignIn(auth, current, provider, authentication, client);
}
