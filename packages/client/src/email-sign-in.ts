import type { Session } from "./session.js";
import { type RunRegistration, type SignInStep, signInStep } from "./sign-in.js";
import { type Transport, dataOf } from "./transport.js";

/** What finishes an email sign-in: the code the message carried, or its link's token (`tokenFromLink`). */
export type EmailSignInProof = { code: string; token?: never } | { token: string; code?: never };

/**
 * Sign-in with a one-time code or link sent by email (`/auth/email-sign-in/…`, where the server
 * has `emailSignIn.enabled`; 40400 otherwise). The begin binds the sign-in to this browser (an
 * HttpOnly cookie) and to this client (the binding is kept in memory and sent with the finish,
 * for platforms without cookies): a link forwarded to another browser does not sign it in (PL-2).
 */
export interface EmailSignInClient {
  /**
   * Asks for a code or link (`POST /auth/email-sign-in/begin`). The server answers alike for every
   * address, held or not (PL-3): this resolves the same way, and a message goes out only to an
   * account holding the address verified (or, with sign-up by email on, to an address nobody holds).
   *
   * @throws {AuthClientError} 40001 no address, 40002 not an address, 40400 email sign-in off,
   * 42900 asked too often (`retryAfter`).
   * @example
   * ```ts
   * const { expiresIn } = await client.emailSignIn.begin("alice@example.com");
   * showNotice(`Check your mail: the code works for ${Math.round(expiresIn / 60)} minutes.`);
   * ```
   */
  begin(email: string): Promise<{ expiresIn: number }>;
  /**
   * Signs in with the code or the link's token (`POST /auth/email-sign-in/finish`), answering the
   * same steps as `client.login`: `authenticated` (tokens stored, `signedIn` emitted),
   * `totp_required` (an email code is a first factor only: `verifyTotp` finishes, PL-4), or
   * `enrolment_required`.
   *
   * @throws {AuthClientError} 40001 no binding (the link was opened in another browser) or no
   * proof, 40100 the code or link is invalid or expired (one answer for every reason), 40300 the
   * account is disabled, 42900 throttled.
   * @example
   * ```ts
   * const token = tokenFromLink(location.hash);
   * history.replaceState(null, "", location.pathname);
   * const step = await client.emailSignIn.finish(token ? { token } : { code: typedCode });
   * if (step.status === "totp_required") await step.verifyTotp(await askForCode());
   * ```
   */
  finish(proof: EmailSignInProof): Promise<SignInStep>;
}

/**
 * Makes the {@link EmailSignInClient}: public routes through `transport` alone (no bearer token),
 * the sign-in's steps through `signInStep` as a password login's.
 */
export function createEmailSignInClient(
  transport: Transport,
  session: Session,
  runRegistration: RunRegistration,
): EmailSignInClient {
  let binding: string | undefined;
  return {
    async begin(email) {
      const answer = await transport.send({ method: "POST", path: "/auth/email-sign-in/begin", body: { email } });
      const data = dataOf<{ binding: string; expiresIn: number }>(answer);
      binding = data.binding;
      return { expiresIn: data.expiresIn };
    },
    async finish(proof) {
      // JSON leaves undefined fields out: the cookie's binding is then the server's only one.
      const body = { code: proof.code, token: proof.token, binding, deviceToken: session.deviceToken() };
      const answer = await transport.send({ method: "POST", path: "/auth/email-sign-in/finish", body });
      const step = await signInStep(transport, session, answer, runRegistration);
      binding = undefined;
      return step;
    },
  };
}
