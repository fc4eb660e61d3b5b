import {
  type JsonWebKey,
  type KeyObject,
  createHash,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  timingSafeEqual,
} from "node:crypto";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type LocalProviderAccount, localProviderAccounts } from "./accounts.js";
import { memoryAdapter } from "./memory-adapter.js";
import { consentPage, escapeHtml, loginPage, page, pageContentSecurityPolicy, sendHtml } from "./pages.js";

/**
 * A client registered at the local provider: confidential with a secret (`client_secret_basic`),
 * public without one (PKCE alone). Only the authorization-code grant.
 */
export interface LocalProviderClient {
  /** The `client_id` the client sends. */
  clientId: string;
  /** Absent for a public client. */
  clientSecret?: string;
  /** Compared exactly with the `redirect_uri` of each request. */
  redirectUris: string[];
  /**
   * Registered with `require_auth_time`: every ID token it gets states `auth_time`, as many
   * providers do by default. Without it, `auth_time` comes only when the request asks for it
   * (`max_age`, `prompt=login`), as OpenID Connect Core §2 says.
   */
  requireAuthTime?: boolean;
}

/**
 * How one sign-in at the login page was made, as the provider records it and its ID tokens then
 * state it (OpenID Connect Core §2): what {@link LocalProviderOptions.authentication} answers.
 */
export interface LocalProviderAuthentication {
  /** The `amr` claim: RFC 8176 values such as `["pwd", "otp"]`. Default: none. */
  amr?: string[];
  /** The `acr` claim, such as `"urn:example:mfa"`. Default: none. */
  acr?: string;
  /**
   * When the person authenticated, epoch seconds: the `auth_time` claim. Default: now. An earlier
   * time plays a provider that reused an older session of its own, even where the request asked
   * for a fresh sign-in (`max_age`, `prompt=login`).
   */
  authTime?: number;
}

/**
 * A Koa middleware of the provider, for tests that make it misbehave: `ctx.oidc.route` names the
 * endpoint (`"token"`, `"userinfo"`, `"discovery"`, `"jwks"`, …), and after `await next()` it may
 * rewrite the answer in `ctx.body`.
 */
export type LocalProviderMiddleware = (
  ctx: { oidc?: { route?: string }; body?: unknown },
  next: () => Promise<void>,
) => Promise<void>;

/** The options of {@link startLocalProvider}. */
export interface LocalProviderOptions {
  /** The clients that may ask it to sign people in. */
  clients: LocalProviderClient[];
  /** Who can sign in, by username. Default {@link localProviderAccounts} (`ada` and `bob`). */
  accounts?: Readonly<Record<string, LocalProviderAccount>>;
  /**
   * The RSA private key ID tokens are signed with (RS256). Default: a fresh 2048-bit one. Its
   * `kid` is its JWK thumbprint (RFC 7638), so the same key keeps the same `kid` across restarts.
   */
  signingKey?: KeyObject;
  /** The port on 127.0.0.1. Default 0: a free one, named in {@link LocalProvider.issuer}. */
  port?: number;
  /** Installed in this order around the provider's own handling, e.g. to make it misbehave in attack tests. */
  middleware?: LocalProviderMiddleware[];
  /**
   * How each sign-in at the login page is recorded, given the account that signed in: the `amr`,
   * `acr` and `auth_time` its ID tokens state, for tests of a client's step-up and second-factor
   * policy. Default: none of `amr` and `acr`, and `auth_time` now.
   */
  authentication?: (account: LocalProviderAccount) => LocalProviderAuthentication;
}

/** A running local provider, from {@link startLocalProvider}. */
export interface LocalProvider {
  /** `http://127.0.0.1:<port>`, exactly as the discovery document and ID tokens state it. */
  issuer: string;
  /** The port it listens on. */
  port: number;
  /** The accounts that can sign in, by username. */
  accounts: Readonly<Record<string, LocalProviderAccount>>;
  /** The signing key as a public JWK (RS256, `kid` its thumbprint), as published at the provider's `jwks_uri`. */
  signingKey: JsonWebKey & { kid: string; alg: "RS256"; use: "sig" };
  /** Stops listening and drops open connections, releasing the port; once stopped, it does nothing. */
  close(): Promise<void>;
}

interface InteractionDetails {
  uid: string;
  prompt: { name: string; details: { missingOIDCScope?: string[]; missingOIDCClaims?: string[] } };
  params: Record<string, unknown> & { client_id: string };
  session?: { accountId?: string };
  grantId?: string;
}

interface Grant {
  addOIDCScope(scope: string): void;
  addOIDCClaims(claims: string[]): void;
  save(): Promise<string>;
}

interface ProviderInstance {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  use(middleware: LocalProviderMiddleware): void;
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
  interactionFinished(
    req: IncomingMessage,
    res: ServerResponse,
    result: Record<string, unknown>,
    options: { mergeWithLastSubmission: boolean },
  ): Promise<void>;
  Grant: { new (properties: { accountId: string; clientId: string }): Grant; find(id: string): Promise<Grant | undefined> };
}

type ProviderConstructor = new (issuer: string, configuration: Record<string, unknown>) => ProviderInstance;

/** The Koa context oidc-provider hands to the page renderers. */
interface PageContext {
  type: string;
  body: unknown;
  set(field: string, value: string): void;
  oidc?: { client?: { clientId?: string } };
}

const runtimeWarning = "oidc-provider WARNING: Unsupported runtime.";
let loadingProvider: Promise<ProviderConstructor> | undefined;

/**
 * Imports oidc-provider once, when the first provider starts (importing this package for its other
 * helpers loads none of it). At import, oidc-provider prints a warning on any Node.js before 22;
 * Portcullis supports Node.js 20.19, where oidc-provider 9 runs and declares no engine limit, and no
 * option turns that line off, so it alone is dropped while the module loads.
 */
function loadProvider(): Promise<ProviderConstructor> {
  loadingProvider ??= (async () => {
    const warn = console.warn;
    console.warn = (...args: unknown[]) => {
      if (typeof args[0] === "string" && args[0].includes(runtimeWarning)) return;
      warn.apply(console, args);
    };
    try {
      // @ts-expect-error oidc-provider ships no type declarations; the shapes used here are typed above.
      const module: { default: ProviderConstructor } = await import("oidc-provider");
      return module.default;
    } finally {
      console.warn = warn;
    }
  })();
  return loadingProvider;
}

const interactionPath = /^\/interaction\/([\w-]+)$/;

function passwordMatches(account: LocalProviderAccount, given: string | null): boolean {
  const digest = (value: string) => createHash("sha256").update(value).digest();
  return given !== null && timingSafeEqual(digest(account.password), digest(given));
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

/** The login and consent pages: GET shows the step the provider asks for, POST completes it. */
async function handleInteraction(
  provider: ProviderInstance,
  options: Pick<LocalProviderOptions, "authentication"> & { accounts: Readonly<Record<string, LocalProviderAccount>> },
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { accounts } = options;
  const details = await provider.interactionDetails(req, res);
  const { uid, prompt, params } = details;
  if (req.method === "GET") {
    if (prompt.name === "login") {
      sendHtml(res, 200, loginPage(uid));
      return;
    }
    const account = Object.values(accounts).find((candidate) => candidate.sub === details.session?.accountId);
    sendHtml(res, 200, consentPage(uid, params.client_id, prompt.details.missingOIDCScope ?? [], account?.name));
    return;
  }
  const form = await readForm(req);
  if (form.get("prompt") !== prompt.name) {
    sendHtml(res, 400, page("Unexpected step", `<p>This page expected the ${escapeHtml(prompt.name)} step.</p>`));
    return;
  }
  if (prompt.name === "login") {
    const username = form.get("username") ?? "";
    const account = Object.hasOwn(accounts, username) ? accounts[username] : undefined;
    if (!account || !passwordMatches(account, form.get("password"))) {
      sendHtml(res, 200, loginPage(uid, { username }));
      return;
    }
    const { amr, acr, authTime } = options.authentication?.(account) ?? {};
    const login = { accountId: account.sub, amr, acr, ts: authTime };
    await provider.interactionFinished(req, res, { login }, { mergeWithLastSubmission: false });
    return;
  }
  if (form.get("decision") !== "allow") {
    const denied = { error: "access_denied", error_description: "End-User denied the authorization" };
    await provider.interactionFinished(req, res, denied, { mergeWithLastSubmission: false });
    return;
  }
  const grant =
    (details.grantId ? await provider.Grant.find(details.grantId) : undefined) ??
    new provider.Grant({ accountId: details.session?.accountId ?? "", clientId: params.client_id });
  if (prompt.details.missingOIDCScope) grant.addOIDCScope(prompt.details.missingOIDCScope.join(" "));
  if (prompt.details.missingOIDCClaims) grant.addOIDCClaims(prompt.details.missingOIDCClaims);
  await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
}

function renderPage(ctx: PageContext, title: string, body: string): void {
  ctx.type = "html";
  ctx.set("content-security-policy", pageContentSecurityPolicy);
  ctx.body = page(title, body);
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** The public JWK of an RSA key with its RFC 7638 thumbprint as `kid`. */
function publicJwk(privateKey: KeyObject): LocalProvider["signingKey"] {
  const { n, e } = createPublicKey(privateKey).export({ format: "jwk" });
  // RFC 7638 §3.2: the required members in lexicographic order, no whitespace.
  const kid = createHash("sha256")
    .update(JSON.stringify({ e, kty: "RSA", n }))
    .digest("base64url");
  return { kty: "RSA", n, e, kid, alg: "RS256", use: "sig" };
}

/**
 * Starts a real OpenID provider ([`oidc-provider`](https://github.com/panva/node-oidc-provider))
 * on 127.0.0.1, for tests and demos: no internet needed. Its accounts are
 * {@link localProviderAccounts} unless given; it has the `openid`, `email` and `profile` scopes,
 * PKCE S256 required of every client, the authorization-code grant only, short lifetimes (a
 * minute for codes, ten for the rest), and its own login and consent pages at `/interaction/:uid`
 * (login checks the account's password; consent can be denied, which sends
 * `error=access_denied` to the client), which `driveAuthorization` fills in without a browser.
 * Sessions and grants are kept in memory and lost when it stops; accounts and the signing key
 * are what the options say, so a restart with the same ones keeps every `sub` and `kid`.
 *
 * It prints nothing: its keys, cookie keys and store are configured explicitly, so oidc-provider
 * has no development-only default to warn about.
 *
 * The issuer is plain `http://`: the provider then sets its cookies without `Secure` and needs no
 * `proxy` setting. A client of it must allow that (Portcullis:
 * `oauth.unsafeAllowHttpLoopbackProviders`).
 *
 * @example
 * ```ts
 * const provider = await startLocalProvider({
 *   clients: [{ clientId: "app", clientSecret, redirectUris: ["http://localhost:3000/oauth/local/callback"] }],
 * });
 * // createAuth({ …, oauth: { providers: { local: { issuer: provider.issuer, clientId: "app", clientSecret, redirectUri } },
 * //   unsafeAllowHttpLoopbackProviders: true } })
 * await provider.close();
 * ```
 */
export async function startLocalProvider(options: LocalProviderOptions): Promise<LocalProvider> {
  const { clients } = options;
  const accounts = options.accounts ?? localProviderAccounts;
  const privateKey = options.signingKey ?? generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
  if (privateKey.type !== "private" || privateKey.asymmetricKeyType !== "rsa") {
    throw new TypeError("startLocalProvider: signingKey must be an RSA private key (its ID tokens are RS256)");
  }
  const signingKey = publicJwk(privateKey);
  const Provider = await loadProvider();

  // The issuer must name the port, so the server listens before the provider exists.
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server = createServer((req, res) => (handler ? handler(req, res) : sendHtml(res, 503, page("Starting", ""))));
  const port = await listen(server, options.port ?? 0);
  const issuer = `http://127.0.0.1:${port}`;
  const redirectOrigins = new Set(clients.flatMap((client) => client.redirectUris.map((uri) => new URL(uri).origin)));
  const lifetime = 600;

  const provider = new Provider(issuer, {
    clients: clients.map((client) => ({
      client_id: client.clientId,
      ...(client.clientSecret === undefined
        ? { token_endpoint_auth_method: "none" }
        : { client_secret: client.clientSecret, token_endpoint_auth_method: "client_secret_basic" }),
      redirect_uris: client.redirectUris,
      require_auth_time: client.requireAuthTime === true,
      grant_types: ["authorization_code"],
      response_types: ["code"],
    })),
    adapter: memoryAdapter(),
    jwks: { keys: [{ ...privateKey.export({ format: "jwk" }), kid: signingKey.kid, alg: "RS256", use: "sig" }] },
    cookies: { keys: [randomBytes(32).toString("base64url")] },
    // `acr` and `amr` are stated when the sign-in recorded them (`authentication`); `auth_time`
    // when the request or the client asks for it.
    claims: { openid: ["sub", "acr", "amr"], auth_time: null, email: ["email", "email_verified"], profile: ["name"] },
    pkce: { required: () => true },
    ttl: {
      AuthorizationCode: 60,
      AccessToken: lifetime,
      ClientCredentials: lifetime,
      IdToken: lifetime,
      RefreshToken: lifetime,
      Grant: lifetime,
      Interaction: lifetime,
      Session: lifetime,
    },
    // Browsers may call the user-info endpoint, and a public client its token endpoint, from the
    // origin of a registered redirect URI: the rule oidc-provider applies by default, stated here.
    clientBasedCORS: (ctx: { oidc: { route?: string } }, origin: string, client: { clientAuthMethod?: string }) =>
      redirectOrigins.has(origin) && (ctx.oidc.route === "userinfo" || client.clientAuthMethod === "none"),
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx: PageContext, form: string) =>
          renderPage(
            ctx,
            "Sign out?",
            `${form}<div class="actions"><button type="submit" form="op.logoutForm">Stay signed in</button>` +
              `<button type="submit" form="op.logoutForm" name="logout" value="yes" class="primary" autofocus>Sign out</button></div>`,
          ),
        postLogoutSuccessSource: async (ctx: PageContext) =>
          renderPage(ctx, "Signed out", "<p>You are signed out of the local provider.</p>"),
      },
    },
    renderError: async (ctx: PageContext, out: Record<string, string>) =>
      renderPage(
        ctx,
        "Something went wrong",
        `<p class="error" role="alert">${escapeHtml(out.error ?? "error")}: ${escapeHtml(out.error_description ?? "")}</p>`,
      ),
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx: unknown, sub: string) {
      const account = Object.values(accounts).find((candidate) => candidate.sub === sub);
      if (!account) return undefined;
      const { password: _password, ...claims } = account;
      return { accountId: sub, claims: async () => claims };
    },
  });
  for (const middleware of options.middleware ?? []) provider.use(middleware);

  const providerCallback = provider.callback();
  handler = (req, res) => {
    const path = new URL(req.url ?? "/", issuer).pathname;
    if (!interactionPath.test(path)) {
      providerCallback(req, res);
      return;
    }
    handleInteraction(provider, { accounts, authentication: options.authentication }, req, res).catch((error: unknown) => {
      if (!res.headersSent)
        sendHtml(res, 400, page("Sign-in failed", `<p class="error">${escapeHtml((error as Error).name)}</p>`));
      else res.end();
    });
  };

  return {
    issuer,
    port,
    accounts,
    signingKey,
    close: () =>
      new Promise((resolve, reject) => {
        if (!server.listening) {
          resolve();
          return;
        }
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
