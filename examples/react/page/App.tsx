import { useAuthClient, usePasskeys, useSession, useSessions, useSignIn, useStepUp } from "@portcullis/react";
import { type FormEvent, useState } from "react";

/** The values of a submitted form, by field name. */
function fieldsOf(event: FormEvent<HTMLFormElement>): Record<string, string> {
  event.preventDefault();
  return Object.fromEntries([...new FormData(event.currentTarget)].map(([name, value]) => [name, String(value)]));
}

/** The password form, then the 40102 step's code, from one `useSignIn`. */
function SignIn() {
  const signIn = useSignIn();
  const error = signIn.error && (
    <p role="alert" className="error">
      {signIn.error.message} ({signIn.error.code})
    </p>
  );
  if (signIn.step === "totp_required")
    return (
      <form id="totp-form" onSubmit={(event) => void signIn.verifyTotp(fieldsOf(event).code ?? "")}>
        <h2>Second factor</h2>
        <label>
          Code from your authenticator app <input name="code" autoComplete="one-time-code" inputMode="numeric" required />
        </label>
        <button type="submit" disabled={signIn.pending}>
          Verify
        </button>
        <button type="button" onClick={signIn.reset}>
          Start over
        </button>
        {error}
      </form>
    );
  return (
    <form id="sign-in-form" onSubmit={(event) => void signIn.signIn(fieldsOf(event) as { username: string; password: string })}>
      <h2>Sign in</h2>
      <label>
        Username <input name="username" autoComplete="username" required />
      </label>
      <label>
        Password <input name="password" type="password" autoComplete="current-password" required />
      </label>
      <button type="submit" disabled={signIn.pending}>
        Sign in
      </button>
      <button type="button" onClick={() => void signIn.signInWithPasskey()}>
        Sign in with a passkey
      </button>
      {error}
    </form>
  );
}

/** The user's passkeys, and a form to register one. */
function Passkeys() {
  const { passkeys, loading, pending, error, supported, register, revoke } = usePasskeys();
  return (
    <section id="passkeys" aria-busy={loading}>
      <h2>Passkeys</h2>
      <ul>
        {passkeys.map((passkey) => (
          <li key={passkey.id}>
            {passkey.label}{" "}
            <button type="button" onClick={() => void revoke(passkey.id)}>
              Remove
            </button>
          </li>
        ))}
      </ul>
      {supported && (
        <form id="passkey-register-form" onSubmit={(event) => void register(fieldsOf(event).label ?? "")}>
          <label>
            Label <input name="label" required />
          </label>
          <button type="submit" disabled={pending}>
            Add a passkey
          </button>
        </form>
      )}
      {error && <p role="alert">{error.message}</p>}
    </section>
  );
}

/** The user's sessions, each but this one with a button that ends it. */
function Sessions() {
  const { sessions, loading, error, end } = useSessions();
  return (
    <section id="sessions" aria-busy={loading}>
      <h2>Sessions</h2>
      <ul>
        {sessions.map((session) => (
          <li key={session.id} data-current={session.current}>
            {session.userAgent ?? "Unknown device"}{" "}
            {session.current ? (
              "(this device)"
            ) : (
              <button type="button" onClick={() => void end(session.id)}>
                End
              </button>
            )}
          </li>
        ))}
      </ul>
      {error && <p role="alert">{error.message}</p>}
    </section>
  );
}

/** A route of the example's server behind `requireAuth(auth, { maxAge: "1m" })`: older sign-ins step up first. */
function Payouts() {
  const client = useAuthClient();
  const [result, setResult] = useState("");
  const load = async () => {
    const answer = (await (await client.fetch("/api/v1/payouts")).json()) as { code: number; data?: { total: number } };
    setResult(answer.code === 0 ? `Payouts total ${answer.data?.total}` : `Refused (${answer.code})`);
  };
  return (
    <section id="payouts">
      <h2>Payouts</h2>
      <button type="button" onClick={() => void load()}>
        Load payouts
      </button>
      <output id="payouts-result">{result}</output>
    </section>
  );
}

/** The step-up dialog: shown while a request waits on a 40104, from `useStepUp`. */
function StepUpDialog() {
  const stepUp = useStepUp();
  if (!stepUp) return null;
  const { maxAge, amr } = stepUp.required;
  return (
    <dialog id="step-up" open aria-labelledby="step-up-title">
      <form onSubmit={(event) => void stepUp.reauthenticate(fieldsOf(event))}>
        <h2 id="step-up-title">Confirm it is you</h2>
        <p>
          {maxAge !== undefined && `This needs a sign-in within the last ${maxAge} seconds. `}
          {amr && `This needs ${amr.join(", ")}.`}
        </p>
        <label>
          Password <input name="password" type="password" autoComplete="current-password" required />
        </label>
        <label>
          Code, if your account has TOTP on <input name="totpCode" autoComplete="one-time-code" inputMode="numeric" />
        </label>
        <button type="submit" disabled={stepUp.pending}>
          Confirm
        </button>
        <button type="button" onClick={() => void stepUp.reauthenticateWithPasskey()}>
          Use a passkey
        </button>
        <button type="button" onClick={stepUp.cancel}>
          Cancel
        </button>
        {stepUp.error && <p role="alert">{stepUp.error.message}</p>}
      </form>
    </dialog>
  );
}

/** The page: the sign-in form, or the signed-in user with passkeys, sessions, payouts and the step-up dialog. */
export function App() {
  const session = useSession();
  const client = useAuthClient();
  if (session.status === "loading") return <p id="loading">Loading…</p>;
  if (session.status === "signedOut")
    return (
      <main>
        {session.reason === "session_ended" && <p role="status">Your session has ended.</p>}
        <SignIn />
      </main>
    );
  return (
    <main>
      <p id="signed-in-as">
        Signed in as <strong>{session.user.username}</strong>{" "}
        <button type="button" onClick={() => void client.logout().catch(() => {})}>
          Sign out
        </button>
      </p>
      <Passkeys />
      <Sessions />
      <Payouts />
      <StepUpDialog />
    </main>
  );
}
