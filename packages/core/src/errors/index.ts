export { AuthError, isAuthError, type AuthErrorOptions } from "./auth-error.js";
export { ErrorCode, defaultMessages, httpStatusFor } from "./codes.js";
