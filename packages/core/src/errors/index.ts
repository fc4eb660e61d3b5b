export { AuthError, type AuthErrorOptions, isAuthError, storageUnavailable } from "./auth-error.js";
export { ErrorCode, defaultMessages, httpStatusFor } from "./codes.js";
