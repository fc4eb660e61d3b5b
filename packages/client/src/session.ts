import { accessTokenClaims } from "./claims.js";
import { AuthClientError } from "./errors.js";
import type { ClientEvents, SignOutReason } from "./events.js";
import type { StoredTokens, TokenStore } from "./token-store.js";
import {
  type EnvelopeAnswer,
  type EnvelopeRequest,
  type RefreshTokenDelivery,
  type Transport,
  answerError,
  dataOf,
  malformedAnswer,
} from "./transport.js";
import type { AuthUser, TokenSet } from "./types.js";

/** The contract's code for an access or refresh token that is invalid, expired or revoked. */
export const invalidTokenCode = 40101;
const tooManyAttemptsCode = 42900;

/** What a {@link Session} needs. */
export interface SessionOptions {
  transport: Transport;
  store: TokenStore;
  events: ClientEvents;
  /** The client's clock, in epoch milliseconds. */
  now: () => number;
  /** Refresh before a request when the access token expires within this many seconds; 0 never does. */
  refreshAheadSeconds: number;
}

/**
 * The tokens of one client and the requests that carry them. Of any number of requests refused
 * with 40101, however they interleave, exactly one refresh is sent; each of them is sent again
 * once, with the renewed token, and never a third time.
 */
export interface Session {
  /** The stored tokens, or null when signed out. */
  tokens(): Promise<StoredTokens | null>;
  /** Stores the tokens of a completed sign-in and emits `signedIn`. */
  begin(tokens: TokenSet): Promise<AuthUser>;
  /**
   * Reads the token set of a successful answer as this client's transport asked for it: with the
   * refresh token in the body, or in cookie mode without it (see {@link readTokenSet}).
   */
  tokenSet(answer: EnvelopeAnswer): TokenSet;
  /**
   * In cookie mode, brings back the session of the refresh cookie after a reload: one refresh
   * (`POST /auth/refresh` with an empty body, the browser sending the cookie), however many calls
   * are under way at once; its tokens are kept and `signedIn` emitted. Resolves with the user, or
   * null when the server knows no session for this browser (a refusal; nothing is emitted). When the
   * client already holds tokens, or keeps its refresh token in a store, it sends nothing and
   * resolves with the user it holds.
   *
   * @throws {AuthClientError} when the server could not be reached or could not answer (`network`, 50300, 42900).
   */
  restore(): Promise<AuthUser | null>;
  /**
   * The device token of this client's last completed sign-in, kept in memory across sign-outs
   * (RL-5): a login sends it back, so failures of other clients cannot lock this one out. A
   * browser also holds it as an HttpOnly cookie, which outlives the page.
   */
  deviceToken(): string | undefined;
  /** Forgets the tokens and, if this client knew a session, emits `signedOut` with `reason`. */
  end(reason: SignOutReason): Promise<void>;
  /**
   * Revokes the session on the server (`POST /auth/logout`, after any refresh under way, and under
   * the store's `runExclusive`, so with the tokens no other client is refreshing), then forgets the
   * tokens and emits `signedOut` with `reason`, whatever the server answered. Resolves with what
   * kept the server from revoking it (no answer, 50300…), or null: a 40101 means the session was
   * already gone. Without tokens it sends nothing, except in cookie mode, where the browser may hold
   * a session cookie this client has not restored: the logout then revokes it and deletes the cookie.
   */
  logout(reason: SignOutReason): Promise<AuthClientError | null>;
  /** Keeps a newer view of the signed-in user beside the tokens. */
  updateUser(user: AuthUser): Promise<void>;
  /**
   * Stores the tokens of a new session that replaced this client's, as {@link Session.begin} stores
   * a sign-in's but without `signedIn` (the same user carries on): a re-authentication ends the
   * session it proves and answers a new one's tokens (STUP-2, ASVS 7.2.4). Under the store's
   * `runExclusive`, so that no refresh of another client of the store reads the tokens half-way.
   */
  replace(tokens: TokenSet): Promise<AuthUser>;
  /**
   * Keeps a new access token of this same session in place of the stored one (an organization
   * switch answers one): the refresh token and the user stay. After any refresh or
   * re-authentication under way, under the store's `runExclusive`, reading the latest tokens, so
   * that a refresh token another client has just renewed is kept. Nothing is emitted (a refresh
   * emits nothing either); without tokens it keeps nothing.
   */
  keepAccessToken(accessToken: string, expiresIn: number): Promise<void>;
  /**
   * Sends a re-authentication: a bearer route whose answer is the token set of a new session that
   * replaces this one (STUP-2, ASVS 7.2.4), and stores it as {@link Session.replace} does. It goes
   * after any refresh or re-authentication under way, under the store's `runExclusive`; an access
   * token refused (40101) is refreshed once, and the request sent again. While it is under way it
   * stands in for a refresh: a request refused with 40101 meanwhile (the server has ended the
   * session of its token) waits for it and is sent again with the new access token, and no refresh
   * is sent with the refresh token of the ended session; if it fails, such a request refreshes as
   * it would have.
   *
   * @throws {AuthClientError} `not_signed_in` without tokens (nothing is sent), the route's error, or `invalid_response` when the answer is no token set.
   */
  reauthenticate(request: Omit<EnvelopeRequest, "accessToken">): Promise<AuthUser>;
  /**
   * Renews the tokens now, joining a refresh already under way (or taking the tokens of a
   * re-authentication under way).
   *
   * @throws {AuthClientError} the refresh's error; a refusal (a 4xx code other than 42900) has signed out first.
   */
  refresh(): Promise<StoredTokens>;
  /** Resolves when no refresh or re-authentication that was under way is any more. */
  settled(): Promise<void>;
  /**
   * Sends a request with the access token (none when signed out). When `refusal` finds the answer
   * refused for the token (40101), refreshes once, shared with every other request that meets it,
   * and sends the request again with the renewed token; the second answer is returned whatever it is.
   * A request refused for a token whose refresh failed after the request was sent takes that
   * failure and sends no refresh of its own; a request sent after the failure tries again.
   *
   * @throws {AuthClientError} the refresh's error when the refresh fails, or `refusal`'s error when
   * the session ended while the request was under way.
   */
  withBearer<T>(
    send: (accessToken: string | null) => Promise<T>,
    refusal: (answer: T) => AuthClientError | null | Promise<AuthClientError | null>,
  ): Promise<T>;
  /**
   * Calls a bearer route of Portcullis through {@link Session.withBearer} and returns its `data`.
   *
   * @throws {AuthClientError} `not_signed_in` without tokens (nothing is sent), or the route's error.
   */
  call<T>(request: Omit<EnvelopeRequest, "accessToken">): Promise<T>;
}

/** The error of an operation that needs a signed-in client when there are no tokens. */
export function notSignedIn(): AuthClientError {
  return new AuthClientError("Not signed in", { kind: "not_signed_in", code: invalidTokenCode });
}

/**
 * Reads a token set from a successful answer. In cookie mode (`refreshTokenIn` `"cookie"`) the
 * answer must not carry the refresh token (the HttpOnly cookie does: a server that put it in the
 * body did not take up cookie mode), and the set's `refreshToken` is `""`.
 *
 * @throws {AuthClientError} `invalid_response` when the data is not a token set.
 */
export function readTokenSet(answer: EnvelopeAnswer, refreshTokenIn: RefreshTokenDelivery = "body"): TokenSet {
  const data = answer.data as Partial<TokenSet> | undefined;
  const user = data?.user as Partial<AuthUser> | undefined;
  const inCookie = refreshTokenIn === "cookie";
  if (
    typeof data?.accessToken !== "string" ||
    (inCookie ? data.refreshToken !== undefined : typeof data.refreshToken !== "string") ||
    typeof data.expiresIn !== "number" ||
    typeof user?.id !== "string"
  ) {
    throw malformedAnswer(answer);
  }
  return (inCookie ? { ...data, refreshToken: "" } : data) as TokenSet;
}

/** A refresh refused for the token itself ends the session; a throttled, failed or unanswered one does not. */
function refusalEndsSession(code: number): boolean {
  return code >= 40000 && code < 50000 && code !== tooManyAttemptsCode;
}

/**
 * Makes the {@link Session} of a client. Every read of the store notes whether it found tokens;
 * one that finds none after one that did means another client of the store (another tab) signed
 * out or saw the session end, and emits `signedOut` with reason `signed_out_elsewhere`. The
 * store's `subscribe` makes that read happen as soon as the other client writes.
 *
 * @example
 * ```ts
 * const session = createSession({ transport, store: memoryTokenStore(), events, now: Date.now, refreshAheadSeconds: 0 });
 * const user = await session.call<AuthUser>({ method: "GET", path: "/auth/me" });
 * ```
 */
export function createSession(options: SessionOptions): Session {
  const { transport, store, events, now } = options;
  const { refreshTokenIn } = transport;
  /** What refresh and logout send: the refresh token, or in cookie mode nothing (the browser sends the cookie). */
  const presenting = (tokens: StoredTokens | null) =>
    refreshTokenIn === "cookie" || tokens === null ? {} : { refreshToken: tokens.refreshToken };
  /** The restore under way: one refresh for every call of {@link Session.restore} meanwhile. */
  let restoring: Promise<AuthUser | null> | null = null;
  const refreshAheadMs = options.refreshAheadSeconds * 1000;
  const exclusive = <T>(task: () => Promise<T>) => (store.runExclusive ? store.runExclusive(task) : task());
  let inflight: Promise<StoredTokens> | null = null;
  /** How many refreshes have ended, succeeded or not: a request notes it before it is sent. */
  let refreshesEnded = 0;
  /** The last refresh that failed: the access token it was to replace, its error, and its place among the ended ones. */
  let failedRefresh: { accessToken: string; error: unknown; ended: number } | null = null;
  /** Whether the last read of the store found tokens (or this client stored them): a session this client knows. */
  let holding = false;
  /** The re-authentication under way: the new session's tokens, or null once it failed. */
  let renewing: Promise<StoredTokens | null> | null = null;

  let deviceToken: string | undefined;
  const stored = (set: TokenSet): StoredTokens => ({
    accessToken: set.accessToken,
    refreshToken: set.refreshToken,
    expiresAt: now() + set.expiresIn * 1000,
    user: set.user,
  });

  /** Stores the token set of a session this client now holds: a sign-in's, or a re-authentication's (a new session). */
  async function keep(set: TokenSet): Promise<StoredTokens> {
    if (typeof set.deviceToken === "string") deviceToken = set.deviceToken;
    const kept = stored(set);
    await store.save(kept);
    holding = true;
    heldSession = accessTokenClaims(kept.accessToken)?.sid;
    return kept;
  }

  /** How many times this client has ended a session: a read that spans one does not set `holding` again. */
  let ends = 0;
  /** The session (`sid`) of the tokens this client last held, and of the last one it saw end. */
  let heldSession: unknown;
  let endedSession: unknown;

  /** Reads the store, with `loadLatest` when `latest` and the store has it, and announces a session another client ended. */
  async function read(latest = false): Promise<StoredTokens | null> {
    const endsBefore = ends;
    const tokens = await (latest && store.loadLatest ? store.loadLatest() : store.load());
    // A read begun before this client ended the session saw the tokens it ended: it holds nothing.
    if (ends !== endsBefore) return tokens;
    if (tokens === null && holding) events.emit("signedOut", { reason: "signed_out_elsewhere" });
    const session = tokens === null ? undefined : accessTokenClaims(tokens.accessToken)?.sid;
    // Tokens of a session this client saw end (another tab saved them after it did) are not held
    // again: its end is announced once, whoever's request meets it next.
    holding = tokens !== null && (session === undefined || session !== endedSession);
    if (holding) heldSession = session;
    return tokens;
  }
  store.subscribe?.(() => {
    read().catch(() => undefined);
  });

  /** Every `signedOut` follows a change of `holding` from true to false: once per session, whoever sees it end first. */
  async function end(reason: SignOutReason): Promise<void> {
    ends += 1;
    endedSession = heldSession;
    await store.save(null);
    if (!holding) return;
    holding = false;
    events.emit("signedOut", { reason });
  }

  /** Tokens this client's own refresh answered, as opposed to tokens it found in the store. */
  const exchangedHere = new WeakSet<StoredTokens>();

  async function exchange(current: StoredTokens): Promise<StoredTokens> {
    const answer = await transport.send({ method: "POST", path: "/auth/refresh", body: presenting(current) });
    if (answer.code !== 0) {
      if (refusalEndsSession(answer.code)) await end("session_ended");
      throw answerError(answer);
    }
    const renewed = stored(readTokenSet(answer, refreshTokenIn));
    await store.save(renewed);
    exchangedHere.add(renewed);
    return renewed;
  }

  /**
   * The one refresh in flight, begun if there is none. `staleAccessToken` is the token a refused
   * request carried: when the store already holds another (renewed by a refresh that finished
   * meanwhile, here or in another tab), that one is used and nothing is sent.
   */
  function refreshFrom(staleAccessToken?: string, refusal?: AuthClientError): Promise<StoredTokens> {
    if (renewing) {
      // The re-authentication under way ends the session of these tokens: its new tokens stand in
      // for a refresh's; only if it fails is a refresh sent, as it would have been.
      return renewing.then((renewed) => renewed ?? refreshFrom(staleAccessToken, refusal));
    }
    inflight ??= exclusive(async () => {
      const current = await read(true);
      if (current === null) throw refusal ?? notSignedIn();
      if (staleAccessToken !== undefined && current.accessToken !== staleAccessToken) return current;
      try {
        return await exchange(current);
      } catch (error) {
        failedRefresh = { accessToken: current.accessToken, error, ended: refreshesEnded + 1 };
        throw error;
      }
    }).finally(() => {
      refreshesEnded += 1;
      inflight = null;
    });
    return inflight;
  }

  /**
   * The error of a refresh that failed for `accessToken` after a request carrying it was sent:
   * that request met the same expiry as the refresh's own callers and takes its outcome, instead
   * of sending another refresh (a throttled or unreachable one keeps the tokens, so nothing else
   * would stop a burst of refused requests from refreshing one after another).
   */
  function failureSince(endedBeforeSending: number, accessToken: string): unknown {
    const failed = failedRefresh;
    return failed && failed.ended > endedBeforeSending && failed.accessToken === accessToken ? failed.error : null;
  }

  /** Refreshes ahead of expiry; if that fails but the tokens are still there, the request goes with them. */
  async function freshEnough(tokens: StoredTokens): Promise<StoredTokens> {
    if (refreshAheadMs <= 0 || tokens.expiresAt - now() > refreshAheadMs) return tokens;
    try {
      return await refreshFrom(tokens.accessToken);
    } catch (error) {
      const still = await read();
      if (still === null) throw error;
      return still;
    }
  }

  /**
   * Sends a re-authentication with the latest tokens, refreshing once when its access token is
   * refused, and stores the new session's tokens (see {@link Session.reauthenticate}).
   */
  async function sendReauthentication(request: Omit<EnvelopeRequest, "accessToken">): Promise<StoredTokens> {
    let current = await read(true);
    if (current === null) throw notSignedIn();
    let answer = await transport.send({ ...request, accessToken: current.accessToken });
    if (answer.code === invalidTokenCode) {
      current = await exchange(current);
      answer = await transport.send({ ...request, accessToken: current.accessToken });
    }
    if (answer.code !== 0) throw answerError(answer);
    const kept = await keep(readTokenSet(answer, refreshTokenIn));
    exchangedHere.add(kept);
    return kept;
  }

  const session: Session = {
    tokens: () => read(),
    async begin(set) {
      await keep(set);
      events.emit("signedIn", { user: set.user });
      return set.user;
    },
    tokenSet: (answer) => readTokenSet(answer, refreshTokenIn),
    restore() {
      restoring ??= exclusive(async () => {
        const held = await read(true);
        if (held !== null || refreshTokenIn !== "cookie") return held?.user ?? null;
        const answer = await transport.send({ method: "POST", path: "/auth/refresh", body: presenting(null) });
        if (answer.code !== 0) {
          if (refusalEndsSession(answer.code)) return null;
          throw answerError(answer);
        }
        return session.begin(readTokenSet(answer, refreshTokenIn));
      }).finally(() => {
        restoring = null;
      });
      return restoring;
    },
    async replace(set) {
      await exclusive(() => keep(set));
      return set.user;
    },
    async keepAccessToken(accessToken, expiresIn) {
      await session.settled();
      await exclusive(async () => {
        const current = await read(true);
        if (current !== null) await store.save({ ...current, accessToken, expiresAt: now() + expiresIn * 1000 });
      });
    },
    async reauthenticate(request) {
      const before = renewing;
      const renewal = (async () => {
        await before;
        await inflight?.catch(() => undefined);
        return exclusive(() => sendReauthentication(request));
      })();
      const outcome = renewal.catch(() => null);
      renewing = outcome;
      void outcome.then(() => {
        if (renewing === outcome) renewing = null;
      });
      return (await renewal).user;
    },
    deviceToken: () => deviceToken,
    end,
    async logout(reason) {
      await session.settled();
      return exclusive(async () => {
        const tokens = await read(true);
        // In cookie mode the browser may hold a session this client has not restored: the cookie goes anyway.
        if (tokens === null && refreshTokenIn !== "cookie") return null;
        let failure: AuthClientError | null = null;
        try {
          const answer = await transport.send({
            method: "POST",
            path: "/auth/logout",
            body: presenting(tokens),
          });
          if (answer.code !== 0 && answer.code !== invalidTokenCode) failure = answerError(answer);
        } catch (error) {
          failure = error as AuthClientError; // transport.send throws nothing else
        }
        await end(reason);
        return failure;
      });
    },
    async updateUser(user) {
      const current = await read();
      if (current) await store.save({ ...current, user });
    },
    refresh: () => refreshFrom(),
    settled: async () => {
      await renewing;
      await inflight?.then(
        () => undefined,
        () => undefined,
      );
    },
    async withBearer(send, refusal) {
      const endedBeforeSending = refreshesEnded;
      const loaded = await read();
      const tokens = loaded && (await freshEnough(loaded));
      const first = await send(tokens?.accessToken ?? null);
      if (!tokens) return first;
      const refused = await refusal(first);
      if (!refused) return first;
      const failed = failureSince(endedBeforeSending, tokens.accessToken);
      if (failed) throw failed;
      const renewed = await refreshFrom(tokens.accessToken, refused);
      const second = await send(renewed.accessToken);
      const refusedAgain = await refusal(second);
      if (!refusedAgain || exchangedHere.has(renewed)) return second;
      // The store held another token than the one refused and it was taken as renewed, but it
      // may be older still (another tab's copy of the store was behind): refresh from it once.
      const latest = await refreshFrom(renewed.accessToken, refusedAgain);
      return latest.accessToken === renewed.accessToken ? second : send(latest.accessToken);
    },
    async call<T>(request: Omit<EnvelopeRequest, "accessToken">) {
      if ((await read()) === null) throw notSignedIn();
      const answer = await session.withBearer(
        (accessToken) => transport.send({ ...request, accessToken }),
        (answer) => (answer.code === invalidTokenCode ? answerError(answer) : null),
      );
      return dataOf<T>(answer);
    },
  };
  return session;
}
