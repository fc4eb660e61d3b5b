import { type AccountClient, createAccountClient } from "./account.js";
import { type ApiKeysClient, createApiKeysClient } from "./api-keys.js";
import { type StatusMode, createAppFetch } from "./app-fetch.js";
import { cookieModeTokenStore } from "./cookie-mode.js";
import { type EmailClient, createEmailClient } from "./email.js";
import { type EmailSignInClient, createEmailSignInClient } from "./email-sign-in.js";
import { type AuthClientEventMap, type AuthClientEventName, createClientEvents } from "./events.js";
import { type ImpersonationClient, createImpersonationClient } from "./impersonation.js";
import { type OAuthClient, createOAuthClient } from "./oauth.js";
import { type OrganizationsClient, createOrganizationsClient } from "./orgs.js";
import {
  type PasskeyCeremonies,
  type PasskeyClient,
  browserPasskeyCeremonies,
  createPasskeyClient,
  registrationRunner,
  signUpWithPasskey,
} from "./passkeys.js";
import { type Reauthenticate, choosingPasskey } from "./reauthentication.js";
import { type ServiceAccountsClient, createServiceAccountsClient } from "./service-accounts.js";
import { createSession } from "./session.js";
import { type SessionsClient, createSessionsClient } from "./sessions.js";
import { type EnrolmentStep, type SignInStep, type SignedIn, signInStep } from "./sign-in.js";
import { type StepUpClient, createStepUp } from "./step-up.js";
import { type TokenStore, memoryTokenStore } from "./token-store.js";
import { type TotpClient, createTotpClient } from "./totp.js";
import { type FetchFunction, createTransport } from "./transport.js";
import type { AuthUser, ServerSignUpFields, ServerUser } from "./types.js";

/** Options of {@link createAuthClient}. Every one has a default. */
export interface AuthClientOptions {
  /**
   * Where the Portcullis routes are mounted: the server's `http.basePath`. Default `"/api/v1"`,
   * relative to the page; in Node, an absolute URL (`"https://api.example.com/api/v1"`).
   */
  baseUrl?: string;
  /** Where the tokens are kept. Default {@link memoryTokenStore}: gone on reload, out of reach of other pages. */
  store?: TokenStore;
  /**
   * `"cookie"`: cookie mode, for a page served from the API's own origin. The server sets the refresh
   * token in an HttpOnly, SameSite=Strict cookie (`__Host-portcullis_refresh` over TLS) that no
   * script can read, and leaves it out of every answer; the client keeps only the access token and
   * the user, in memory, and after a reload {@link AuthClient.restore} brings the session back with one
   * refresh. Refreshes are serialised across the origin's tabs with Web Locks. `store` cannot be
   * given with it. Default `"store"`: the refresh token in the answers, kept in `store`.
   */
  tokens?: "store" | "cookie";
  /** The `fetch` every request goes through. Default the global `fetch`. */
  fetch?: FetchFunction;
  /**
   * The server's `http.statusMode`. Only `client.fetch` needs it: under `"always-200"` it reads
   * the body of every JSON answer with status 200 for a 40101. The client's own routes always
   * read the envelope's `code`. Default `"standard"`.
   */
  statusMode?: StatusMode;
  /**
   * Refresh before a request when the access token expires within this many seconds. Default 0:
   * never ahead of time; a token is refreshed when the server refuses it (40101), which costs one
   * extra round trip per access-token lifetime and nothing when the user is idle.
   */
  refreshAheadSeconds?: number;
  /**
   * Asked for the password (or a TOTP code) when the server wants proof that it is still the user
   * (40001 on TOTP setup and enable, passkey registration, ending sessions, changing the address, or an
   * organization's deletion and its members' roles and removal, after a sign-in
   * older than the server's `reauthentication.recentSignIn`); the call is then made once more with it.
   * It may answer `{ passkey: true }` instead (the only way for a passkey-only account, whose
   * request's `reauthenticateWith` lacks `"password"`): the session re-authenticates with a passkey
   * (`stepUp.reauthenticateWithPasskey`) and the call is made once more as it was.
   * Default: none, and those calls reject with the 40001.
   */
  reauthenticate?: Reauthenticate;
  /** The WebAuthn ceremonies. Default `@simplewebauthn/browser`'s `startAuthentication` and `startRegistration`. */
  passkeyCeremonies?: PasskeyCeremonies;
  /** Origins besides the API's to which `client.fetch` sends the access token. Default none. */
  bearerOrigins?: readonly string[];
  /** The client's clock in epoch milliseconds, for `refreshAheadSeconds`. Default `Date.now`. */
  now?: () => number;
  /** Receives what an event listener throws; the client's operation carries on regardless. Default: ignored. */
  onListenerError?: (error: unknown, event: AuthClientEventName) => void;
}

/** What a password login sends: `provider: "directory"` signs in against the directory (LDAP). */
export interface LoginInput {
  username: string;
  password: string;
  /** `"local"` (the server's default) or `"directory"`. */
  provider?: "local" | "directory";
}

/** What a sign-up sends: the new account's name and password, and its address when the user gives one. */
export interface RegisterInput<Server = unknown> {
  username: string;
  password: string;
  /** The server's additional user fields declared `signUp: true` (typed with `createAuthClient<typeof auth>()`). */
  fields?: ServerSignUpFields<Server>;
  /**
   * The account's address, stored unverified; where the server has `email` configured, a
   * verification link goes to it ({@link EmailClient.verifyEmail} completes it).
   */
  email?: string;
}

/** What a sign-up with a passkey sends: the new account's name, and its address and the passkey's label when given. */
export interface PasskeySignUpInput<Server = unknown> {
  username: string;
  /** The account's address, stored unverified, as {@link RegisterInput.email}. */
  email?: string;
  /** What the user calls the passkey, 1 to 64 characters; the server's default is `"Passkey"`. */
  label?: string;
  /** The server's additional user fields declared `signUp: true` (typed with `createAuthClient<typeof auth>()`). */
  fields?: ServerSignUpFields<Server>;
}

/**
 * A client of the Portcullis routes, from {@link createAuthClient}. `Server` is the type of the
 * server's auth instance (`typeof auth`), which types the user objects with its additional fields;
 * `unknown` by default: the contract's user.
 */
export interface AuthClient<Server = unknown> {
  /**
   * Signs in with a username and password (`POST /auth/login`), against local accounts or, with
   * `provider: "directory"`, the directory. Answers `authenticated` (tokens stored, `signedIn`
   * emitted), `totp_required`, whose `verifyTotp` and `useRecoveryCode` finish the sign-in, or,
   * where the server requires a second factor this user does not have (40105),
   * `enrolment_required`, whose `setupTotp` and `enableTotp`, or `registerPasskey`, enrol one and
   * finish the sign-in.
   *
   * @throws {AuthClientError} 40100 wrong credentials (one answer for every reason), 40300 disabled (or
   * the account's second factor is a passkey: sign in with it), 42900 throttled.
   * @example
   * ```ts
   * const step = await client.login({ username, password });
   * if (step.status === "totp_required") await step.verifyTotp(code);
   * if (step.status === "enrolment_required") {
   *   showQrCode((await step.setupTotp()).otpauthUrl);
   *   const { recoveryCodes } = await step.enableTotp(await askForCode());
   * }
   * ```
   */
  login(input: LoginInput): Promise<SignInStep>;
  /**
   * Creates an account and signs in to it (`POST /auth/register`), where the server has sign-up
   * on (`signUp.enabled`): the tokens are stored and `signedIn` emitted. The account gets the
   * server's default roles, never roles of the client's choosing (SU-1). An `email` is stored
   * unverified, and a verification link goes to it when the server has email configured. Where
   * the server requires a second factor of the new account, the answer is `enrolment_required`
   * (see {@link AuthClient.login}).
   *
   * @throws {AuthClientError} 40002 an `email` that is no address, 40400 sign-up is off, 40900 the
   * username is taken, 42200 the username or the password is refused (policy, breached), 42900 too
   * many sign-ups from this address.
   * @example
   * ```ts
   * const { user } = await client.register({ username, password });
   * ```
   */
  register(input: RegisterInput<Server>): Promise<SignedIn<ServerUser<Server>> | EnrolmentStep>;
  /**
   * Creates an account whose way in is a passkey, with no password, and signs in to it
   * (`POST /auth/register/public-key/begin`, the browser's prompt to create a passkey, then
   * `POST /auth/register/public-key/finish`), where the server has sign-up on and passkeys
   * configured: the tokens are stored and `signedIn` emitted. As {@link AuthClient.register}: the
   * server's default roles, an `email` stored unverified, and `enrolment_required` where the server
   * requires a second factor and the passkey did not verify the user. The account then signs in
   * with {@link PasskeyClient.signIn}, with or without its username.
   *
   * @throws {AuthClientError} 40002 an `email` that is no address, 40400 sign-up or passkeys off,
   * 40900 the username is taken (before the prompt) or the passkey is already registered, 42200 the
   * username or label is refused, 42900 too many sign-ups from this address, `passkey_ceremony` when
   * the prompt was cancelled or failed (no account is made), 40100 the passkey was not accepted.
   * @example
   * ```ts
   * const step = await client.registerWithPasskey({ username: "newcomer", email: "n@example.com" });
   * if (step.status === "authenticated") showAccount(step.user);
   * ```
   */
  registerWithPasskey(input: PasskeySignUpInput<Server>): Promise<SignedIn<ServerUser<Server>> | EnrolmentStep>;
  /**
   * Renews the tokens now (`POST /auth/refresh`), joining a refresh already under way. A refusal
   * signs out (`signedOut`, reason `session_ended`).
   *
   * @throws {AuthClientError} `not_signed_in`, or the refresh's error.
   * @example
   * ```ts
   * const user = await client.refresh();
   * ```
   */
  refresh(): Promise<ServerUser<Server>>;
  /**
   * Brings back the session after a reload, in cookie mode: one refresh with the refresh cookie,
   * however many calls are under way at once; `signedIn` is emitted when a session comes back.
   * Resolves with the user, or null when this browser has no session (no cookie, or one the server
   * refused). Call it as the page starts. Outside cookie mode, or with tokens already held, it sends
   * nothing and resolves with the user held (or null).
   *
   * @throws {AuthClientError} `network` when the server could not be reached; 42900 or 50300.
   * @example
   * ```ts
   * const client = createAuthClient({ tokens: "cookie" });
   * const user = await client.restore();
   * if (user === null) showSignInForm();
   * ```
   */
  restore(): Promise<ServerUser<Server> | null>;
  /**
   * Revokes the session on the server (`POST /auth/logout`) and forgets the tokens. The tokens are
   * forgotten and `signedOut` (reason `logout`) emitted even when the server cannot be reached;
   * the promise then rejects, since the session may still be alive there.
   *
   * @throws {AuthClientError} when the server could not revoke the session.
   * @example
   * ```ts
   * await client.logout();
   * ```
   */
  logout(): Promise<void>;
  /**
   * The signed-in user, from the server (`GET /auth/me`); kept beside the tokens.
   *
   * @throws {AuthClientError} `not_signed_in`, or 40101 when the session has ended.
   * @example
   * ```ts
   * const { username, roles } = await client.me();
   * ```
   */
  me(): Promise<ServerUser<Server>>;
  /**
   * The user as the last sign-in, refresh or `me()` saw it, from the token store: no request.
   *
   * @example
   * ```ts
   * const user = await client.currentUser(); // null when signed out
   * ```
   */
  currentUser(): Promise<ServerUser<Server> | null>;
  /**
   * The stored access token, for a transport `client.fetch` does not cover (a WebSocket's first
   * message, say). No request: it may have expired.
   *
   * @example
   * ```ts
   * socket.send(JSON.stringify({ type: "auth", token: await client.accessToken() }));
   * ```
   */
  accessToken(): Promise<string | null>;
  /**
   * `fetch` for the app's own routes: adds `Authorization: Bearer …` to requests for the API's
   * origin (never another, unless listed in `bearerOrigins`) and, on a 40101, refreshes once,
   * shared with every concurrent request, and retries once. On a 40104 (a route that asks for a
   * more recent sign-in or a second factor: `requireAuth`'s `maxAge`, `secondFactor`, `amr`) it
   * emits `stepUpRequired` and, once a listener has re-authenticated, sends the request once
   * more; without a listener, or when it cancels, the 40104 is the answer. Answers the
   * `Response` as it is.
   *
   * @throws {AuthClientError} when a needed refresh failed (a refusal has signed out), or the request got no answer.
   * @example
   * ```ts
   * const response = await client.fetch("/api/v1/things", { method: "GET" });
   * ```
   */
  fetch: FetchFunction;
  /**
   * Calls `listener` on every `signedIn`, `signedOut` or `stepUpRequired`; returns a function that unsubscribes.
   *
   * @example
   * ```ts
   * client.on("signedOut", ({ reason }) => showSignIn(reason === "session_ended" ? "Your session has ended." : ""));
   * client.on("stepUpRequired", async (step) => {
   *   const proof = await askForPassword(step.required); // null when the user gives up
   *   if (proof) await step.reauthenticate(proof);
   *   else step.cancel();
   * });
   * ```
   */
  on<E extends AuthClientEventName>(event: E, listener: (detail: AuthClientEventMap[E]) => void): () => void;
  /** Re-authenticating the session: what a `stepUpRequired` listener calls, or the app before a sensitive form (STUP-2). */
  stepUp: StepUpClient;
  /** The user's own account: the password change and the user's own additional fields. */
  account: AccountClient<Server>;
  /** The user's sessions: list them, end one, the others, or all. */
  sessions: SessionsClient;
  /** TOTP enrolment and management. */
  totp: TotpClient;
  /** Passkey sign-in, registration and management. */
  passkeys: PasskeyClient;
  /** Sign-in with OAuth 2.0 / OpenID Connect providers. */
  oauth: OAuthClient;
  /** Password reset by email, and the account's address: change it, verify it with its link. */
  email: EmailClient;
  /** Sign-in with a one-time code or link sent by email, where the server has `emailSignIn.enabled`. */
  emailSignIn: EmailSignInClient;
  /**
   * The user's organizations (`/auth/orgs…`, where the server has `organizations.enabled`): create
   * and manage them, their members, invitations and domains, and switch the session's active one.
   */
  orgs: OrganizationsClient;
  /**
   * The user's API keys (`/auth/api-keys…`, where the server has `apiKeys.enabled`): make one (its
   * secret shown once), list, rename and revoke them.
   */
  apiKeys: ApiKeysClient;
  /**
   * Service accounts, for administrators (`/auth/admin/service-accounts…`, where the server has
   * `serviceAccounts.enabled`): make and manage them, add and remove their client secrets (shown
   * once) and public keys.
   */
  serviceAccounts: ServiceAccountsClient;
  /**
   * Impersonation (where the server has `impersonation.enabled`): an administrator begins a session
   * as a user, answered without touching this client's own session; a client holding such a session ends it.
   */
  impersonation: ImpersonationClient;
}

/**
 * Makes a client of the Portcullis routes for a browser or Node: sign-in steps, tokens kept in a
 * pluggable store, one refresh however many requests meet an expired token, passkeys and the
 * OAuth callback relay. Its only dependency is `@simplewebauthn/browser`.
 *
 * @example
 * ```ts
 * import { createAuthClient } from "@portcullis/client";
 *
 * const client = createAuthClient({ baseUrl: "/api/v1" });
 * client.on("signedOut", () => showSignInForm());
 * const step = await client.login({ username, password });
 * if (step.status === "totp_required") await step.verifyTotp(code);
 * const things = await (await client.fetch("/api/v1/things")).json();
 * // With the server's type, its additional user fields are typed: (await client.me()).company
 * const typed = createAuthClient<typeof auth>({ baseUrl: "/api/v1" });
 * ```
 */
export function createAuthClient<Server = unknown>(options: AuthClientOptions = {}): AuthClient<Server> {
  const tokens = options.tokens ?? "store";
  if (tokens !== "store" && tokens !== "cookie")
    throw new TypeError(`tokens must be "store" or "cookie"; got ${JSON.stringify(tokens)}`);
  if (tokens === "cookie" && options.store !== undefined) {
    throw new TypeError('tokens: "cookie" keeps the access token in memory and the refresh token in a cookie: it takes no store');
  }
  const transport = createTransport(
    options.baseUrl ?? "/api/v1",
    options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    tokens === "cookie" ? "cookie" : "body",
  );
  const events = createClientEvents(options.onListenerError);
  const session = createSession({
    transport,
    store: options.store ?? (tokens === "cookie" ? cookieModeTokenStore() : memoryTokenStore()),
    events,
    now: options.now ?? Date.now,
    refreshAheadSeconds: options.refreshAheadSeconds ?? 0,
  });
  const ceremonies = options.passkeyCeremonies ?? browserPasskeyCeremonies;
  const runRegistration = registrationRunner(ceremonies);
  const stepUp = createStepUp(session, events, ceremonies);
  const reauthenticate =
    options.reauthenticate && choosingPasskey(options.reauthenticate, () => stepUp.client.reauthenticateWithPasskey());
  const client: AuthClient = {
    async login({ username, password, provider }) {
      // JSON leaves an undefined provider or device token out: the server's defaults.
      const body = { username, password, provider, deviceToken: session.deviceToken() };
      return signInStep(transport, session, await transport.send({ method: "POST", path: "/auth/login", body }), runRegistration);
    },
    async register({ username, password, email, fields }) {
      // JSON leaves an undefined email out. A new account has no TOTP: the answer is never 40102.
      const answer = await transport.send({
        method: "POST",
        path: "/auth/register",
        body: { username, password, email, fields },
      });
      return (await signInStep(transport, session, answer, runRegistration)) as SignedIn | EnrolmentStep;
    },
    async registerWithPasskey({ username, email, label, fields }) {
      const answer = await signUpWithPasskey(transport, runRegistration, { username, email, label, fields });
      // As register: a new account has no TOTP, so the answer is never 40102.
      return (await signInStep(transport, session, answer, runRegistration)) as SignedIn | EnrolmentStep;
    },
    refresh: async () => (await session.refresh()).user,
    restore: () => session.restore(),
    async logout() {
      const failure = await session.logout("logout");
      if (failure) throw failure;
    },
    async me() {
      const user = await session.call<AuthUser>({ method: "GET", path: "/auth/me" });
      await session.updateUser(user);
      return user;
    },
    currentUser: async () => (await session.tokens())?.user ?? null,
    accessToken: async () => (await session.tokens())?.accessToken ?? null,
    fetch: createAppFetch({
      transport,
      session,
      statusMode: options.statusMode ?? "standard",
      bearerOrigins: options.bearerOrigins ?? [],
      stepUp,
    }),
    on: (event, listener) => events.on(event, listener),
    stepUp: stepUp.client,
    account: createAccountClient(session),
    sessions: createSessionsClient(session, reauthenticate),
    totp: createTotpClient(session, reauthenticate),
    passkeys: createPasskeyClient(transport, session, ceremonies, reauthenticate),
    oauth: createOAuthClient(transport, session, runRegistration),
    email: createEmailClient(transport, session, reauthenticate),
    emailSignIn: createEmailSignInClient(transport, session, runRegistration),
    orgs: createOrganizationsClient(session, stepUp, reauthenticate),
    apiKeys: createApiKeysClient(session, reauthenticate),
    serviceAccounts: createServiceAccountsClient(session, reauthenticate),
    impersonation: createImpersonationClient(session, reauthenticate),
  };
  // The server's type changes only the types of the user objects it answers: the same client, typed.
  return client as AuthClient<Server>;
}
