import { type KeyObject, randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import {
  type Auth,
  type OAuthConfig,
  type Storage,
  createAuth,
  createUser,
  getPublicUser,
  memoryStorage,
  setPassword,
} from "@portcullis/core";
import { authRouter, requireAuth } from "@portcullis/express";
import { type LocalProvider, localProviderAccounts, startLocalProvider } from "@portcullis/testing";
import express, { type Express, type NextFunction, type Request, type Response } from "express";
import QRCode from "qrcode";
import { apiReferenceRoutes } from "./api-reference.js";
import { type DemoMailServer, sendThroughSmtp } from "./mail.js";
import { outboxRoutes } from "./outbox.js";
import { bundlePageClient, pageClientPath } from "./page-client-bundle.js";

/** Options of {@link createDemoApp}. Every one has a default that suits a local demo. */
export interface DemoAppOptions {
  /** HS256 secret of at least 32 bytes. Default: 32 random bytes, so tokens die with the process. */
  signingSecret?: string;
  /** AES-256-GCM key for TOTP secrets at rest (64 hex or 43 base64url characters). Default: random. */
  encryptionKey?: string;
  /**
   * The origin the page is opened at, `http://localhost:<port>`: the only origin passkeys are
   * accepted from (rpId `localhost`). WebAuthn refuses IP addresses, so the demo must be opened
   * at `localhost`, not `127.0.0.1`. Default `http://localhost:3000`.
   */
  origin?: string;
  /** The `iss` of access tokens. Default: the origin. */
  issuer?: string;
  /** The demo user's name. Default `demo`. */
  demoUsername?: string;
  /** The demo user's password. Default: 24 random base64url characters (144 bits). */
  demoPassword?: string;
  /** The demo user's roles. Default `["admin"]`, so the admin-only route can be tried. */
  demoRoles?: string[];
  /**
   * The demo user's address, stored verified so that "Forgot password?" sends it a link. Default
   * `demo@example.test` (a reserved name: no real mailbox). A stored demo user that has an
   * address keeps its own.
   */
  demoEmail?: string;
  /**
   * The demo's local SMTP server (`startDemoMailServer` of `mail.ts`): with it, email is on
   * (password reset, address verification and notices, sent through nodemailer to that server),
   * and the outbox page `/outbox` shows what it received. Default: none, and the email routes
   * answer 40400.
   */
  mailServer?: DemoMailServer;
  /**
   * Where users, TOTP enrolments, passkeys and sessions are kept. Default: memory, gone with the
   * process; `server.ts` passes embedded PGlite in a data directory, so they survive a restart.
   * A demo user already stored there keeps its account and gets the demo password afresh.
   */
  storage?: Storage;
  /** The clock, in epoch milliseconds. Default `Date.now`; the browser tests move it past an access token's expiry. */
  now?: () => number;
  /**
   * An OpenID provider the page offers as "Sign in with the local provider" (the provider
   * `local`), with {@link oauthCallbackUri} of the origin as its redirect URI: the demo's own
   * provider from {@link startDemoProvider}, or any other that has the demo registered. Default:
   * none, and the page shows no provider button.
   */
  oauthProvider?: DemoOAuthProvider;
  /**
   * Turns sign-up on (`signUp.enabled`): the page then offers "Sign up with a passkey", an account
   * whose way in is a passkey, with no password. Default off; `server.ts` turns it on.
   */
  signUp?: boolean;
}

/** The demo's registration at an OpenID provider. */
export interface DemoOAuthProvider {
  /** The provider's issuer: discovery is fetched from it. `http://` is accepted on loopback only. */
  issuer: string;
  clientId: string;
  /** Absent for a public client (PKCE alone). */
  clientSecret?: string;
}

/** The demo user, with the password the demo created it with. */
export interface DemoUser {
  id: string;
  username: string;
  password: string;
  roles: string[];
  /** Its address, verified (unless it was changed and not verified since). */
  email: string | null;
}

/** What {@link createDemoApp} returns: an app that is not listening yet. */
export interface DemoApp {
  app: Express;
  auth: Auth;
  demoUser: DemoUser;
}

/** The name of the demo's OpenID provider: its routes are `/api/v1/auth/oauth/local/…`. */
const localProviderName = "local";

/**
 * The page the provider sends the browser back to, `<origin>/oauth/local/callback`: the sign-in
 * page itself, which passes the query on to the callback route. It is the redirect URI the demo
 * is registered with.
 */
export function oauthCallbackUri(origin: string): string {
  return new URL(`/oauth/${localProviderName}/callback`, origin).href;
}

/** One item of the protected sample resource. */
interface Thing {
  id: string;
  name: string;
}

/** A random value of `size` bytes, base64url: for secrets and the demo password. */
export function randomSecret(size = 32): string {
  return randomBytes(size).toString("base64url");
}

const publicDirectory = fileURLToPath(new URL("../public/", import.meta.url));

/**
 * The files of the demo page, for serving it from another app (the browser tests serve it from
 * Hono too): `public/` at `/`, and the page's client, bundled by {@link bundlePageClient}, at
 * `pageClientPath`.
 */
export const demoPageFiles = { publicDirectory, pageClientPath, bundlePageClient } as const;

/** The content security policy of the demo page: its own scripts and styles only, QR images from blob URLs. */
export const contentSecurityPolicy = [
  "default-src 'self'",
  "img-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

function securityHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.set({
    "content-security-policy": contentSecurityPolicy,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
  });
  next();
}

/** The demo user's account as {@link ensureDemoUser} wants it. */
interface DemoAccount {
  username: string;
  password: string;
  roles: string[];
  email: string;
}

/**
 * Creates the demo user with a verified address, or, in storage that outlived a restart, gives
 * the stored one this password (and the address, verified, when it has none).
 */
async function ensureDemoUser(auth: Auth, { username, password, roles, email }: DemoAccount): Promise<DemoUser> {
  const stored = await auth.storage.users.findByUsernameKey(username.normalize("NFKC").toLowerCase());
  if (!stored) {
    const created = await createUser(auth, { username, password, roles, email, emailVerified: true });
    return { id: created.id, username: created.username, password, roles: created.roles, email: created.email ?? null };
  }
  await setPassword(auth, { userId: stored.id, newPassword: password });
  if (stored.email === null) await auth.storage.users.setEmail(stored.id, { email, verified: true }, auth.now());
  const user = await getPublicUser(auth, { userId: stored.id });
  return { id: user.id, username: user.username, password, roles: user.roles, email: user.email ?? null };
}

/** The page of the demo that reads a reset link's token: `resetUrl`. */
export const resetPasswordPath = "/reset-password";
/** The page of the demo that reads a verification link's token: `verifyUrl`. */
export const verifyEmailPath = "/verify-email";
/** The page of the demo that reads an invitation link's token: `invitationUrl`. */
export const acceptInvitationPath = "/accept-invitation";

/** The sender of the demo's mail. */
const demoSender = "Portcullis demo <no-reply@example.test>";

/** Sends an envelope like the auth routes do, so the page reads every answer the same way. */
function sendEnvelope(res: Response, status: number, code: number, message: string, data?: unknown): void {
  res
    .status(status)
    .set("cache-control", "no-store")
    .json(data === undefined ? { code, message } : { code, message, data });
}

/**
 * Builds the demo service (on `options.storage`, memory by default): the Portcullis routes under `/api/v1/auth`, with
 * passkeys for the page at `options.origin`; a protected sample resource `/api/v1/things`
 * (deleting one needs the `admin` role and a sign-in in the last 5 minutes); the demo-only QR code route `POST /demo/qr`; and the
 * static sign-in page with its client (`@portcullis/client`, bundled for it). With `options.oauthProvider`, sign-in with
 * that provider too: the page offers it, and serves itself at {@link oauthCallbackUri} for the
 * provider to send the browser back to. Organizations are on (any user creates one). With
 * `options.mailServer`, email: the reset, verification and invitation links lead to the page at
 * `/reset-password`, `/verify-email` and `/accept-invitation`, and the outbox
 * page `/outbox` (demo only) shows the mail sent. It creates one demo user, with a verified
 * address. It does not listen: the origin
 * must name the port, so listen first and hand the app to the server then (as `server.ts` and the
 * tests do).
 *
 * @example
 * ```ts
 * const origin = "http://localhost:3000";
 * const local = await startDemoProvider({ origin });
 * const { app, demoUser } = await createDemoApp({ origin, oauthProvider: local.registration });
 * app.listen(3000, "127.0.0.1", () => console.log(demoUser.username, demoUser.password));
 * // open http://localhost:3000/ (not 127.0.0.1: passkeys need the name localhost)
 * ```
 */
export async function createDemoApp(options: DemoAppOptions = {}): Promise<DemoApp> {
  const origin = options.origin ?? "http://localhost:3000";
  const storage = options.storage ?? memoryStorage();
  const auth = createAuth({
    storage,
    issuer: options.issuer ?? origin,
    audience: "portcullis-demo",
    secrets: {
      signing: options.signingSecret ?? randomSecret(),
      encryption: options.encryptionKey ?? randomSecret(),
    },
    // Passkeys are bound to the name "localhost", so the page must be opened at that name.
    passkeys: { rpId: "localhost", rpName: "Portcullis demo", origins: [origin] },
    // The API reference page reads the OpenAPI document at /api/v1/auth/openapi.json.
    http: { openApi: true },
    // Organizations: any user creates them, with the default roles owner, admin and member; the
    // invitations go by email (with a mail server) to the page at /accept-invitation.
    organizations: { enabled: true },
    // The page offers password fields only to an account that has a password (one made by a
    // provider sign-in has none): the user object says so through the documented hook.
    publicUser: async (user) => ({ hasPassword: (await storage.users.findById(user.id))?.passwordHash != null }),
    ...(options.oauthProvider ? { oauth: demoOAuthConfig(options.oauthProvider, origin) } : {}),
    ...(options.signUp ? { signUp: { enabled: true } } : {}),
    // Mail through nodemailer to the demo's own SMTP server; the links lead to this page, which
    // reads the token from the fragment (`#token=…`).
    ...(options.mailServer
      ? {
          email: {
            send: sendThroughSmtp(options.mailServer, demoSender),
            resetUrl: new URL(resetPasswordPath, origin).href,
            verifyUrl: new URL(verifyEmailPath, origin).href,
            invitationUrl: new URL(acceptInvitationPath, origin).href,
            from: demoSender,
            appName: "Portcullis demo",
          },
        }
      : {}),
    onInternalError: (error, requestId) => console.error(`internal error, request ${requestId}:`, error),
    now: options.now,
  });

  const username = options.demoUsername ?? "demo";
  const password = options.demoPassword ?? randomSecret(18);
  const demoUser = await ensureDemoUser(auth, {
    username,
    password,
    roles: options.demoRoles ?? ["admin"],
    email: options.demoEmail ?? "demo@example.test",
  });

  const things: Thing[] = [
    { id: "1", name: "portcullis" },
    { id: "2", name: "drawbridge" },
    { id: "3", name: "moat" },
  ];

  const app = express();
  app.disable("x-powered-by");
  app.use(securityHeaders);

  // The auth routes: /api/v1/auth/* (and /.well-known/jwks.json with an asymmetric key).
  app.use(authRouter(auth));

  app.get("/api/v1/things", requireAuth(auth), (_req, res) => {
    sendEnvelope(res, 200, 0, "OK", things);
  });

  // Deleting asks more of the sign-in than reading: the admin role, and a sign-in (or a
  // re-authentication) in the last 5 minutes: an older session gets 40104, and the page asks.
  app.delete("/api/v1/things/:id", requireAuth(auth, { roles: ["admin"], maxAge: "5m" }), (req, res) => {
    const index = things.findIndex((thing) => thing.id === req.params.id);
    if (index === -1) {
      sendEnvelope(res, 404, 40400, "No such thing");
      return;
    }
    things.splice(index, 1);
    sendEnvelope(res, 200, 0, "OK", { deleted: true });
  });

  // Demo only: renders the otpauth:// URL of TOTP setup as an SVG QR code, so the page needs no
  // QR library. The URL travels in a POST body, never in a URL, and only for a signed-in user.
  app.post("/demo/qr", requireAuth(auth), express.json({ limit: "2kb" }), async (req, res) => {
    const text: unknown = (req.body as { text?: unknown } | undefined)?.text;
    if (typeof text !== "string" || !text.startsWith("otpauth://") || text.length > 1024) {
      sendEnvelope(res, 400, 40002, "text must be an otpauth:// URL of at most 1024 characters");
      return;
    }
    const svg = await QRCode.toString(text, { type: "svg", errorCorrectionLevel: "M", margin: 2 });
    res.status(200).set({ "content-type": "image/svg+xml; charset=utf-8", "cache-control": "no-store" }).send(svg);
  });

  // The API reference: Swagger UI, from the swagger-ui-dist package, on the auth's OpenAPI document.
  app.use(apiReferenceRoutes());

  // The page's client, bundled from the workspace's source once per process.
  const pageClient = await bundlePageClient();
  app.get(pageClientPath, (_req, res) => {
    res.type("text/javascript").set("cache-control", "no-cache").send(pageClient.javascript);
  });

  // The pages of the reset, verification and invitation links: the sign-in page, which reads the
  // token from the fragment. Demo only: the outbox, where the demo's own SMTP server shows what it received.
  for (const path of [resetPasswordPath, verifyEmailPath, acceptInvitationPath]) {
    app.get(path, (_req, res) => {
      res.set("cache-control", "no-store").sendFile("index.html", { root: publicDirectory });
    });
  }
  if (options.mailServer) app.use(outboxRoutes(options.mailServer));

  // The page a provider sends the browser back to: the sign-in page, which relays the query.
  if (options.oauthProvider) {
    app.get(new URL(oauthCallbackUri(origin)).pathname, (_req, res) => {
      res.set("cache-control", "no-store").sendFile("index.html", { root: publicDirectory });
    });
  }

  app.use(express.static(publicDirectory, { index: "index.html" }));

  // Errors of the demo's own routes (a malformed body on /demo/qr): an envelope, never a stack trace.
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = (error as { status?: unknown }).status;
    if (typeof status === "number" && status >= 400 && status < 500) {
      sendEnvelope(res, 400, 40002, "The request body is malformed");
      return;
    }
    console.error("demo route failed:", error);
    sendEnvelope(res, 500, 50000, "Internal error");
  });

  return { app, auth, demoUser };
}

/** The `oauth` setting of the demo: its one provider, `local`. */
function demoOAuthConfig(provider: DemoOAuthProvider, origin: string): OAuthConfig {
  return {
    providers: {
      [localProviderName]: {
        issuer: provider.issuer,
        clientId: provider.clientId,
        clientSecret: provider.clientSecret,
        redirectUri: oauthCallbackUri(origin),
        displayName: "the local provider",
      },
    },
    // Unsafe outside development: the demo's provider runs on this machine over plain http.
    unsafeAllowHttpLoopbackProviders: true,
  };
}

/** The demo's local OpenID provider, running: its one account and the demo's registration. */
export interface DemoProvider {
  provider: LocalProvider;
  /** The account that signs in at the provider, with its password, for the console. */
  account: { username: string; password: string };
  /** What `createDemoApp({ oauthProvider })` needs. */
  registration: Required<DemoOAuthProvider>;
}

/** Options of {@link startDemoProvider}. */
export interface DemoProviderOptions {
  /** The demo's origin, as given to {@link createDemoApp}: the redirect URI is {@link oauthCallbackUri} of it. */
  origin: string;
  /**
   * The provider's RSA signing key. Default: a fresh one. `server.ts` keeps one in the data
   * directory, so the provider's keys, like its account's `sub`, survive a restart.
   */
  signingKey?: KeyObject;
}

/**
 * Starts the demo's own OpenID provider on a free port of 127.0.0.1 (`startLocalProvider` of
 * `@portcullis/testing`): its account `ada` (email `ada@example.com`, verified, the same `sub` at
 * every start, so the Portcullis account linked to it is found again after a restart) with a
 * password of 24 random base64url characters (144 bits), and the demo registered as a
 * confidential client whose only redirect URI is {@link oauthCallbackUri} of `origin`.
 *
 * @example
 * ```ts
 * const local = await startDemoProvider({ origin });
 * const { app } = await createDemoApp({ origin, oauthProvider: local.registration });
 * console.log(local.account.username, local.account.password);
 * ```
 */
export async function startDemoProvider(options: DemoProviderOptions): Promise<DemoProvider> {
  const account = { username: "ada", password: randomSecret(18) };
  const clientId = "portcullis-demo";
  const clientSecret = randomSecret();
  const provider = await startLocalProvider({
    accounts: { [account.username]: { ...localProviderAccounts.ada, password: account.password } },
    clients: [{ clientId, clientSecret, redirectUris: [oauthCallbackUri(options.origin)] }],
    signingKey: options.signingKey,
  });
  return { provider, account, registration: { issuer: provider.issuer, clientId, clientSecret } };
}
