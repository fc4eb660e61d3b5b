/** A person who can sign in at the local provider, keyed by username in the `accounts` option of `startLocalProvider`. */
export interface LocalProviderAccount {
  /** The subject: the provider's stable identifier of the person, `sub` of its ID tokens. */
  sub: string;
  /** The `email` claim (scope `email`). */
  email: string;
  /** The `email_verified` claim (scope `email`): whether the provider vouches for the address. */
  email_verified: boolean;
  /** The `name` claim (scope `profile`). */
  name: string;
  /** What the login page checks (in constant time); never a claim. */
  password: string;
}

/** The password of every account of {@link localProviderAccounts}, and the one `driveAuthorization` submits unless told. */
export const localProviderPassword = "local provider password";

/**
 * The accounts of the local provider unless the `accounts` option of `startLocalProvider` replaces them,
 * the demo's: `ada` (email verified) and `bob` (email not verified), each with a fixed `sub`, so a
 * Portcullis account linked to one is found again after the provider restarts.
 */
export const localProviderAccounts: Readonly<Record<"ada" | "bob", LocalProviderAccount>> = Object.freeze({
  ada: {
    sub: "local-ada-0001",
    email: "ada@example.com",
    email_verified: true,
    name: "Ada Example",
    password: localProviderPassword,
  },
  bob: {
    sub: "local-bob-0002",
    email: "bob@example.com",
    email_verified: false,
    name: "Bob Example",
    password: localProviderPassword,
  },
});
