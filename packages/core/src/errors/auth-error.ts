import { ErrorCode, defaultMessages } from "./codes.js";

/** Options for {@link AuthError}. */
export interface AuthErrorOptions {
  /** The underlying error, kept for logs; never sent to the client. */
  cause?: unknown;
  /** Seconds until the caller may try again (code 42900); becomes `Retry-After`. */
  retryAfterSeconds?: number;
  /** What the envelope's `data` says of the refusal, for a code that carries it (40104's `required`); never a secret. */
  data?: Record<string, unknown>;
}

/**
 * The one error class of Portcullis. It carries a business code from the contract, a
 * message that is safe to show a client (it never holds a password, code or token), and the
 * original error as `cause`.
 *
 * @example
 * ```ts
 * try { await login(auth, input); }
 * catch (error) { if (error instanceof AuthError && error.code === ErrorCode.TooManyAttempts) … }
 * ```
 */
export class AuthError extends Error {
  override readonly name = "AuthError";
  /** The business code of the contract: what the client receives as the envelope's `code`. */
  readonly code: ErrorCode;
  /** Seconds until the caller may try again, for 42900; undefined otherwise. */
  readonly retryAfterSeconds: number | undefined;
  /** The envelope's `data` of the refusal (40104's `{ required }`); undefined for most codes. */
  readonly data: Record<string, unknown> | undefined;

  /** An error with `code`, and that code's default message unless `message` gives a safe one of its own. */
  constructor(code: ErrorCode, message: string = defaultMessages[code], options: AuthErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.data = options.data;
  }
}

/** True when `error` is an {@link AuthError}, optionally with the given code. */
export function isAuthError(error: unknown, code?: ErrorCode): error is AuthError {
  return error instanceof AuthError && (code === undefined || error.code === code);
}

/**
 * The error a storage adapter throws when its store cannot be reached (the database is down,
 * its connection was cut, a pool timed out): the request answers 50300 "Storage is unavailable"
 * and the client may retry, where any other error thrown by storage is a bug and answers 50000.
 * `cause` (the driver's error) goes to `onInternalError`, never to the client.
 *
 * @example
 * ```ts
 * try { return await pool.query(sql, values); }
 * catch (error) { throw isConnectionError(error) ? storageUnavailable(error) : error; }
 * ```
 */
export function storageUnavailable(cause: unknown): AuthError {
  return new AuthError(ErrorCode.Unavailable, "Storage is unavailable", { cause });
}
