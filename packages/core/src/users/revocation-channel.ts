/**
 * What one instance tells the others when token state changes, so that each drops what it has
 * cached of it (`tokenStateCacheSeconds`). Every field is an id that events and the sessions list
 * show already; no token, hash or secret ever travels.
 */
export type Revocation =
  /** One session ended (logout, `DELETE /auth/sessions/:id`, a refresh token reused). */
  | { kind: "session"; sessionId: string }
  /** A user's sessions ended, all of them or all but `keptSessionId` (SE-2). */
  | { kind: "user_sessions"; userId: string; keptSessionId: string | null }
  /** A user's token version rose (TV-1): every token of theirs issued before is refused. */
  | { kind: "token_version"; userId: string }
  /** Many users' token versions rose at once (a directory policy saved): every cached state goes. */
  | { kind: "all" };

/**
 * What a {@link RevocationChannel} calls on the instance that subscribed. It never throws, and
 * any text is safe to hand it: a message that is not one core made is ignored.
 */
export interface RevocationReceiver {
  /** A message another instance (or this one) published, as it came. */
  message(text: string): void;
  /** The channel now receives every message published: at the first subscription and after each loss. */
  connected(): void;
  /** The channel stopped receiving, or could not start; `error` says why, for `onInternalError`. */
  lost(error?: unknown): void;
}

/**
 * Carries revocations between the instances that share a storage (`createAuth`'s
 * `revocationChannel` option; `@portcullis/redis` has one on Redis pub/sub). It moves text:
 * core makes each message and reads each one, so an implementation only delivers what was
 * published, to every subscriber, in any order, at most once.
 *
 * @example
 * ```ts
 * // An in-process channel: every instance of this process hears every other.
 * const receivers = new Set<RevocationReceiver>();
 * const channel: RevocationChannel = {
 *   async publish(message) { for (const receiver of receivers) receiver.message(message); },
 *   subscribe(receiver) { receivers.add(receiver); receiver.connected(); },
 * };
 * ```
 */
export interface RevocationChannel {
  /**
   * Sends a message to every subscribed instance, this one included if it subscribed. A
   * rejection is reported to `onInternalError` and fails no request: the revocation is stored
   * already, and other instances see it within `tokenStateCacheSeconds`.
   */
  publish(message: string): Promise<void>;
  /**
   * Starts delivering messages to `receiver`, and tells it when delivery starts, stops and
   * starts again. `createAuth` calls it once per instance.
   */
  subscribe(receiver: RevocationReceiver): void;
}

/** The longest message core reads; anything longer is ignored unread. */
export const maxRevocationMessageLength = 2048;

const messageVersion = 1;

/** The text of a revocation, as {@link RevocationChannel.publish} carries it. */
export function encodeRevocation(revocation: Revocation): string {
  return JSON.stringify({ v: messageVersion, ...revocation });
}

/** The revocation a message holds, or null for anything else: not JSON, another version, a missing or mistyped field. */
export function decodeRevocation(text: unknown): Revocation | null {
  if (typeof text !== "string" || text.length > maxRevocationMessageLength) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  // Of what JSON.parse gives, only an object can hold `v: 1`; a primitive or an array reads
  // `v` as undefined, and only null must not be read.
  const fields = value as Record<string, unknown> | null;
  if (fields?.v !== messageVersion) return null;
  switch (fields.kind) {
    case "session":
      return isId(fields.sessionId) ? { kind: "session", sessionId: fields.sessionId } : null;
    case "user_sessions":
      if (!isId(fields.userId) || !(fields.keptSessionId === null || isId(fields.keptSessionId))) return null;
      return { kind: "user_sessions", userId: fields.userId, keptSessionId: fields.keptSessionId };
    case "token_version":
      return isId(fields.userId) ? { kind: "token_version", userId: fields.userId } : null;
    case "all":
      return { kind: "all" };
    default:
      return null;
  }
}

const isId = (value: unknown): value is string => typeof value === "string" && value !== "";
