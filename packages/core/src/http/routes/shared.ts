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
export const loginResponse = (context: RouteContext, result: LoginResult): RouteResult => {
  if (result.status === "authenticated") return signedInResponse(context, result.tokens);
  const code = result.status === "totp_required" ? ErrorCode.SecondFactorRequired : ErrorCode.SecondFactorEnrolmentRequired;
  return { code, data: { tempToken: result.tempToken } };
};

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
