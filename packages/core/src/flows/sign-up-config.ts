import { type OptionNames, fail, refuseUnknownOptions } from "../config-values.js";
import { rolesProblem } from "../users/roles.js";

/** The `signUp` options of `createAuth`: accounts people make for themselves (`POST /auth/register`). */
export interface SignUpConfig {
  /**
   * Turns `POST /auth/register` on, and with `passkeys` the sign-up with a passkey
   * (`POST /auth/register/public-key/begin` and `/finish`; PL-15). Default `false`: accounts are
   * made only by the service's own code (`createUser`), by administrators, the directory or a
   * provider (SU-1).
   */
  enabled?: boolean;
  /** The roles of every account sign-up makes. Default none; never the admin role. */
  defaultRoles?: string[];
}

/** {@link SignUpConfig} with its defaults filled in. */
export interface ResolvedSignUpConfig {
  enabled: boolean;
  defaultRoles: string[];
}

/**
 * Checks the `signUp` options and fills in their defaults; throws a `TypeError` naming a bad one.
 * `defaultRoles` holding `adminRole` is refused: every stranger would be an administrator.
 */
export function resolveSignUpConfig(config: SignUpConfig | undefined, adminRole: string): ResolvedSignUpConfig {
  const options = config === undefined ? {} : config;
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    fail(`signUp must be an object such as { enabled: true }; got ${JSON.stringify(options)}`);
  }
  refuseUnknownOptions(options, { enabled: true, defaultRoles: true } satisfies OptionNames<SignUpConfig>, "signUp.");
  const { enabled = false, defaultRoles = [] } = options;
  if (typeof enabled !== "boolean") fail(`signUp.enabled must be true or false; got ${JSON.stringify(enabled)}`);
  const problem = rolesProblem(defaultRoles);
  if (problem !== null) fail(`signUp.defaultRoles ${problem}; got ${JSON.stringify(defaultRoles)}`);
  if (defaultRoles.includes(adminRole)) {
    fail(`signUp.defaultRoles must not hold the admin role "${adminRole}": every stranger would be an administrator`);
  }
  return { enabled, defaultRoles: [...new Set(defaultRoles)] };
}
