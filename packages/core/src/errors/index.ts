export { AuthError, type AuthErrorOptions, isAuthError } from "./auth-error.js";
export { ErrorCode, defaultMessages, httpStatusFor } from "./codes.js";
