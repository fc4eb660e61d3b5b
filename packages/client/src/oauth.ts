import type { Session } from "./session.js";
import { type RunRegistration, type SignInStep, signInStep } from "./sign-in.js";
import type { KeyValueStorage } from "./token-store.js";
import { type EnvelopeAnswer, type Transport, dataOf } from "./transport.js";
import type { AuthUser, OAuthProviderInfo } from "./types.js";

/**
 * A sign-in step after a provider, or the end of a re-authentication through it
 * (`reauthenticated`: the tokens of the new session that replaced the signed-in one are stored), with the path the flow was
 * begun for (`start`'s or `reauthenticate`'s `returnPath`, or `/`).
 */
export type OAuthSignInStep = (SignInStep | { status: "reauthenticated"; user: AuthUser }) & { returnPath: string };

/** Options of {@link OAuthClient.reauthenticate}. */
export interface OAuthReauthenticateOptions extends OAuthStartOptions {
  /** A current code of the user's authenticator: needed when TOTP is on, unless the provider is trusted for the second factor. */
  totpCode?: string;
}

/** Options of {@link OAuthClient.start}. */
export interface OAuthStartOptions {
  /** Where the app goes after the sign-in: a path of this app (`/account?tab=keys`). Default `/`. */
  returnPath?: string;
  /** Send the browser to the provider. Default true where there is a `location` (a browser); never in Node. */
  navigate?: boolean;
}

/** Options of {@link OAuthClient.finish}. */
export interface OAuthFinishOptions {
  /** The provider's name. Default: the one `start` was last called with in this tab (kept in `sessionStorage`). */
  provider?: string;
  /** The URL the provider sent the browser back to. Default `location.href`; required in Node. */
  url?: string | URL;
  /**
   * Replace the address bar's URL with the return path (or, on failure, the page's path without
   * its query), so that no code or state stays in the history. Default true in a browser.
   */
  replaceUrl?: boolean;
}

/** Sign-in with an OAuth 2.0 / OpenID Connect provider: the `/auth/oauth/*` routes. */
export interface OAuthClient {
  /**
   * The providers the server offers (`GET /auth/oauth/providers`).
   *
   * @example
   * ```ts
   * for (const { name, displayName } of await client.oauth.providers()) addButton(name, `Sign in with ${displayName}`);
   * ```
   */
  providers(): Promise<OAuthProviderInfo[]>;
  /**
   * Begins a sign-in (`GET /auth/oauth/<provider>/authorize`, with the browser's cookies so the
   * server can set the HttpOnly cookie that binds the flow to this browser, `__Host-portcullis_oauth`
   * over TLS), then sends the browser to the provider. Answers the provider's URL too, for Node and tests.
   *
   * @throws {AuthClientError} 40002 a return path that is not a path of this app, 40400 unknown provider,
   * 42900 too many sign-ins begun from this address, 50300 provider unreachable.
   * @example
   * ```ts
   * await client.oauth.start("corp", { returnPath: "/account" }); // the browser leaves for the provider
   * ```
   */
  start(provider: string, options?: OAuthStartOptions): Promise<{ authUrl: string }>;
  /**
   * Begins re-authenticating the signed-in session through a provider linked to the user
   * (`POST /auth/oauth/<provider>/reauthenticate`, with the access token and the browser's
   * cookies; STUP-5), for a user who signs in there and is asked to step up (40104) or to prove a
   * recent sign-in; then sends the browser to the provider, which is asked to authenticate the
   * person again. On the way back, {@link OAuthClient.finish} answers `reauthenticated` and keeps
   * the tokens of the new session the server began in place of this one (ASVS 7.2.4), the access
   * and the refresh token, as a sign-in's: send the refused request again then.
   *
   * @throws {AuthClientError} `not_signed_in`; 40001 a TOTP code is needed; 40103 wrong code;
   * 40400 unknown or plain OAuth 2.0 provider; 40900 no account of this provider is linked.
   * @example
   * ```ts
   * client.on("stepUpRequired", () => client.oauth.reauthenticate("corp", { returnPath: location.pathname }));
   * ```
   */
  reauthenticate(provider: string, options?: OAuthReauthenticateOptions): Promise<{ authUrl: string }>;
  /**
   * On the page at the provider's redirect URI: relays its query (`code`, `state`, `iss`, or
   * `error`) unchanged to `GET /auth/oauth/<provider>/callback` with the browser's cookies, and
   * takes the answer as a sign-in: tokens, or `totp_required`; after {@link OAuthClient.reauthenticate},
   * `reauthenticated`, the new session's tokens stored (without `signedIn`). No token ever appears in a URL.
   *
   * @throws {AuthClientError} 40100 bad, replayed or foreign state (another browser, or the
   * cookie was not sent), or the provider refused; 40300 disabled; 50300 provider unreachable.
   * @throws {TypeError} when the provider or the URL cannot be told.
   * @example
   * ```ts
   * const step = await client.oauth.finish(); // on /oauth/corp/callback?code=…&state=…
   * if (step.status === "totp_required") await step.verifyTotp(code);
   * router.go(step.returnPath);
   * ```
   */
  finish(options?: OAuthFinishOptions): Promise<OAuthSignInStep>;
}

/** The browser globals the OAuth relay uses, when they exist. */
interface BrowserGlobals {
  location?: { href: string; assign(url: string): void };
  history?: { replaceState(data: unknown, unused: string, url?: string): void };
  sessionStorage?: KeyValueStorage;
}

const browser = () => globalThis as BrowserGlobals;

/** Where `start` notes the provider for `finish`, in `sessionStorage`: a name, nothing secret. */
const providerKey = "portcullis.oauth.provider";

/** A path of this app that cannot leave it (OA-8); anything else reads as `/`. */
function sameAppPath(value: unknown): string {
  return typeof value === "string" && /^\/(?![/\\])[^\\\p{Cc}]*$/u.test(value) ? value : "/";
}

function remember(provider: string): void {
  try {
    browser().sessionStorage?.setItem(providerKey, provider);
  } catch {
    // Storage may be disabled (privacy modes); finish() then needs the provider passed.
  }
}

function recall(): string | null {
  try {
    const storage = browser().sessionStorage;
    const provider = storage?.getItem(providerKey) ?? null;
    storage?.removeItem(providerKey);
    return provider;
  } catch {
    return null;
  }
}

/**
 * Makes the {@link OAuthClient} of a session.
 *
 * @example
 * ```ts
 * const oauth = createOAuthClient(transport, session, registrationRunner(browserPasskeyCeremonies));
 * ```
 */
export function createOAuthClient(transport: Transport, session: Session, runRegistration: RunRegistration): OAuthClient {
  const providerPath = (provider: string, route: "authorize" | "callback" | "reauthenticate") =>
    `/auth/oauth/${encodeURIComponent(provider)}/${route}`;
  /** Notes the provider for `finish` and sends the browser to it, unless told not to or outside a browser. */
  const leaveFor = (provider: string, authUrl: string, options: OAuthStartOptions) => {
    remember(provider);
    const location = browser().location;
    if (location && options.navigate !== false) location.assign(authUrl);
    return { authUrl };
  };
  return {
    async providers() {
      return dataOf<OAuthProviderInfo[]>(await transport.send({ method: "GET", path: "/auth/oauth/providers" }));
    },
    async start(provider, options = {}) {
      const query = options.returnPath === undefined ? "" : `?${new URLSearchParams({ redirect: options.returnPath })}`;
      const answer = await transport.send({
        method: "GET",
        path: `${providerPath(provider, "authorize")}${query}`,
        credentials: "include",
      });
      return leaveFor(provider, dataOf<{ authUrl: string }>(answer).authUrl, options);
    },
    async reauthenticate(provider, options = {}) {
      const { authUrl } = await session.call<{ authUrl: string }>({
        method: "POST",
        path: providerPath(provider, "reauthenticate"),
        body: { redirect: options.returnPath, totpCode: options.totpCode },
        credentials: "include",
      });
      return leaveFor(provider, authUrl, options);
    },
    async finish(options = {}) {
      const href = options.url ?? browser().location?.href;
      if (href === undefined) throw new TypeError("oauth.finish() needs the callback URL outside a browser: pass { url }");
      const url = new URL(href);
      const remembered = recall();
      const provider = options.provider ?? remembered;
      if (provider === null) {
        throw new TypeError(
          "oauth.finish() cannot tell the provider: pass { provider }, or call oauth.start() in this tab first",
        );
      }
      const history = options.replaceUrl === false ? undefined : browser().history;
      let answer: EnvelopeAnswer | undefined;
      try {
        answer = await transport.send({
          method: "GET",
          path: `${providerPath(provider, "callback")}${url.search}`,
          credentials: "include",
        });
      } finally {
        const signedIn = answer?.code === 0 || answer?.code === 40102 || answer?.code === 40105;
        const returnPath = (answer?.data as { returnPath?: unknown } | undefined)?.returnPath;
        history?.replaceState(null, "", signedIn ? sameAppPath(returnPath) : url.pathname);
      }
      const returnPath = sameAppPath((answer.data as { returnPath?: unknown } | undefined)?.returnPath);
      if (answer.code === 0 && (answer.data as { reauthenticated?: unknown }).reauthenticated === true) {
        const user = await session.replace(session.tokenSet(answer));
        return { status: "reauthenticated", user, returnPath };
      }
      const step = await signInStep(transport, session, answer, runRegistration);
      return { ...step, returnPath };
    },
  };
}
