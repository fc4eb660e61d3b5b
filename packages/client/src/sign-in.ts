import type { Session } from "./session.js";
import { readTokenSet } from "./session.js";
import { type EnvelopeAnswer, type Transport, answerError, malformedAnswer } from "./transport.js";
import type { AuthUser } from "./types.js";

const secondFactorRequiredCode = 40102;

/** A completed sign-in: the tokens are stored and `signedIn` was emitted. */
export interface SignedIn {
  status: "authenticated";
  user: AuthUser;
}

/**
 * A first factor was accepted and the user has TOTP on (code 40102): finish with a code from the
 * authenticator app or a recovery code. The temporary token stays inside this object; a wrong
 * code (40103) may be tried again, up to five times, before the step is void (40100) and the
 * sign-in starts over.
 */
export interface SecondFactorStep {
  status: "totp_required";
  /**
   * Completes the sign-in with a 6-digit code from the authenticator app.
   *
   * @throws {AuthClientError} 40103 wrong or used code, 40100 the step is void, 42900 throttled.
   */
  verifyTotp(code: string): Promise<SignedIn>;
  /**
   * Completes the sign-in with one of the user's recovery codes, which is then spent. Pass it as
   * typed: dashes, spaces and case do not matter, and both the 24-character codes issued now
   * (`7K3D-9QXM-2HBT-W0RZ-5NPV-C8JE`) and the 16-character ones issued before are read.
   *
   * @throws {AuthClientError} as {@link SecondFactorStep.verifyTotp}.
   */
  useRecoveryCode(recoveryCode: string): Promise<SignedIn>;
}

/** What a first factor (password, passkey, provider) leads to: signed in, or a second factor to give. */
export type SignInStep = SignedIn | SecondFactorStep;

/**
 * Stores the tokens of an answer that completes a sign-in (or a sign-up) and emits `signedIn`.
 *
 * @throws {AuthClientError} the answer's error when it is not a success, `invalid_response` when its data is not a token set.
 * @example
 * ```ts
 * const signedIn = await completeSignIn(session, await transport.send({ method: "POST", path: "/auth/register", body }));
 * ```
 */
export async function completeSignIn(session: Session, answer: EnvelopeAnswer): Promise<SignedIn> {
  if (answer.code !== 0) throw answerError(answer);
  return { status: "authenticated", user: await session.begin(readTokenSet(answer)) };
}

/**
 * Turns the answer of a first factor into its {@link SignInStep}: stores the tokens of a
 * completed sign-in, or keeps a 40102's temporary token for the second factor.
 *
 * @throws {AuthClientError} the answer's error when it is neither.
 * @example
 * ```ts
 * const step = await signInStep(transport, session, await transport.send({ method: "POST", path: "/auth/login", body }));
 * ```
 */
export async function signInStep(transport: Transport, session: Session, answer: EnvelopeAnswer): Promise<SignInStep> {
  if (answer.code !== secondFactorRequiredCode) return completeSignIn(session, answer);
  const tempToken = (answer.data as { tempToken?: unknown } | undefined)?.tempToken;
  if (typeof tempToken !== "string") throw malformedAnswer(answer);
  const complete = async (path: string, body: Record<string, string>) =>
    completeSignIn(session, await transport.send({ method: "POST", path, body }));
  return {
    status: "totp_required",
    verifyTotp: (code) => complete("/auth/2fa/verify", { tempToken, code }),
    useRecoveryCode: (recoveryCode) => complete("/auth/2fa/recovery", { tempToken, recoveryCode }),
  };
}
