import type { Auth } from "../auth.js";
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
