import {
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  WebAuthnAbortService,
  browserSupportsWebAuthnAutofill,
  platformAuthenticatorIsAvailable,
  startAuthentication,
  startRegistration,
} from "@simplewebauthn/browser";
import { AuthClientError } from "./errors.js";
import { type Reauthenticate, withReauthentication } from "./reauthentication.js";
import type { Session } from "./session.js";
import { type RunRegistration, type SignInStep, ceremonyHeader, signInStep } from "./sign-in.js";
import { type EnvelopeAnswer, type Transport, dataOf } from "./transport.js";
import type { PasskeyInfo, ReauthenticationProof } from "./types.js";

/**
 * The browser ceremonies, as `@simplewebauthn/browser` exports them: the default. Inject your
 * own to drive another authenticator, such as a software authenticator in Node tests.
 */
export interface PasskeyCeremonies {
  /** Asks an authenticator to sign the server's challenge with one of its passkeys for the site: a sign-in. */
  startAuthentication(options: {
    optionsJSON: PublicKeyCredentialRequestOptionsJSON;
    useBrowserAutofill?: boolean;
  }): Promise<AuthenticationResponseJSON>;
  /** Asks an authenticator to create a passkey for the server's options: a registration. */
  startRegistration(options: { optionsJSON: PublicKeyCredentialCreationOptionsJSON }): Promise<RegistrationResponseJSON>;
  /**
   * Cancels the ceremony under way, so that its `startAuthentication` rejects: how an aborted or
   * renewed autofill ends its request. Without it, the request is left to settle by itself and its
   * answer is not sent.
   */
  cancel?(): void;
  /** Whether the browser offers passkeys in its autofill (conditional mediation). Without it, assumed so. */
  supportsAutofill?(): Promise<boolean>;
  /**
   * Whether this device has an authenticator that verifies the user (Touch ID, Windows Hello, an
   * Android screen lock): what an offer to create a passkey needs. Absent: assumed so.
   */
  platformAuthenticatorAvailable?(): Promise<boolean>;
}

/** `@simplewebauthn/browser`'s ceremonies, which run the browser's WebAuthn prompt. */
export const browserPasskeyCeremonies: PasskeyCeremonies = {
  startAuthentication,
  startRegistration,
  cancel: () => WebAuthnAbortService.cancelCeremony(),
  supportsAutofill: browserSupportsWebAuthnAutofill,
  platformAuthenticatorAvailable: platformAuthenticatorIsAvailable,
};

/** A begun ceremony: `POST …/begin`'s answer. */
interface Ceremony<Options> {
  ceremonyId: string;
  options: Options;
}

/** Passkey sign-in, registration and management: the `/auth/public-key/*` routes. */
export interface PasskeyClient {
  /**
   * Whether the server has passkeys on (`GET /auth/public-key/config`).
   *
   * @example
   * ```ts
   * button.hidden = !(await client.passkeys.enabled());
   * ```
   */
  enabled(): Promise<boolean>;
  /**
   * Signs in with a passkey: begin, the browser's prompt, finish with the `X-WebAuthn-Ceremony`
   * header. Without a username the browser offers every passkey it holds for the site. A passkey
   * without user verification on a server with `userVerification: "preferred"` may answer
   * `totp_required`.
   *
   * @throws {AuthClientError} `passkey_ceremony` when the prompt was cancelled or failed (nothing
   * was sent), 40100 the passkey was not accepted, 40300 disabled, 42900 throttled.
   * @example
   * ```ts
   * const step = await client.passkeys.signIn(); // or { username: "alice" }
   * ```
   */
  signIn(options?: { username?: string; useBrowserAutofill?: boolean }): Promise<SignInStep>;
  /**
   * Offers the site's passkeys in the browser's autofill (conditional mediation) and signs in
   * with the one the user picks there: begins a stateless ceremony
   * (`login/begin` with `{ mediation: "conditional" }`, which stores nothing on the server),
   * waits for the browser's answer, and finishes as {@link PasskeyClient.signIn} does. The page
   * needs an `<input autocomplete="username webauthn">`; the promise settles only once the user
   * picks a passkey, or it is aborted. Before the ceremony's `timeout` passes (a minute before,
   * or half-way for a ceremony of under two minutes) a new one is begun and the request
   * restarted, so a page left open keeps offering passkeys.
   *
   * - `signal` aborting cancels the browser's request, and the promise rejects with
   *   `signal.reason` (as `fetch` does); an already-aborted signal sends nothing. Once the
   *   browser has answered and the finish is sent, the sign-in completes whatever the signal does.
   * - A second `autofill()` replaces the first, which rejects with a `passkey_ceremony`
   *   {@link AuthClientError} whose `cause` is an `AbortError` DOMException.
   * - A browser that does not offer passkeys in autofill makes it reject at once with a
   *   `passkey_ceremony` error, nothing sent: check `browserSupportsWebAuthnAutofill()` of
   *   `@simplewebauthn/browser` first to offer a button instead.
   *
   * @throws {AuthClientError} `passkey_ceremony` when the browser's request failed, was replaced or is not supported, 40100 the passkey was not accepted, 40300 disabled; `signal.reason` when aborted.
   * @example
   * ```ts
   * const controller = new AbortController();
   * client.passkeys.autofill({ signal: controller.signal }).then(showSignedIn, showUnlessAborted);
   * // The user signs in with the password instead:
   * controller.abort();
   * ```
   */
  autofill(options?: { signal?: AbortSignal }): Promise<SignInStep>;
  /**
   * Registers a passkey for the signed-in user, who must have signed in recently or prove it is
   * them (the password, or a TOTP code when TOTP is on: here, or through `reauthenticate`).
   * The server then ends the user's other sessions and keeps this one (SE-2): the client stays
   * signed in.
   *
   * @throws {AuthClientError} 40001 re-authentication needed, 40100 wrong password, 40103 wrong
   * code, 40900 already registered, 42200 bad label, `passkey_ceremony`.
   * @example
   * ```ts
   * const passkey = await client.passkeys.register({ label: "Work laptop" });
   * ```
   */
  register(input: { label: string } & ReauthenticationProof): Promise<PasskeyInfo>;
  /**
   * The signed-in user's passkeys, oldest first.
   *
   * @example
   * ```ts
   * for (const passkey of await client.passkeys.list()) render(passkey.label, passkey.lastUsedAt);
   * ```
   */
  list(): Promise<PasskeyInfo[]>;
  /**
   * Renames one of the user's passkeys.
   *
   * @throws {AuthClientError} 40400 no such passkey of this user, 42200 bad label.
   * @example
   * ```ts
   * await client.passkeys.rename(passkey.id, "Old phone");
   * ```
   */
  rename(id: string, label: string): Promise<void>;
  /**
   * Revokes one of the user's passkeys, once the user proves every factor of the account (STUP-3):
   * a sign-in within the server's `passkeys.reauthenticationWindow`, or the password (and a TOTP
   * code when TOTP is on), here or through `reauthenticate`. The server ends the user's other
   * sessions and keeps this one (SE-2): the client stays signed in.
   *
   * @throws {AuthClientError} 40001 re-authentication needed, 40100 wrong password, 40103 wrong code, 40400 no such passkey, 40900 it is the account's last way to sign in.
   * @example
   * ```ts
   * await client.passkeys.revoke(passkey.id); // or (passkey.id, { password, totpCode })
   * ```
   */
  revoke(id: string, proof?: ReauthenticationProof): Promise<void>;
  /**
   * Whether to offer the user a passkey after the sign-in `step` (PL-13): the server said so (a
   * password or email sign-in of an account with none that has not declined lately) and this
   * device has a user-verifying authenticator. Then `register` right away needs no password again
   * (the sign-in is recent), and `declineOffer` stops the offer for a while.
   *
   * @example
   * ```ts
   * const step = await client.login({ username, password });
   * if (await client.passkeys.shouldOffer(step)) showPasskeyOffer();
   * ```
   */
  shouldOffer(step: SignInStep): Promise<boolean>;
  /**
   * Declines the passkey offer (`POST /auth/public-key/offer/decline`; PL-14): the server stops
   * offering one to this account for its `passkeys.offerDeclinedFor` (90 days by default).
   *
   * @example
   * ```ts
   * notNowButton.onclick = () => client.passkeys.declineOffer();
   * ```
   */
  declineOffer(): Promise<void>;
}

/**
 * Runs a browser ceremony; its failure becomes a `passkey_ceremony` error naming the DOMException or WebAuthn code.
 *
 * @example
 * ```ts
 * const assertion = await runCeremony(() => ceremonies.startAuthentication({ optionsJSON: options }));
 * ```
 */
export async function runCeremony<T>(ceremony: () => Promise<T>): Promise<T> {
  try {
    return await ceremony();
  } catch (cause) {
    const { code, name } = (cause ?? {}) as { code?: unknown; name?: unknown };
    const reason = [code, name].find((value): value is string => typeof value === "string" && /^\w+$/.test(value));
    throw new AuthClientError(`The passkey ceremony did not complete${reason ? ` (${reason})` : ""}`, {
      kind: "passkey_ceremony",
      cause,
    });
  }
}

/**
 * The registration ceremony of `ceremonies` as a sign-in step runs it (a 40105's passkey
 * enrolment); a failure becomes a `passkey_ceremony` error, as in {@link PasskeyClient.register}.
 *
 * @example
 * ```ts
 * const step = await signInStep(transport, session, answer, registrationRunner(browserPasskeyCeremonies));
 * ```
 */
export function registrationRunner(ceremonies: PasskeyCeremonies): RunRegistration {
  return (options) => runCeremony(() => ceremonies.startRegistration({ optionsJSON: options }));
}

/** When to renew an autofill ceremony of `timeout` ms: a minute before it ends, or half-way through a short one. */
function autofillRenewalDelay(timeout: number): number {
  return Math.max(timeout - 60_000, timeout / 2);
}

/** What an autofill rejects with when a newer `autofill()` replaces it. */
function replacedAutofill(): AuthClientError {
  return new AuthClientError("The passkey autofill was replaced by a newer one", {
    kind: "passkey_ceremony",
    cause: new DOMException("The passkey autofill was replaced by a newer one", "AbortError"),
  });
}

/**
 * Runs the browser's conditional request for `options` until it answers (the assertion), `abort`
 * aborts it (rejects with the reason, the request cancelled), or its renewal time comes
 * (`"renew"`, the request cancelled).
 */
function conditionalRequest(
  ceremonies: PasskeyCeremonies,
  options: PublicKeyCredentialRequestOptionsJSON,
  abort: AbortSignal,
): Promise<AuthenticationResponseJSON | "renew"> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (cancel: boolean, done: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(renewal);
      abort.removeEventListener("abort", onAbort);
      if (cancel) ceremonies.cancel?.();
      done();
    };
    const onAbort = () => settle(true, () => reject(abort.reason));
    const renewal =
      typeof options.timeout === "number"
        ? setTimeout(() => settle(true, () => resolve("renew")), autofillRenewalDelay(options.timeout))
        : undefined;
    abort.addEventListener("abort", onAbort, { once: true });
    runCeremony(() => ceremonies.startAuthentication({ optionsJSON: options, useBrowserAutofill: true })).then(
      (assertion) => settle(false, () => resolve(assertion)),
      (error: unknown) => settle(false, () => reject(error)),
    );
  });
}

/**
 * Runs a sign-up with a passkey over `transport`: begin (`POST /auth/register/public-key/begin`,
 * its refusal thrown before any prompt), the registration ceremony, and the finish with the
 * `X-WebAuthn-Ceremony` header; answers the finish's answer for {@link signInStep}.
 *
 * @throws {AuthClientError} the begin's refusal, or `passkey_ceremony` (nothing is sent to the finish).
 * @example
 * ```ts
 * const answer = await signUpWithPasskey(transport, registrationRunner(ceremonies), { username: "newcomer" });
 * ```
 */
export async function signUpWithPasskey(
  transport: Transport,
  runRegistration: RunRegistration,
  body: { username: string; email?: string | undefined; label?: string | undefined; fields?: unknown },
): Promise<EnvelopeAnswer> {
  // JSON leaves undefined fields out: the server's defaults.
  const begun = dataOf<Ceremony<PublicKeyCredentialCreationOptionsJSON>>(
    await transport.send({ method: "POST", path: "/auth/register/public-key/begin", body }),
  );
  const attestation = await runRegistration(begun.options);
  return transport.send({
    method: "POST",
    path: "/auth/register/public-key/finish",
    body: attestation,
    headers: { [ceremonyHeader]: begun.ceremonyId },
  });
}

/**
 * Makes the {@link PasskeyClient} of a session.
 *
 * @example
 * ```ts
 * const passkeys = createPasskeyClient(transport, session, browserPasskeyCeremonies, reauthenticate);
 * ```
 */
export function createPasskeyClient(
  transport: Transport,
  session: Session,
  ceremonies: PasskeyCeremonies,
  reauthenticate: Reauthenticate | undefined,
): PasskeyClient {
  const credentialPath = (id: string) => `/auth/public-key/credentials/${encodeURIComponent(id)}`;
  /** The autofill under way, which a newer one aborts. */
  let runningAutofill: AbortController | null = null;
  const finishSignIn = async (ceremonyId: string, assertion: AuthenticationResponseJSON) => {
    const answer = await transport.send({
      method: "POST",
      path: "/auth/public-key/login/finish",
      body: assertion,
      headers: { [ceremonyHeader]: ceremonyId },
    });
    return signInStep(transport, session, answer, registrationRunner(ceremonies));
  };
  return {
    async enabled() {
      const { enabled } = dataOf<{ enabled: boolean }>(await transport.send({ method: "GET", path: "/auth/public-key/config" }));
      return enabled === true;
    },
    async signIn(options = {}) {
      const begun = dataOf<Ceremony<PublicKeyCredentialRequestOptionsJSON>>(
        await transport.send({ method: "POST", path: "/auth/public-key/login/begin", body: { username: options.username } }),
      );
      const assertion = await runCeremony(() =>
        ceremonies.startAuthentication({
          optionsJSON: begun.options,
          ...(options.useBrowserAutofill ? { useBrowserAutofill: true } : {}),
        }),
      );
      return finishSignIn(begun.ceremonyId, assertion);
    },
    async autofill({ signal } = {}) {
      signal?.throwIfAborted();
      runningAutofill?.abort(replacedAutofill());
      const own = new AbortController();
      runningAutofill = own;
      const forward = () => own.abort(signal?.reason);
      signal?.addEventListener("abort", forward, { once: true });
      try {
        if (ceremonies.supportsAutofill && !(await ceremonies.supportsAutofill())) {
          throw new AuthClientError("This browser does not offer passkeys in its autofill (conditional mediation)", {
            kind: "passkey_ceremony",
          });
        }
        for (;;) {
          own.signal.throwIfAborted();
          const begun = dataOf<Ceremony<PublicKeyCredentialRequestOptionsJSON>>(
            await transport.send({ method: "POST", path: "/auth/public-key/login/begin", body: { mediation: "conditional" } }),
          );
          own.signal.throwIfAborted();
          const assertion = await conditionalRequest(ceremonies, begun.options, own.signal);
          if (assertion === "renew") continue;
          return await finishSignIn(begun.ceremonyId, assertion);
        }
      } finally {
        signal?.removeEventListener("abort", forward);
        if (runningAutofill === own) runningAutofill = null;
      }
    },
    async register({ label, ...proof }) {
      const begun = await withReauthentication(
        reauthenticate,
        { operation: "passkeys.register", accepts: ["password", "totpCode"] },
        proof,
        (given) =>
          session.call<Ceremony<PublicKeyCredentialCreationOptionsJSON>>({
            method: "POST",
            path: "/auth/public-key/register/begin",
            body: { label, ...given },
          }),
      );
      const attestation = await registrationRunner(ceremonies)(begun.options);
      return session.call<PasskeyInfo>({
        method: "POST",
        path: "/auth/public-key/register/finish",
        body: attestation,
        headers: { [ceremonyHeader]: begun.ceremonyId },
      });
    },
    async shouldOffer(step) {
      if (step.status !== "authenticated" || !step.offerPasskey) return false;
      return (await ceremonies.platformAuthenticatorAvailable?.().catch(() => false)) ?? true;
    },
    async declineOffer() {
      await session.call({ method: "POST", path: "/auth/public-key/offer/decline" });
    },
    list: () => session.call<PasskeyInfo[]>({ method: "GET", path: "/auth/public-key/credentials" }),
    async rename(id, label) {
      await session.call({ method: "PUT", path: credentialPath(id), body: { label } });
    },
    async revoke(id, proof = {}) {
      await withReauthentication(
        reauthenticate,
        { operation: "passkeys.revoke", accepts: ["password", "totpCode"] },
        proof,
        (given) =>
          session.call({
            method: "DELETE",
            path: credentialPath(id),
            body: given.password || given.totpCode ? given : undefined,
          }),
      );
    },
  };
}
