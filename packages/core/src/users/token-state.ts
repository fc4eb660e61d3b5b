import type { Auth } from "../auth.js";
import {
  type Revocation,
  type RevocationChannel,
  type RevocationReceiver,
  decodeRevocation,
  encodeRevocation,
} from "./revocation-channel.js";

/** One cached check of `verifyAccessToken`: this session was live, of this user, at this token version. */
export interface TokenStateEntry {
  userId: string;
  tokenVersion: number;
  /** The organization and roles the token carried, as compared (OR-7); undefined for none. */
  org: string | undefined;
  /** When it was read from storage (the instance's clock). */
  checkedAt: number;
  /** When the session ends by itself; the entry answers for no longer. */
  sessionExpiresAt: number;
}

/** Where an instance's revocation channel stands. */
export type RevocationChannelStatus = "none" | "connecting" | "connected" | "lost";

/** @internal What an auth instance knows of revocations beside its cache. */
export interface RevocationState {
  /**
   * Rises each time cached state is dropped. A check that read storage caches its answer only
   * when it has not moved meanwhile: a revocation heard during the read may concern it.
   */
  generation: number;
  readonly channel: RevocationChannel | null;
  status: RevocationChannelStatus;
}

/** The request id under which a revocation channel's errors reach `onInternalError`. */
export const revocationChannelErrorId = "revocation-channel";

/** @internal A fresh {@link RevocationState} for `channel` (null: none). */
export function revocationState(channel: RevocationChannel | null): RevocationState {
  return { generation: 0, channel, status: channel === null ? "none" : "connecting" };
}

/** Drops this instance's cached token state that `revocation` concerns (and any check under way from being cached). */
export function forgetTokenState(auth: Auth, revocation: Revocation): void {
  auth.revocations.generation += 1;
  const cache = auth.tokenStateCache;
  switch (revocation.kind) {
    case "session":
      cache.delete(revocation.sessionId);
      return;
    case "user_sessions":
      for (const [sessionId, entry] of cache) {
        if (entry.userId === revocation.userId && sessionId !== revocation.keptSessionId) cache.delete(sessionId);
      }
      return;
    case "token_version":
      for (const [sessionId, entry] of cache) {
        if (entry.userId === revocation.userId) cache.delete(sessionId);
      }
      return;
    case "all":
      cache.clear();
  }
}

/**
 * Call after a revocation is stored: drops this instance's cached state of it at once and, with
 * a revocation channel, tells the other instances. The channel is not awaited and its failure
 * fails nothing (it goes to `onInternalError`): what is stored is refused everywhere within
 * `tokenStateCacheSeconds` all the same.
 */
export function revoked(auth: Auth, revocation: Revocation): void {
  forgetTokenState(auth, revocation);
  const channel = auth.revocations.channel;
  if (channel === null) return;
  const report = (error: unknown) => reportChannelError(auth, error);
  try {
    channel.publish(encodeRevocation(revocation)).then(undefined, report);
  } catch (error) {
    report(error);
  }
}

/**
 * Subscribes an instance to its channel. A message drops the state it names; a message that is
 * not a revocation is ignored. Each (re)connection drops the whole cache, since messages sent
 * while the channel was down or not yet up were missed; a loss emits
 * `revocation_channel.lost` (its error to `onInternalError`) and a reconnection after it
 * `revocation_channel.restored`. The channel holds the instance weakly, like the sweep timer.
 * It subscribes in a microtask, so listeners added just after `createAuth` hear its first news.
 */
export function listenForRevocations(auth: Auth): void {
  const channel = auth.revocations.channel;
  if (channel === null) return;
  const instance = new WeakRef(auth);
  queueMicrotask(() => subscribe(channel, instance));
}

function subscribe(channel: RevocationChannel, instance: WeakRef<Auth>): void {
  const receiver = receiverFor(instance);
  try {
    channel.subscribe(receiver);
  } catch (error) {
    receiver.lost(error);
  }
}

function receiverFor(instance: WeakRef<Auth>): RevocationReceiver {
  return {
    message(text) {
      const target = instance.deref();
      const revocation = decodeRevocation(text);
      if (target !== undefined && revocation !== null) forgetTokenState(target, revocation);
    },
    connected() {
      const target = instance.deref();
      if (target === undefined) return;
      const { status } = target.revocations;
      target.revocations.status = "connected";
      forgetTokenState(target, { kind: "all" });
      if (status === "lost") target.emit({ type: "revocation_channel.restored", at: target.now() });
    },
    lost(error) {
      const target = instance.deref();
      if (target === undefined || target.revocations.status === "lost") return;
      target.revocations.status = "lost";
      target.emit({
        type: "revocation_channel.lost",
        maxRevocationDelaySeconds: target.config.tokenStateCacheSeconds,
        at: target.now(),
      });
      if (error !== undefined) reportChannelError(target, error);
    },
  };
}

/** Hands a channel's error to `onInternalError`; one that throws itself must not reach the channel's event handler. */
function reportChannelError(auth: Auth, error: unknown): void {
  try {
    auth.onInternalError(error, revocationChannelErrorId);
  } catch {
    // The service's own reporter failed: nothing more can be done with the error here.
  }
}

/**
 * Where the instance's revocation channel stands: `none` without one, `connecting` until it
 * first receives, then `connected` or `lost`. For a readiness check: while it is not
 * `connected`, a revocation made on another instance may be accepted here for up to
 * `tokenStateCacheSeconds`.
 *
 * @example
 * ```ts
 * app.get("/ready", (req, res) => res.sendStatus(revocationChannelStatus(auth) === "connected" ? 200 : 503));
 * ```
 */
export function revocationChannelStatus(auth: Auth): RevocationChannelStatus {
  return auth.revocations.status;
}
