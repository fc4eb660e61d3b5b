import type { PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";
import type { ClientEvents } from "./events.js";
import { type PasskeyCeremonies, runCeremony } from "./passkeys.js";
import type { Session } from "./session.js";
import { ceremonyHeader } from "./sign-in.js";
import type { AuthUser } from "./types.js";

/** The business code of a route that needs a more recent sign-in or more factors (STUP-2). */
export const stepUpRequiredCode = 40104;

/**
 * What a route of the app asked for and the session lacks (the `data.required` of a 40104):
 * `maxAge`, the route's limit in seconds on the age of the sign-in, when it is older; `amr`, the
 * RFC 8176 values it lacks (`mfa` for a second factor, `hwk` for a device-bound key, …).
 */
export interface StepUpRequirement {
  maxAge?: number;
  amr?: string[];
}

/** What a password re-authentication sends: the password, and a TOTP code when TOTP is on. */
export interface ReauthenticationInput {
  password?: string;
  totpCode?: string;
}

/**
 * The detail of a `stepUpRequired` event: what is required, and the ways to satisfy it. The
 * request that met the 40104 waits until a listener re-authenticates through one of them (the
 * request is then sent once more) or calls `cancel` (it answers the 40104 as it came). A failed
 * proof (a wrong password) rejects, and the request keeps waiting for another.
 */
export interface StepUpRequest {
  required: StepUpRequirement;
  /** Re-authenticates with the password (and a TOTP code): as {@link StepUpClient.reauthenticate}. */
  reauthenticate(proof: ReauthenticationInput): Promise<AuthUser>;
  /** Re-authenticates with a passkey: as {@link StepUpClient.reauthenticateWithPasskey}. */
  reauthenticateWithPasskey(): Promise<AuthUser>;
  /** Gives up: the waiting requests answer the 40104. */
  cancel(): void;
}

/** Re-authenticating the signed-in session (`/auth/reauthenticate…`; STUP-2). */
export interface StepUpClient {
  /**
   * Re-authenticates the session (`POST /auth/reauthenticate`) with every factor of the account:
   * the password, and a TOTP code when TOTP is on. The server ends the session and answers the
   * tokens of a new one whose sign-in is now (ASVS 7.2.4): both the access and the refresh token
   * are stored, as a sign-in's are (without `signedIn`), and the requests waiting on a 40104 are
   * sent again with the new access token.
   *
   * @throws {AuthClientError} 40001 a factor missing, 40100 wrong password, 40103 wrong code, 42900 throttled.
   * @example
   * ```ts
   * await client.stepUp.reauthenticate({ password, totpCode });
   * ```
   */
  reauthenticate(proof: ReauthenticationInput): Promise<AuthUser>;
  /**
   * Re-authenticates the session with one of the user's passkeys: begin, the browser's prompt,
   * finish (`/auth/reauthenticate/public-key/…`). User verification is asked when TOTP is on. The
   * new session's tokens are stored, as with {@link StepUpClient.reauthenticate}.
   *
   * @throws {AuthClientError} `passkey_ceremony` when the prompt was cancelled or failed, 40100 the passkey was not accepted, 40900 no passkey.
   * @example
   * ```ts
   * await client.stepUp.reauthenticateWithPasskey();
   * ```
   */
  reauthenticateWithPasskey(): Promise<AuthUser>;
}

/** What {@link createStepUp} gives the client: its public part, and the wait of a request that met a 40104. */
export interface StepUp {
  client: StepUpClient;
  /**
   * Emits `stepUpRequired` and resolves true once a listener re-authenticated, false when it
   * cancelled or there is no listener. Concurrent 40104s share one event and one outcome.
   */
  satisfy(required: StepUpRequirement): Promise<boolean>;
}

/**
 * Makes the step-up of a client: its re-authentication calls, and the wait a request that met a
 * 40104 goes through (STUP-2).
 *
 * @example
 * ```ts
 * const stepUp = createStepUp(session, events, browserPasskeyCeremonies);
 * if (await stepUp.satisfy({ maxAge: 300 })) sendAgain();
 * ```
 */
export function createStepUp(session: Session, events: ClientEvents, ceremonies: PasskeyCeremonies): StepUp {
  let pending: { promise: Promise<boolean>; settle: (proven: boolean) => void } | null = null;
  const settle = (proven: boolean) => {
    pending?.settle(proven);
    pending = null;
  };

  /** Sends a re-authentication, keeps the new session's tokens, and lets the waiting requests go. */
  async function renewed(request: Parameters<Session["reauthenticate"]>[0]): Promise<AuthUser> {
    const user = await session.reauthenticate(request);
    settle(true);
    return user;
  }

  const client: StepUpClient = {
    async reauthenticate({ password, totpCode }) {
      return renewed({ method: "POST", path: "/auth/reauthenticate", body: { password, totpCode } });
    },
    async reauthenticateWithPasskey() {
      const begun = await session.call<{ ceremonyId: string; options: PublicKeyCredentialRequestOptionsJSON }>({
        method: "POST",
        path: "/auth/reauthenticate/public-key/begin",
        body: {},
      });
      const assertion = await runCeremony(() => ceremonies.startAuthentication({ optionsJSON: begun.options }));
      return renewed({
        method: "POST",
        path: "/auth/reauthenticate/public-key/finish",
        body: assertion,
        headers: { [ceremonyHeader]: begun.ceremonyId },
      });
    },
  };

  return {
    client,
    satisfy(required) {
      if (pending) return pending.promise;
      let resolve: (proven: boolean) => void = () => {};
      const promise = new Promise<boolean>((done) => {
        resolve = done;
      });
      pending = { promise, settle: resolve };
      const request: StepUpRequest = {
        required,
        reauthenticate: client.reauthenticate,
        reauthenticateWithPasskey: client.reauthenticateWithPasskey,
        cancel: () => settle(false),
      };
      if (events.emit("stepUpRequired", request) === 0) settle(false);
      return promise;
    },
  };
}

/** The `data.required` of a 40104 envelope, or an empty requirement when it says none. */
export function requirementOf(data: unknown): StepUpRequirement {
  const required = (data as { required?: unknown } | null | undefined)?.required;
  if (required === null || typeof required !== "object") return {};
  const { maxAge, amr } = required as { maxAge?: unknown; amr?: unknown };
  const requirement: StepUpRequirement = {};
  if (typeof maxAge === "number") requirement.maxAge = maxAge;
  if (Array.isArray(amr)) requirement.amr = amr.filter((value): value is string => typeof value === "string");
  return requirement;
}
