import type { AuthClientError, LoginInput, PasskeyInfo, SignInStep, SignedIn, TotpSetup } from "@portcullis/client";
import { useCallback, useRef, useState } from "react";
import { useAuthClient } from "./provider.js";
import { type Outcome, useTracked } from "./tracked.js";

/** The business code of a sign-in step that is void (expired, or too many wrong codes): start over. */
const voidStepCode = 40100;

/**
 * Where a sign-in stands: `"credentials"` (the form: nothing begun, or the step was void),
 * `"totp_required"` (40102: a code from the authenticator app or a recovery code),
 * `"enrolment_required"` (40105: the server requires a second factor this user has none of) or
 * `"authenticated"`.
 */
export type SignInStage = "credentials" | SignInStep["status"];

/** What {@link useSignIn} answers. Every call answers null when the client refused, the error then in `error`. */
export interface SignInState {
  step: SignInStage;
  /** Whether a call is under way: disable the form's button. */
  pending: boolean;
  /** The last refusal (40100 wrong credentials, 40103 wrong code, 42900 throttled, …), cleared by the next call. */
  error: AuthClientError | null;
  /** After `setupTotp` of an enrolment: the secret to show as a QR code (`otpauthUrl`) and to type. */
  totpSetup: TotpSetup | null;
  /** After `enableTotp` of an enrolment: the ten recovery codes, to show this once. */
  recoveryCodes: string[] | null;
  /** Signs in with a username and password (`client.login`). */
  signIn(input: LoginInput): Outcome<SignInStep>;
  /** Signs in with a passkey (`client.passkeys.signIn`), which may also answer `totp_required`. */
  signInWithPasskey(options?: { username?: string }): Outcome<SignInStep>;
  /** Completes a `totp_required` step with a 6-digit code; a wrong one (40103) may be tried again. */
  verifyTotp(code: string): Outcome<SignedIn>;
  /**
   * Completes a `totp_required` step with a recovery code, as typed (the client's `useRecoveryCode`,
   * renamed so that no hook linter takes it for a hook).
   */
  verifyRecoveryCode(recoveryCode: string): Outcome<SignedIn>;
  /** Starts enrolling TOTP in an `enrolment_required` step: fills `totpSetup`. */
  setupTotp(): Outcome<TotpSetup>;
  /** Turns the enrolled TOTP on with a code from it and completes the sign-in: fills `recoveryCodes`. */
  enableTotp(code: string): Outcome<SignedIn & { recoveryCodes: string[] }>;
  /** Registers a passkey in an `enrolment_required` step, where the server offers it, and completes the sign-in. */
  registerPasskey(label: string): Outcome<SignedIn & { passkey: PasskeyInfo }>;
  /** Back to `"credentials"`, forgetting the step, its error, secret and codes. */
  reset(): void;
}

/**
 * The state of a sign-in form, step by step: the password (or a passkey), then the 40102 second
 * factor or the 40105 enrolment, as `client.login` answers them. The temporary token of a step
 * stays inside the client's step object, never in React state. A wrong code (40103) keeps the
 * step; a void one (40100: expired, or too many wrong codes) goes back to `"credentials"` with the
 * error kept, as the sign-in starts over. Once `"authenticated"`, {@link useSession} says
 * `signedIn` too.
 *
 * @example
 * ```tsx
 * function SignIn() {
 *   const signIn = useSignIn();
 *   const [code, setCode] = useState("");
 *   if (signIn.step === "totp_required")
 *     return (
 *       <form onSubmit={(event) => { event.preventDefault(); void signIn.verifyTotp(code); }}>
 *         <input value={code} onChange={(event) => setCode(event.target.value)} autoComplete="one-time-code" />
 *         {signIn.error?.code === 40103 && <p role="alert">Wrong code</p>}
 *       </form>
 *     );
 *   return <PasswordForm pending={signIn.pending} onSubmit={(input) => signIn.signIn(input)} />;
 * }
 * ```
 */
export function useSignIn(): SignInState {
  const client = useAuthClient();
  const { pending, error, setError, run } = useTracked();
  const [current, setCurrentState] = useState<SignInStep | null>(null);
  /** The step as the last call left it, for a call made before React renders it (in the same handler). */
  const latest = useRef<SignInStep | null>(null);
  const setCurrent = useCallback((step: SignInStep | null) => {
    latest.current = step;
    setCurrentState(step);
  }, []);
  const [totpSetup, setTotpSetup] = useState<TotpSetup | null>(null);
  const [recoveryCodes, setRecoveryCodes] = useState<string[] | null>(null);

  const begin = useCallback(
    async (first: () => Promise<SignInStep>) => {
      setTotpSetup(null);
      setRecoveryCodes(null);
      const step = await run(first);
      setCurrent(step);
      return step;
    },
    [run, setCurrent],
  );

  /** Runs `work` on the step of `status`; a void step (40100) sends the form back to the start. */
  const onStep = useCallback(
    async <S extends SignInStep["status"], T>(status: S, work: (step: Extract<SignInStep, { status: S }>) => Promise<T>) => {
      const step = latest.current;
      if (step?.status !== status) throw new Error(`No ${status} step: call signIn first`);
      return run(
        () => work(step as Extract<SignInStep, { status: S }>),
        (refusal) => {
          if (refusal.code === voidStepCode && latest.current === step) setCurrent(null);
        },
      );
    },
    [run, setCurrent],
  );

  return {
    step: current?.status ?? "credentials",
    pending,
    error,
    totpSetup,
    recoveryCodes,
    signIn: (input) => begin(() => client.login(input)),
    signInWithPasskey: (options) => begin(() => client.passkeys.signIn(options)),
    verifyTotp: (code) => completing(onStep("totp_required", (step) => step.verifyTotp(code))),
    verifyRecoveryCode: (code) =>
      // biome-ignore lint/correctness/useHookAtTopLevel: the client's method, not a hook.
      completing(onStep("totp_required", (step) => step.useRecoveryCode(code))),
    setupTotp: async () => {
      const setup = await onStep("enrolment_required", (step) => step.setupTotp());
      if (setup) setTotpSetup(setup);
      return setup;
    },
    enableTotp: async (code) => {
      const signedIn = await completing(onStep("enrolment_required", (step) => step.enableTotp(code)));
      if (signedIn) setRecoveryCodes(signedIn.recoveryCodes);
      return signedIn;
    },
    registerPasskey: (label) => completing(onStep("enrolment_required", (step) => step.registerPasskey({ label }))),
    reset() {
      setCurrent(null);
      setError(null);
      setTotpSetup(null);
      setRecoveryCodes(null);
    },
  };

  async function completing<T extends SignedIn>(outcome: Outcome<T>): Outcome<T> {
    const signedIn = await outcome;
    if (signedIn) setCurrent(signedIn);
    return signedIn;
  }
}
