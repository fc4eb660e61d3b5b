import {
  type JsonWebKey,
  type KeyObject,
  createHash,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  randomUUID,
  timingSafeEqual,
} from "node:crypto";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
// @ts-expect-error oidc-provider ships no type declarations; the shapes used here are typed below.
import Provider from "oidc-provider";

/** A person who can sign in at the local provider, keyed by username in {@link LocalProviderOptions.accounts}. */
export interface LocalProviderAccount {
  sub: string;
  email: string;
  email_verified: boolean;
  name: string;
  password: string;
}

/**
 * A client registered at the local provider: confidential with a secret (`client_secret_basic`),
 * public without one (PKCE alone). Only the authorization-code grant.
 */
export interface LocalProviderClient {
  clientId: string;
  clientSecret?: string;
  /** Compared exactly with the `redirect_uri` of each request. */
  redirectUris: string[];
}

/**
 * A Koa middleware of the provider: `ctx.oidc.route` names the endpoint (`"token"`,
 * `"userinfo"`, …), and after `await next()` it may rewrite the answer in `ctx.body`.
 */
export type LocalProviderMiddleware = (
  ctx: { oidc?: { route?: string }; body?: unknown },
  next: () => Promise<void>,
) => Promise<void>;

/** The options of {@link startLocalProvider}. */
export interface LocalProviderOptions {
  /** Who can sign in, by username. */
  accounts: Readonly<Record<string, LocalProviderAccount>>;
  clients: LocalProviderClient[];
  /** The RSA private key ID tokens are signed with (RS256). Default: a fresh 2048-bit one. */
  signingKey?: KeyObject;
  /** Installed in this order around the provider's own handling (the tests make the provider misbehave with it). */
  middleware?: LocalProviderMiddleware[];
}

/** A running local provider, from {@link startLocalProvider}. */
export interface LocalProvider {
  /** `http://127.0.0.1:<port>`, exactly as the discovery document and ID tokens state it. */
  issuer: string;
  port: number;
  /** The signing key as a public JWK (RS256), as published at the provider's `jwks_uri`. */
  signingKey: JsonWebKey & { kid: string };
  /** Stops listening and drops open connections, releasing the port. */
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

const interactionPath = /^\/interaction\/([\w-]+)$/;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>` +
    `<body><p>Local OpenID provider</p><h1>${title}</h1>${body}</body></html>`
  );
}

function loginPage(uid: string, error?: string): string {
  const alert = error ? `<p role="alert">${error}</p>` : "";
  return page(
    "Sign in",
    `${alert}<form method="post" action="/interaction/${uid}">` +
      `<input type="hidden" name="prompt" value="login">` +
      `<p><label>Username <input type="text" name="username" autocomplete="username" required autofocus></label></p>` +
      `<p><label>Password <input type="password" name="password" autocomplete="current-password" required></label></p>` +
      `<button type="submit">Sign in</button></form>`,
  );
}

function consentPage(uid: string, clientId: string, scopes: string[]): string {
  const asked = scopes.length > 0 ? `<p>It asks for: ${escapeHtml(scopes.join(", "))}.</p>` : "";
  return page(
    `Authorize ${escapeHtml(clientId)}`,
    `${asked}<form method="post" action="/interaction/${uid}">` +
      `<input type="hidden" name="prompt" value="consent">` +
      `<button type="submit" name="decision" value="allow">Allow</button> ` +
      `<button type="submit" name="decision" value="deny">Deny</button></form>`,
  );
}

function passwordMatches(account: LocalProviderAccount, given: string | null): boolean {
  const digest = (value: string) => createHash("sha256").update(value).digest();
  return given !== null && timingSafeEqual(digest(account.password), digest(given));
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

function sendHtml(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    // No form-action: after the form, the provider redirects to the client, on another origin.
    "content-security-policy": "default-src 'none'; base-uri 'none'; frame-ancestors 'none'",
  });
  res.end(html);
}

/** The login and consent pages: GET shows the step the provider asks for, POST completes it. */
async function handleInteraction(
  provider: ProviderInstance,
  accounts: Readonly<Record<string, LocalProviderAccount>>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  const { uid, prompt, params } = details;
  if (req.method === "GET") {
    const scopes = prompt.details.missingOIDCScope ?? [];
    sendHtml(res, 200, prompt.name === "login" ? loginPage(uid) : consentPage(uid, params.client_id, scopes));
    return;
  }
  const form = await readForm(req);
  if (form.get("prompt") !== prompt.name) {
    sendHtml(res, 400, page("Unexpected step", `<p>expected the ${prompt.name} step</p>`));
    return;
  }
  if (prompt.name === "login") {
    const account = accounts[form.get("username") ?? ""];
    if (!account || !passwordMatches(account, form.get("password"))) {
      sendHtml(res, 200, loginPage(uid, "Wrong username or password."));
      return;
    }
    await provider.interactionFinished(req, res, { login: { accountId: account.sub } }, { mergeWithLastSubmission: false });
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

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/**
 * Starts a real OpenID provider ([`oidc-provider`](https://github.com/panva/node-oidc-provider))
 * on a free port of 127.0.0.1, for the demo and the tests: no internet needed. It has fresh
 * cookie keys, the `openid`, `email` and `profile` scopes, PKCE S256 required of every client,
 * the authorization-code grant only, short lifetimes (a minute for codes, ten for the rest), and
 * its own login and consent pages at `/interaction/:uid` (login checks the account's password;
 * consent can be denied, which sends `error=access_denied` to the client). Everything is kept in
 * memory and lost when it stops.
 *
 * The issuer is plain `http://`: the provider then sets its cookies without `Secure` and needs
 * no `proxy` setting, since no TLS terminator sits in front of it. A client of it must allow
 * that (Portcullis: `oauth.unsafeAllowHttpLoopbackProviders`).
 *
 * @example
 * ```ts
 * const provider = await startLocalProvider({
 *   accounts: { ada: { sub: "1", email: "ada@example.com", email_verified: true, name: "Ada", password } },
 *   clients: [{ clientId: "app", clientSecret, redirectUris: ["http://localhost:3000/oauth/local/callback"] }],
 * });
 * // createAuth({ …, oauth: { providers: { local: { issuer: provider.issuer, clientId: "app", clientSecret, … } } } })
 * ```
 */
export async function startLocalProvider(options: LocalProviderOptions): Promise<LocalProvider> {
  const { accounts, clients } = options;
  const privateKey = options.signingKey ?? generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
  const kid = randomUUID();
  const keyUse = { kid, alg: "RS256", use: "sig" };

  // The issuer must name the port, so the server listens before the provider exists.
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server = createServer((req, res) => (handler ? handler(req, res) : sendHtml(res, 503, page("Starting", ""))));
  const port = await listen(server);
  const issuer = `http://127.0.0.1:${port}`;

  const provider = new (Provider as ProviderConstructor)(issuer, {
    clients: clients.map((client) => ({
      client_id: client.clientId,
      ...(client.clientSecret === undefined
        ? { token_endpoint_auth_method: "none" }
        : { client_secret: client.clientSecret, token_endpoint_auth_method: "client_secret_basic" }),
      redirect_uris: client.redirectUris,
      grant_types: ["authorization_code"],
      response_types: ["code"],
    })),
    jwks: { keys: [{ ...privateKey.export({ format: "jwk" }), ...keyUse }] },
    cookies: { keys: [randomBytes(32).toString("base64url")] },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    pkce: { required: () => true },
    ttl: { AuthorizationCode: 60, AccessToken: 600, IdToken: 600, Grant: 600, Interaction: 600, Session: 600 },
    features: { devInteractions: { enabled: false } },
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
    handleInteraction(provider, accounts, req, res).catch((error: unknown) => {
      if (!res.headersSent) sendHtml(res, 400, page("Interaction failed", `<p>${escapeHtml((error as Error).name)}</p>`));
      else res.end();
    });
  };

  return {
    issuer,
    port,
    signingKey: { ...createPublicKey(privateKey).export({ format: "jwk" }), ...keyUse },
    close: () =>
      new Promise((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
