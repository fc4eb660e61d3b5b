import type { Auth } from "../auth.js";
import type { ErrorCode } from "../errors/codes.js";
import type { AccessContext } from "../tokens/access-token.js";
import type { JsonSchema } from "./openapi-schemas.js";

/** What a route handler receives. */
export interface RouteContext {
  auth: Auth;
  /**
   * The JSON body of a POST, PUT or PATCH, checked by `readJsonBody`; of a DELETE too when it
   * carries a `Content-Type` (a re-authentication proof); `{}` otherwise.
   */
  body: Record<string, unknown>;
  /** The values of the path's `:name` segments, as they appear in the normalised path. */
  params: Record<string, string>;
  /** The query string of the request (without the `?`). */
  query: string;
  /** Whether the request arrived over TLS (directly, or per a trusted proxy): decides `Secure` cookies. */
  secure: boolean;
  /** A request header by lower-case name. */
  header(name: string): string | undefined;
  /** The client address, resolved through the trusted-proxy setting (RL-3). */
  ip: string | undefined;
  /** Set on `bearer` and `admin` routes: who the access token speaks for. */
  access: AccessContext | undefined;
}

/** What a route handler returns: the envelope's `data`, and its code when it is not 0. */
export interface RouteResult {
  data: unknown;
  code?: 0 | typeof ErrorCode.SecondFactorRequired | typeof ErrorCode.SecondFactorEnrolmentRequired;
  /** Send `data` itself as the body, not in the envelope: for standard documents (a JWK Set). */
  bare?: { cacheControl: string };
  /** `Set-Cookie` header values to send with the answer. */
  cookies?: string[];
  /** Send `data` itself as the body with RFC 6749 §5.1's `Cache-Control: no-store` and `Pragma: no-cache`: a token endpoint's answer. */
  oauth?: true;
  /** Answer with a 302 to this URL instead of the envelope. */
  redirectTo?: string;
}

/** A parameter of a route other than its JSON body, for the OpenAPI document. */
export interface ParameterDoc {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  description: string;
  /** Path parameters are always required. Default false. */
  required?: boolean;
  /** Default `{ type: "string" }`. */
  schema?: JsonSchema;
}

/** The group a route is listed under in the OpenAPI document. */
export type RouteTag =
  | "Sign-in"
  | "Tokens"
  | "Second factor"
  | "Passkeys"
  | "OAuth"
  | "Directory"
  | "Account"
  | "Step-up"
  | "Email"
  | "Administration"
  | "Organizations"
  | "API keys"
  | "Service accounts"
  | "Impersonation"
  | "Metadata";

/**
 * What a route takes and answers, written once beside its handler: `openApiDocument` builds the
 * OpenAPI operation from it, and the HTTP tests check the server's real answers against it.
 */
export interface RouteDoc {
  /** Unique; the name of the core flow the route serves where there is one. */
  operationId: string;
  summary: string;
  description?: string;
  tag: RouteTag;
  parameters?: ParameterDoc[];
  /** The JSON body of a POST, PUT or PATCH; of a DELETE, an optional one. */
  body?: JsonSchema;
  /** The envelope's `data` on success (code 0); with `bare`, the whole body. */
  data: JsonSchema;
  /**
   * The success `data` where an option changes it (the recovery codes `totp.recoveryCodesAtSetup`
   * adds to `2fa/setup`): `data` for this auth's configuration. Default `data` itself.
   */
  dataFor?: (auth: Auth) => JsonSchema;
  /** The success body is `data` itself, not the envelope (the route returns `bare`). */
  bare?: true;
  /** The `data` of a code-40102 answer, for a route that may ask for the second factor. */
  secondFactor?: JsonSchema;
  /**
   * The `data` of a code-40105 answer, for a route that completes a sign-in and so may ask to enrol
   * a second factor first (STUP-4): documented only where `secondFactor.required` is configured.
   */
  enrolment?: JsonSchema;
  /**
   * The other codes the route may answer. Those every route of its kind answers are added by
   * the document: 40300 and 50000 on every route, 40002 on a POST or PUT, 40101 and 50300 with
   * a bearer token, 40300 on an admin route.
   */
  codes: ErrorCode[];
  /** What the `Set-Cookie` of a successful answer is for. */
  setsCookie?: string;
  /** When the route answers with a 302 instead of the envelope. */
  redirect?: string;
}

/** One entry of the route table. */
export interface Route {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /**
   * Under the base path (`/auth/login`), or absolute when `atRoot` (`/.well-known/jwks.json`).
   * A segment `:name` matches any one non-empty segment, passed in `params`. A route under the
   * base path but not under its `/auth` (`/users/me/password`, a compatibility alias) must have
   * `enabled`: its path is Portcullis's only for an auth that turns it on, read once per auth.
   */
  path: string;
  atRoot?: boolean;
  /** When it returns false the route does not exist for this auth (40400): a feature not configured. */
  enabled?: (auth: Auth) => boolean;
  /**
   * `bearer` routes need a live access token (AT-6: from the Authorization header only);
   * `admin` routes need one whose roles hold the configured `adminRole` (40300 otherwise).
   */
  access: "public" | "bearer" | "admin";
  /** The body limit in bytes. Default 64 KiB. */
  bodyLimit?: number;
  /**
   * How the body is read: `json` (default, `readJsonBody`), or `form` for an
   * `application/x-www-form-urlencoded` body of single-valued parameters (`readFormBody`; the OAuth
   * token endpoint, RFC 6749 §4.4.2), each a string in `context.body`.
   */
  body?: "json" | "form";
  /**
   * How a refusal is answered: in the envelope (default), or `oauth`: RFC 6749 §5.2's
   * `{ error, error_description }` with its status, never the envelope (see `oauthErrorResponse`).
   */
  errors?: "envelope" | "oauth";
  doc: RouteDoc;
  /** Serves the request once its access is checked; an `AuthError` it throws becomes the error envelope. */
  handle(context: RouteContext): Promise<RouteResult>;
}
