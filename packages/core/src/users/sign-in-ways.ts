import type { Auth } from "../auth.js";
import type { ReauthenticationWay } from "../step-up/policy.js";
import type { UserRecord } from "../storage/types.js";

/** How an account can sign in: what keeps revoking a passkey or unlinking a provider from locking it out. */
export interface SignInWays {
  /** A local password, or the directory. */
  password: boolean;
  passkeys: number;
  identities: number;
  /** Email sign-in (PL-1): on, and the account local with a verified address to send a code to. */
  email: boolean;
}

/** Counts an account's ways to sign in. */
export async function signInWaysOf(auth: Auth, user: UserRecord): Promise<SignInWays> {
  const [passkeys, identities] = await Promise.all([
    auth.storage.passkeys.listByUser(user.id),
    auth.storage.identities.listByUser(user.id),
  ]);
  return {
    password: user.source === "directory" || user.passwordHash !== null,
    passkeys: passkeys.length,
    identities: identities.length,
    email: auth.config.emailSignIn.enabled && user.source === "local" && user.emailVerified && user.email !== null,
  };
}

/**
 * The ways `user` can re-authenticate (STUP-2, STUP-3): its password (local or the directory's),
 * a passkey when passkeys are on and it has one, a provider it is linked to. What a 40001 of a
 * change that needs re-authentication names in `data.reauthenticateWith`, so that a client asks
 * a passkey-only account for its passkey rather than a password it does not have (PL-15).
 */
export async function reauthenticationWaysOf(auth: Auth, user: UserRecord): Promise<ReauthenticationWay[]> {
  const ways = await signInWaysOf(auth, user);
  const named: ReauthenticationWay[] = [];
  if (ways.password) named.push("password");
  if (ways.passkeys > 0 && auth.config.passkeys) named.push("passkey");
  if (ways.identities > 0) named.push("provider");
  return named;
}
