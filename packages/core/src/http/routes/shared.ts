import { ErrorCode } from "../../errors/codes.js";
import type { LoginResult } from "../../flows/login-result.js";
import type { ReauthenticationProof } from "../../flows/reauthenticate.js";
import type { AccessContext } from "../../tokens/access-token.js";
import type { TokenSet } from "../../tokens/issue-tokens.js";
import { deviceCookie } from "../cookies.js";
import type { JsonSchema } from "../openapi-schemas.js";
import type { RouteContext, RouteResult } from "../route-types.js";

/** The user a `bearer` or `admin` route's access token speaks for. */
export const signedIn = (context: RouteContext): string => (context.access as AccessContext).userId;

/** The session of a `bearer` or `admin` route's access token: the one a user's own change keeps (SE-2). */
export const sessionOf = (context: RouteContext): string => (context.access as AccessContext).sessionId;

/** The re-authentication a bearer route offers: the token's session, and a password from the body. */
export const reauthentication = (context: RouteContext): ReauthenticationProof => ({
  sessionId: sessionOf(context),
  password: context.body.password as string | undefined,
});

/** The answer of a route that completes a login: tokens, or 40102 with a temporary token. */
export const loginResponse = (context: RouteContext, result: LoginResult): RouteResult =>
  result.status === "authenticated"
    ? signedInResponse(context, result.tokens)
    : { code: ErrorCode.SecondFactorRequired, data: { tempToken: result.tempToken } };

/** The answer of a completed sign-in: the token set, and the device token also as a cookie (RL-5). */
export const signedInResponse = ({ auth, secure }: RouteContext, tokens: TokenSet): RouteResult => ({
  data: tokens,
  cookies: tokens.deviceToken === undefined ? [] : [deviceCookie(auth, tokens.deviceToken, secure)],
});

/** What the routes that complete a sign-in say of the device cookie. */
export const setsDeviceCookie =
  "On success, `portcullis_device` (`__Host-portcullis_device` over TLS), HttpOnly, SameSite=Strict: the device token (RL-5)";

/** The `password` field of a bearer route that may ask to re-authenticate. */
export const passwordProof: JsonSchema = {
  type: "string",
  description: "The current password, needed when the sign-in is older than `reauthentication.recentSignIn`",
};
