import { asksCookieDelivery, refreshCookieOf } from "../../cookie-sessions/refresh-cookie.js";
import { AuthError } from "../../errors/auth-error.js";
import { ErrorCode } from "../../errors/codes.js";
import type { LoginResult } from "../../flows/login-result.js";
import type { ReauthenticationProof } from "../../flows/reauthenticate.js";
import type { AccessContext } from "../../tokens/access-token.js";
import type { TokenSet } from "../../tokens/issue-tokens.js";
import { deviceCookie, deviceTokenFromCookie } from "../cookies.js";
import type { JsonSchema } from "../openapi-schemas.js";
import type { RouteContext, RouteResult } from "../route-types.js";

/** The user a `bearer` or `admin` route's access token speaks for. */
export const signedIn = (context: RouteContext): string => (context.access as AccessContext).userId;

/** The session of a `bearer` or `admin` route's access token: the one a user's own change keeps (SE-2). */
export const sessionOf = (context: RouteContext): string => (context.access as AccessContext).sessionId;

/**
 * The re-authentication a bearer route offers (STUP-3): the token's session, and the `password`
 * and `totpCode` of the body.
 */
export const reauthentication = (context: RouteContext): ReauthenticationProof => ({
  sessionId: sessionOf(context),
  password: context.body.password as string | undefined,
  totpCode: context.body.totpCode as string | undefined,
});

/** The answer of a route that completes a login: tokens, 40102 with a temporary token, or 40105 with an enrolment token (STUP-4). */
/** The device token a sign-in request carries: `deviceToken` of the body, else the device cookie (RL-5). */
export const deviceTokenOf = ({ body, header, secure }: RouteContext): string | undefined =>
  body.deviceToken !== undefined ? (body.deviceToken as string) : deviceTokenFromCookie(header("cookie"), secure);

export const loginResponse = async (context: RouteContext, result: LoginResult): Promise<RouteResult> => {
  if (result.status === "authenticated") return await signedInResponse(context, result.tokens);
  const code = result.status === "totp_required" ? ErrorCode.SecondFactorRequired : ErrorCode.SecondFactorEnrolmentRequired;
  return { code, data: { tempToken: result.tempToken } };
};

/**
 * The answer of a completed sign-in, a refresh or a re-authentication: the token set, and the device
 * token also as a cookie (RL-5). In cookie mode (`inCookie`, by default when the request asks for it)
 * the refresh token goes in the refresh cookie instead of the body (CK-1, CK-2).
 */
export const signedInResponse = async (
  context: RouteContext,
  tokens: TokenSet,
  inCookie: boolean = asksCookieDelivery(context),
): Promise<RouteResult> => {
  const { auth, secure } = context;
  const cookies = tokens.deviceToken === undefined ? [] : [deviceCookie(auth, tokens.deviceToken, secure)];
  if (!inCookie) return { data: tokens, cookies };
  const { refreshToken: _inTheCookie, ...data } = tokens;
  return { data, cookies: [...cookies, await refreshCookieOf(auth, tokens, secure)] };
};

/** What the routes that complete a sign-in say of the device cookie and the refresh cookie. */
export const setsDeviceCookie =
  "On success, `portcullis_device` (`__Host-portcullis_device` over TLS), HttpOnly, SameSite=Strict: the device token (RL-5). In cookie mode (`X-Portcullis-Token-Delivery: cookie`), also `portcullis_refresh` (`__Host-portcullis_refresh` over TLS), HttpOnly, SameSite=Strict, for the refresh token's lifetime, and `data` has no `refreshToken` (CK-1, CK-2)";

/** What a re-authentication's answer says of the refresh cookie. */
export const setsRefreshCookie =
  "In cookie mode (`X-Portcullis-Token-Delivery: cookie`), the new session's refresh token: `portcullis_refresh` (`__Host-portcullis_refresh` over TLS), HttpOnly, SameSite=Strict, for its lifetime; `data` has no `refreshToken` (CK-1)";

/** The `password` field of a bearer route that may ask to re-authenticate. */
export const passwordProof: JsonSchema = {
  type: "string",
  description:
    "The current password, needed unless the session's sign-in or re-authentication within `reauthentication.recentSignIn` proved a first factor (STUP-3)",
};

/** The `totpCode` field of a bearer route that may ask to re-authenticate. */
export const totpCodeProof: JsonSchema = {
  type: "string",
  description:
    "A current code of the user's authenticator: with TOTP on, needed beside the password unless the session's sign-in or re-authentication within `reauthentication.recentSignIn` proved a second factor (STUP-3)",
};

/** The re-authentication fields of a body (STUP-3): the password, and a TOTP code when TOTP is on. */
export const proofFields = { password: passwordProof, totpCode: totpCodeProof };

/** A query parameter given at most once; an empty one is absent. */
export function queryValue(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  if (values.length > 1) throw new AuthError(ErrorCode.MalformedParameter, `${name} must be given once`);
  return values[0] === "" ? undefined : values[0];
}

/** The `limit` of a listing's query: digits only, else 40002 (the flow checks the range, up to `max`). */
export function limitOf(value: string | undefined, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9]{1,3}$/.test(value)) {
    throw new AuthError(ErrorCode.MalformedParameter, `limit must be a whole number from 1 to ${max}`);
  }
  return Number(value);
}
