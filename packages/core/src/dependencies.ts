/**
 * Loads a module on first use and keeps it, so that `import "@portcullis/core"` does not load
 * what a service may never call. A failed load is not kept: the next call tries again.
 */
export function onFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => {
    loaded ??= load().catch((error: unknown) => {
      loaded = undefined;
      throw error;
    });
    return loaded;
  };
}

/** `@node-rs/argon2`, loaded by the first password hash or verification. */
export const argon2 = onFirstUse(() => import("@node-rs/argon2"));

/** `@node-rs/bcrypt`, loaded by the first sign-in against an imported bcrypt hash (IM-1). */
export const bcrypt = onFirstUse(() => import("@node-rs/bcrypt"));

/** `otpauth`, loaded by the first TOTP enrolment or code check. */
export const otpauth = onFirstUse(() => import("otpauth"));

/** `@simplewebauthn/server`, loaded by the first passkey ceremony. */
export const simpleWebAuthn = onFirstUse(() => import("@simplewebauthn/server"));

/** `jose`, loaded by `createAuth` in the background and awaited by the first token signed or verified. */
export const jose = onFirstUse(() => import("jose"));

/** `oauth4webapi`, loaded by the first OAuth or OpenID Connect sign-in. */
export const oauth4webapi = onFirstUse(() => import("oauth4webapi"));

/**
 * `@opentelemetry/api`, an optional peer: loaded by `createAuth` in the background unless
 * `telemetry: false`; when it is not installed the load fails and telemetry stays off.
 */
export const openTelemetry = onFirstUse(() => import("@opentelemetry/api"));
