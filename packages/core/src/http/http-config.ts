import { type OptionNames, fail, refuseUnknownOptions } from "../config-values.js";

/** The `http` options of `createAuth`: where the routes live and how they answer. */
export interface HttpConfig {
  /** Where the routes are mounted. Default `/api/v1`. */
  basePath?: string;
  /** `"always-200"` answers every response with status 200 for clients that read only `code`. */
  statusMode?: "standard" | "always-200";
  /**
   * Addresses or CIDR ranges of proxies whose `X-Forwarded-For` is believed. Default none:
   * the client address is the socket's peer (RL-3).
   */
  trustedProxies?: string[];
  /**
   * UNSAFE: serve every route over plain HTTP from any client. By default a request that did
   * not arrive over TLS (directly, or per a trusted proxy's `X-Forwarded-Proto`) is refused
   * with 40300 unless its client is on loopback (HTTP-7). Default false.
   */
  unsafeAllowPlainHttp?: boolean;
  /**
   * Serve the OpenAPI 3.1 document of the routes (`openApiDocument`) at
   * `GET <basePath>/auth/openapi.json`, public. Default false: the route answers 40400.
   */
  openApi?: boolean;
  /**
   * Also serve the password change at `PUT <basePath>/users/me/password` with
   * `{oldPassword, newPassword}` (and an optional `totpCode`), as clients built for the original
   * service send it (`docs/compatibility.md`; SE-6). It is `POST <basePath>/auth/password` under
   * another path and field name: the same checks, throttles, events and sessions ended. Default
   * false: the path is not Portcullis's, and the app (or its framework's 404) answers it.
   */
  passwordChangeAlias?: boolean;
}

/** {@link HttpConfig} with its defaults filled in. */
export interface ResolvedHttpConfig {
  basePath: string;
  statusMode: "standard" | "always-200";
  /** Read into a trust check by `createProxyTrust`, which refuses an entry it cannot read. */
  trustedProxies: string[];
  unsafeAllowPlainHttp: boolean;
  /** Whether `GET <basePath>/auth/openapi.json` serves the OpenAPI document. */
  openApi: boolean;
  /** Whether `PUT <basePath>/users/me/password` changes the password (SE-6). */
  passwordChangeAlias: boolean;
}

/** Checks the `http` options and fills in their defaults; throws a `TypeError` naming a bad one. */
export function resolveHttpConfig(config: HttpConfig | undefined): ResolvedHttpConfig {
  const options = {
    basePath: true,
    statusMode: true,
    trustedProxies: true,
    unsafeAllowPlainHttp: true,
    openApi: true,
    passwordChangeAlias: true,
  } satisfies OptionNames<HttpConfig>;
  refuseUnknownOptions(config, options, "http.");
  const basePath = config?.basePath ?? "/api/v1";
  if (!/^(\/[A-Za-z0-9._~-]+)*$/.test(basePath)) {
    fail(`http.basePath must look like "/api/v1" (or "" for the root); got ${JSON.stringify(basePath)}`);
  }
  const statusMode = config?.statusMode ?? "standard";
  if (statusMode !== "standard" && statusMode !== "always-200") {
    fail(`http.statusMode must be "standard" or "always-200"; got ${JSON.stringify(statusMode)}`);
  }
  const unsafeAllowPlainHttp = config?.unsafeAllowPlainHttp ?? false;
  if (typeof unsafeAllowPlainHttp !== "boolean") {
    fail(`http.unsafeAllowPlainHttp must be true or false; got ${JSON.stringify(unsafeAllowPlainHttp)}`);
  }
  const openApi = config?.openApi ?? false;
  if (typeof openApi !== "boolean") fail(`http.openApi must be true or false; got ${JSON.stringify(openApi)}`);
  const passwordChangeAlias = config?.passwordChangeAlias ?? false;
  if (typeof passwordChangeAlias !== "boolean") {
    fail(`http.passwordChangeAlias must be true or false; got ${JSON.stringify(passwordChangeAlias)}`);
  }
  return {
    basePath,
    statusMode,
    trustedProxies: [...(config?.trustedProxies ?? [])],
    unsafeAllowPlainHttp,
    openApi,
    passwordChangeAlias,
  };
}
