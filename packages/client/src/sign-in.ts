import type { PublicKeyCredentialCreationOptionsJSON, RegistrationResponseJSON } from "@simplewebauthn/browser";
import type { Session } from "./session.js";
import { type EnvelopeAnswer, type Transport, answerError, dataOf, malformedAnswer } from "./transport.js";
import type { AuthUser, PasskeyInfo, TotpSetup } from "./types.js";

const secondFactorRequiredCode = 40102;
const enrolmentRequiredCode = 40105;

/** A completed sign-in: the tokens are stored and `signedIn` was emitted. */
export interface SignedIn<User extends AuthUser = AuthUser> {
  status: "authenticated";
  user: User;
  /**
   * The server's word that the user may be offered a passkey now: a password or email sign-in of
   * an account with none that has not declined lately (false when the server has passkeys off).
   * `client.passkeys.shouldOffer(step)` adds whether this device has an authenticator.
   */
  offerPasskey: boolean;
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

/**
 * A first factor was accepted, but the server requires a second factor of this user, who has none
 * (code 40105; STUP-4): enrol TOTP or register a passkey, and the sign-in completes. The temporary
 * token stays inside this object and can do nothing else; it expires (10 minutes by default) and
 * serves a limited number of requests, after which the sign-in starts over (40100).
 */
export interface EnrolmentStep {
  status: "enrolment_required";
  /**
   * Starts enrolling TOTP (`POST /auth/2fa/enrolment/setup`): the secret to show as a QR code.
   * Calling it again replaces the pending secret.
   *
   * @throws {AuthClientError} 40100 the step is void, 42900 throttled.
   */
  setupTotp(): Promise<TotpSetup>;
  /**
   * Turns the pending factor on with a code from it (`POST /auth/2fa/enrolment/enable`) and
   * completes the sign-in: the tokens are stored, `signedIn` is emitted, and the ten recovery codes
   * are answered, to show this once (they are not stored).
   *
   * @throws {AuthClientError} 40103 wrong code (try again), 40100 the step is void, 40900 no pending secret.
   */
  enableTotp(code: string): Promise<SignedIn & { recoveryCodes: string[] }>;
  /**
   * Registers a passkey instead (begin, the browser's prompt, finish) and completes the sign-in.
   * The server offers it only where passkeys require user verification (40400 otherwise).
   *
   * @throws {AuthClientError} `passkey_ceremony` when the prompt did not complete, 40100 refused or void, 40400 not offered.
   */
  registerPasskey(input: { label: string }): Promise<SignedIn & { passkey: PasskeyInfo }>;
}

/** What a first factor (password, passkey, provider) leads to: signed in, a second factor to give, or one to enrol. */
export type SignInStep = SignedIn | SecondFactorStep | EnrolmentStep;

/** Runs the browser's registration ceremony for the options a begin step answered (the client's `passkeyCeremonies`). */
export type RunRegistration = (options: PublicKeyCredentialCreationOptionsJSON) => Promise<RegistrationResponseJSON>;

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
  const tokens = session.tokenSet(answer);
  return { status: "authenticated", user: await session.begin(tokens), offerPasskey: tokens.offerPasskey === true };
}

/**
 * Completes a sign-in whose answer carries, beside the token set, `extra` (the recovery codes of
 * an enrolled TOTP factor, or the registered passkey): the token set alone is stored, and `extra`
 * answered with the user.
 */
async function completeWith<K extends string, V>(
  session: Session,
  answer: EnvelopeAnswer,
  extra: K,
): Promise<SignedIn & Record<K, V>> {
  const { [extra]: value, ...tokens } = (dataOf<Record<string, unknown> | undefined>(answer) ?? {}) as Record<string, unknown>;
  if (value === undefined) throw malformedAnswer(answer);
  const signedIn = await completeSignIn(session, { ...answer, data: tokens });
  return { ...signedIn, [extra]: value } as SignedIn & Record<K, V>;
}

/** The {@link EnrolmentStep} of a 40105's temporary token. */
function enrolmentStep(
  transport: Transport,
  session: Session,
  tempToken: string,
  runRegistration: RunRegistration,
): EnrolmentStep {
  const send = (path: string, body: Record<string, unknown>, headers?: Record<string, string>) =>
    transport.send({ method: "POST", path, body, ...(headers ? { headers } : {}) });
  return {
    status: "enrolment_required",
    setupTotp: async () => dataOf<TotpSetup>(await send("/auth/2fa/enrolment/setup", { tempToken })),
    enableTotp: async (code) =>
      completeWith<"recoveryCodes", string[]>(
        session,
        await send("/auth/2fa/enrolment/enable", { tempToken, code }),
        "recoveryCodes",
      ),
    async registerPasskey({ label }) {
      const begun = dataOf<{ ceremonyId: string; options: PublicKeyCredentialCreationOptionsJSON }>(
        await send("/auth/public-key/enrolment/begin", { tempToken, label }),
      );
      const response = await runRegistration(begun.options);
      const answer = await send(
        "/auth/public-key/enrolment/finish",
        { tempToken, response },
        { [ceremonyHeader]: begun.ceremonyId },
      );
      return completeWith<"passkey", PasskeyInfo>(session, answer, "passkey");
    },
  };
}

/** The header that names the ceremony a finish route completes. */
export const ceremonyHeader = "x-webauthn-ceremony";

/**
 * Turns the answer of a first factor into its {@link SignInStep}: stores the tokens of a
 * completed sign-in, keeps a 40102's temporary token for the second factor, or a 40105's for the
 * enrolment of one (whose passkey registration runs `runRegistration`).
 *
 * @throws {AuthClientError} the answer's error when it is none of these.
 * @example
 * ```ts
 * const step = await signInStep(transport, session, await transport.send({ method: "POST", path: "/auth/login", body }), runRegistration);
 * ```
 */
export async function signInStep(
  transport: Transport,
  session: Session,
  answer: EnvelopeAnswer,
  runRegistration: RunRegistration,
): Promise<SignInStep> {
  if (answer.code !== secondFactorRequiredCode && answer.code !== enrolmentRequiredCode) return completeSignIn(session, answer);
  const tempToken = (answer.data as { tempToken?: unknown } | undefined)?.tempToken;
  if (typeof tempToken !== "string") throw malformedAnswer(answer);
  if (answer.code === enrolmentRequiredCode) return enrolmentStep(transport, session, tempToken, runRegistration);
  const complete = async (path: string, body: Record<string, string>) =>
    completeSignIn(session, await transport.send({ method: "POST", path, body }));
  return {
    status: "totp_required",
    verifyTotp: (code) => complete("/auth/2fa/verify", { tempToken, code }),
    useRecoveryCode: (recoveryCode) => complete("/auth/2fa/recovery", { tempToken, recoveryCode }),
  };
}
