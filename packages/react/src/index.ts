/**
 * React hooks over `@portcullis/client`: {@link AuthProvider} hands the page's client to
 * {@link useSession}, {@link useSignIn} (the 40102 and 40105 steps), {@link usePasskeys},
 * {@link useSessions} and {@link useStepUp} (the state a step-up dialog renders from). Rendering on
 * the server touches no window, storage or network: the session reads as `"loading"` there.
 *
 * @packageDocumentation
 * @module @portcullis/react
 */
export { type PasskeysState, usePasskeys } from "./passkeys.js";
export { AuthProvider, type AuthProviderProps, useAuthClient } from "./provider.js";
export { type SessionState, useSession } from "./session.js";
export { type SessionsState, useSessions } from "./sessions.js";
export { type SignInStage, type SignInState, useSignIn } from "./sign-in.js";
export { type StepUpState, useStepUp } from "./step-up.js";
export type { Outcome } from "./tracked.js";
