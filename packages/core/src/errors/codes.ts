/**
 * The business codes of the HTTP contract (`contract.md`). `0` is success; every other code
 * names one kind of failure and fixes the HTTP status it travels with.
 */
export const ErrorCode = {
  MissingParameter: 40001,
  MalformedParameter: 40002,
  AuthenticationFailed: 40100,
  InvalidToken: 40101,
  SecondFactorRequired: 40102,
  SecondFactorFailed: 40103,
  /** The route needs a more recent sign-in or more factors than the session proved: `data.required` says which (STUP-2). HTTP 401. */
  StepUpRequired: 40104,
  /** A first factor was accepted, but a second factor must be enrolled first: `data.tempToken` enrols it (STUP-4). HTTP 200. */
  SecondFactorEnrolmentRequired: 40105,
  Forbidden: 40300,
  NotFound: 40400,
  Conflict: 40900,
  ValidationFailed: 42200,
  TooManyAttempts: 42900,
  Internal: 50000,
  Unavailable: 50300,
} as const;

/** One of the contract's non-zero business codes. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** The default message for each code: short, fixed, and free of anything the caller sent. */
export const defaultMessages: Record<ErrorCode, string> = {
  40001: "A required parameter is missing",
  40002: "A parameter is malformed",
  40100: "Authentication failed",
  40101: "The token is invalid or expired",
  40102: "A second factor is required",
  40103: "The second factor is wrong or was already used",
  40104: "Step-up required: re-authenticate, then try again",
  40105: "A second factor must be enrolled first",
  40300: "Forbidden",
  40400: "Not found",
  40900: "Conflict",
  42200: "Validation failed",
  42900: "Too many attempts; try again later",
  50000: "Internal error",
  50300: "A dependency is unavailable; try again later",
};

/**
 * The HTTP status for a business code: 0, 40102 and 40105 (partial successes) travel as 200,
 * every other code as its first three digits (40001 → 400, 42900 → 429).
 */
export function httpStatusFor(code: number): number {
  if (code === 0 || code === ErrorCode.SecondFactorRequired || code === ErrorCode.SecondFactorEnrolmentRequired) return 200;
  return Math.trunc(code / 100);
}
