import { createHmac } from "node:crypto";
import { type AuthConfig, type ResolvedConfig, resolveConfig } from "./config.js";
import { type OptionNames, refuseUnknownOptions } from "./config-values.js";
import { type PasswordHasher, createPasswordHasher } from "./crypto/password-hasher.js";
import { pooledRandomBytes } from "./crypto/random.js";
import { type SecretBox, createSecretBox } from "./crypto/secret-box.js";
import { printInternalError } from "./diagnostics/operator-lines.js";
import { boundedDirectory } from "./directory/bounded-directory.js";
import type { Directory } from "./directory/directory.js";
import { sendSecurityNotices } from "./email/notices.js";
import { type EventHub, createEventHub } from "./events/event-hub.js";
import type { AuthEvent } from "./events/types.js";
import { type ProxyTrust, createProxyTrust } from "./http/client-address.js";
import { startSweeping } from "./storage/sweep.js";
import type { Storage } from "./storage/types.js";
import { startTelemetry, telemetryOff, telemetryOptionOf } from "./telemetry/telemetry.js";
import type { TelemetryOption, TelemetrySwitch } from "./telemetry/types.js";
import type { AccessContext } from "./tokens/access-token.js";
import { type TokenKeys, loadTokenKeys } from "./tokens/keys.js";
import { type VerifiedTokenCache, createVerifiedTokenCache } from "./tokens/verified-tokens.js";
import { type ResolvedField, type UserConfig, checkRequiredFields, resolveUserFields } from "./user-fields/declaration.js";
import type { PublicFieldValues, SelfEditFieldInput, SignUpFieldInput, UserFieldDefinitions } from "./user-fields/field.js";
import type { PublicUser, PublicUserHook } from "./users/public-user.js";
import type { RevocationChannel } from "./users/revocation-channel.js";
import { type RevocationState, type TokenStateEntry, listenForRevocations, revocationState } from "./users/token-state.js";

/**
 * An auth instance: checked configuration, storage, keys, clock and events. Every flow takes
 * one as its first argument. Make it once at startup with {@link createAuth}. `Fields` is the
 * declaration of its additional user fields (`user.fields`), which types the user objects:
 * `InferUser<typeof auth>`, `req.auth.user` (see `Register`), the client's `createAuthClient<typeof auth>()`.
 */
// biome-ignore lint/complexity/noBannedTypes: no fields declared is the empty object type.
export interface Auth<Fields extends UserFieldDefinitions = {}> {
  readonly config: ResolvedConfig;
  readonly storage: Storage;
  /**
   * The directory of `config.directory` behind `directoryLimits` (a queue and a deadline per
   * call), or null; whether it is used is the saved directory policy.
   */
  readonly directory: Directory | null;
  /** The current time in epoch milliseconds (frozen in tests). */
  now(): number;
  /** Cryptographically secure random bytes. */
  randomBytes(size: number): Uint8Array;
  /** Subscribe to sign-in, second-factor, refresh, revocation and throttling events. */
  readonly events: Pick<EventHub, "on">;
  /** @internal Publishes an event. */
  readonly emit: (event: AuthEvent) => void;
  /** @internal Signing and verification keys. */
  readonly keys: TokenKeys;
  /** @internal argon2id hashing behind a concurrency limit. */
  readonly passwords: PasswordHasher;
  /** @internal AES-256-GCM for secrets at rest. */
  readonly secretBox: SecretBox;
  /**
   * @internal A stable digest of a username key under a key derived from the configured
   * encryption key: what throttle counters and events hold instead of the typed name, which may
   * be a password typed into the wrong field (HTTP-6). Without the key it cannot be reversed by
   * trying a dictionary of names.
   */
  readonly pseudonym: (usernameKey: string) => string;
  /** @internal Which peers are trusted proxies (RL-3). */
  readonly proxyTrust: ProxyTrust;
  /** @internal Receives unexpected errors of HTTP requests with their request id. */
  readonly onInternalError: (error: unknown, requestId: string) => void;
  /** @internal Short-lived cache of token state checks, per session (see `tokenStateCacheSeconds`). */
  readonly tokenStateCache: Map<string, TokenStateEntry>;
  /** @internal The revocation channel, where it stands, and the generation of dropped cached state. */
  readonly revocations: RevocationState;
  /** @internal Access tokens already verified, until their `exp` (see `verifiedTokenCacheSize`). */
  readonly verifiedTokens: VerifiedTokenCache<AccessContext>;
  /** @internal The `publicUser` option: extra fields of the user object. */
  readonly publicUserHook: PublicUserHook | undefined;
  /** @internal Whether spans and metrics are on (see the `telemetry` option). */
  readonly telemetry: TelemetrySwitch;
  /** @internal The declared additional user fields (`user.fields`), checked. */
  readonly userFields: readonly ResolvedField[];
  /** @internal The declaration's type, for inference only: never present. */
  readonly "~fields"?: Fields;
  /**
   * @internal The types a client of this instance's routes sees, for inference only (never
   * present): `createAuthClient<typeof auth>()` of `@portcullis/client` reads them without
   * depending on this package.
   */
  readonly "~types"?: {
    user: PublicUser & PublicFieldValues<Fields>;
    signUpFields: SignUpFieldInput<Fields>;
    profileFields: SelfEditFieldInput<Fields>;
  };
}

/** Options of {@link createAuth} that are not configuration. */
export interface CreateAuthOptions {
  /** Receives whatever an event listener throws; by default such errors are dropped. */
  onListenerError?: (error: unknown, event: AuthEvent) => void;
  /**
   * Receives unexpected errors of HTTP requests (storage down, a bug) with the request id the
   * client was given, for your logs; the client sees only code 50000 (or 50300) and the id. The
   * background sweep's errors come with the id `"sweep"`. By default each is one line on stderr:
   * the request id, the error's class, message and stack, and its causes' (never a request body,
   * token, password or code). Pass your logger's function to replace it, `() => {}` to silence it.
   */
  onInternalError?: (error: unknown, requestId: string) => void;
  /**
   * Adds fields to the user object of every token set, `/me` and the admin views: it receives the
   * contract's fields and answers a plain object of extra ones (or a promise of it). It can add,
   * never remove or change: the contract's fields (`id`, `username`, `roles`, `totpEnabled`,
   * `createdAt`, and `disabled` in admin views) win over any of the same name. A hook that throws,
   * or answers anything but a plain object, makes the request an internal error (50000, told to
   * `onInternalError`), never a half-built user.
   *
   * @example
   * ```ts
   * // Clients built for the original service read a single `user.role`.
   * createAuth({ ...config, publicUser: (user) => ({ role: user.roles[0] ?? null }) });
   * ```
   */
  publicUser?: PublicUserHook;
  /**
   * OpenTelemetry spans and metrics (`docs/observability.md`). Left out, they go to the providers
   * an OpenTelemetry SDK registered globally, when `@opentelemetry/api` is installed and an SDK is
   * registered; otherwise nothing is recorded. `false` turns them off without loading the API;
   * providers (`{ tracerProvider, meterProvider }`) receive them instead of the global ones.
   *
   * @example
   * ```ts
   * createAuth({ ...config, telemetry: { tracerProvider, meterProvider } });
   * ```
   */
  telemetry?: TelemetryOption;
  /**
   * Tells every instance sharing the storage at once when a session ends or a token version
   * rises, so each drops its cached token state (`tokenStateCacheSeconds`) then and there: an
   * ended session is refused everywhere within the channel's latency, and a long cache (60 s)
   * spares the protected route its storage read. While the channel is lost the delay falls back
   * to `tokenStateCacheSeconds` (event `revocation_channel.lost`). See `docs/storage.md`.
   *
   * @example
   * ```ts
   * import { redisRevocationChannel } from "@portcullis/redis";
   * createAuth({ ...config, tokenStateCacheSeconds: 60, revocationChannel: redisRevocationChannel({ client }) });
   * ```
   */
  revocationChannel?: RevocationChannel;
  /**
   * Additional fields of every user, declared once with `field` (`docs/flows/user-fields.md`):
   * their types, limits and defaults, who may set them (sign-up, the user, administrators), and
   * whether tokens and `/me` show them. SQL storage keeps each in a column of its own, added by
   * `portcullis-kysely fields`.
   *
   * @example
   * ```ts
   * createAuth({ ...config, user: { fields: { company: field.string({ maxLength: 100, signUp: true, selfEdit: true }) } } });
   * ```
   */
  user?: UserConfig<UserFieldDefinitions>;
}

const createAuthOptions = {
  storage: true,
  issuer: true,
  audience: true,
  secrets: true,
  password: true,
  totp: true,
  passkeys: true,
  oauth: true,
  directory: true,
  directoryLimits: true,
  adminRole: true,
  reauthentication: true,
  secondFactor: true,
  signUp: true,
  throttle: true,
  http: true,
  sessions: true,
  sweepInterval: true,
  debug: true,
  now: true,
  randomBytes: true,
  ttl: true,
  clockToleranceSeconds: true,
  refreshReuseInterval: true,
  tokenStateCacheSeconds: true,
  verifiedTokenCacheSize: true,
  onListenerError: true,
  onInternalError: true,
  publicUser: true,
  telemetry: true,
  email: true,
  emailSignIn: true,
  revocationChannel: true,
  user: true,
  organizations: true,
  apiKeys: true,
  serviceAccounts: true,
  impersonation: true,
} satisfies OptionNames<AuthConfig & CreateAuthOptions>;

/**
 * Makes an auth instance from a configuration, checking all of it now: a short signing
 * secret, a missing issuer or a malformed lifetime throws a `TypeError` that says what to fix.
 *
 * @example
 * ```ts
 * const auth = createAuth({
 *   storage: memoryStorage(),
 *   issuer: "https://api.example.com",
 *   audience: "example-api",
 *   secrets: { signing: process.env.AUTH_SIGNING_SECRET!, encryption: process.env.AUTH_ENCRYPTION_KEY! },
 * });
 * ```
 */
// biome-ignore lint/complexity/noBannedTypes: no fields declared is the empty object type.
export function createAuth<const Fields extends UserFieldDefinitions = {}>(
  config: AuthConfig & CreateAuthOptions & { user?: UserConfig<Fields> },
): Auth<Fields> {
  refuseUnknownOptions(config, createAuthOptions, "");
  const resolved = resolveConfig(config);
  const userFields = resolveUserFields(config.user);
  checkRequiredFields(userFields, {
    signUp: resolved.signUp.enabled,
    providers: resolved.oauthProviders.size > 0,
    directory: config.directory !== undefined,
  });
  if (config.onInternalError !== undefined && typeof config.onInternalError !== "function") {
    throw new TypeError("onInternalError must be a function (error, requestId) => void; pass () => {} to silence it");
  }
  if (config.publicUser !== undefined && typeof config.publicUser !== "function") {
    throw new TypeError("publicUser must be a function answering the extra fields of the user object");
  }
  const channel = revocationChannelOf(config.revocationChannel);
  const telemetry = telemetryOptionOf(config.telemetry);
  const randomBytes = config.randomBytes ?? pooledRandomBytes();
  const now = config.now ?? Date.now;
  const keys = loadTokenKeys(config.secrets);
  const secretBox = createSecretBox(config.secrets.encryption, randomBytes);
  const hub = createEventHub(config.onListenerError);
  const pseudonymKey = secretBox.deriveKey("portcullis username pseudonym v1");
  const auth: Auth<Fields> = {
    config: resolved,
    storage: config.storage,
    directory: config.directory ? boundedDirectory(config.directory, resolved.directoryLimits) : null,
    now,
    randomBytes,
    events: { on: hub.on },
    emit: hub.emit,
    keys,
    passwords: createPasswordHasher(resolved.password, randomBytes, (error) => auth.onInternalError(error, "password-hash")),
    secretBox,
    pseudonym: (usernameKey) => createHmac("sha256", pseudonymKey).update(usernameKey, "utf8").digest("base64url"),
    proxyTrust: createProxyTrust(resolved.trustedProxies),
    onInternalError: config.onInternalError ?? printInternalError,
    tokenStateCache: new Map(),
    revocations: revocationState(channel),
    verifiedTokens: createVerifiedTokenCache(resolved.verifiedTokenCacheSize),
    publicUserHook: config.publicUser,
    telemetry: telemetryOff(),
    userFields,
  };
  startTelemetry(auth, telemetry);
  startSweeping(auth, resolved.sweepIntervalMs);
  listenForRevocations(auth);
  if (resolved.email !== null) sendSecurityNotices(auth);
  return auth;
}

function revocationChannelOf(channel: unknown): RevocationChannel | null {
  if (channel === undefined) return null;
  const { publish, subscribe } = (channel ?? {}) as Partial<RevocationChannel>;
  if (typeof publish !== "function" || typeof subscribe !== "function") {
    throw new TypeError(
      "revocationChannel must have publish(message) and subscribe(receiver), such as redisRevocationChannel({ client })",
    );
  }
  return channel as RevocationChannel;
}
