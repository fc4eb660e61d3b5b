import {
  asksCookieDelivery,
  clearedRefreshCookie,
  presentedRefreshToken,
  refreshCookieParameters,
  tokenDeliveryParameter,
} from "../../cookie-sessions/refresh-cookie.js";
import { logout } from "../../flows/logout.js";
import { refresh } from "../../flows/refresh.js";
import { type JsonSchema, answerObject, requestObject, schemaRef } from "../openapi-schemas.js";
import type { Route } from "../route-types.js";
import { signedInResponse } from "./shared.js";

const refreshTokenField: JsonSchema = {
  type: "string",
  minLength: 1,
  description: "The refresh token; left out in cookie mode, where the refresh cookie carries it (CK-2)",
};

/** Refresh-token rotation and logout. */
export const tokenRoutes: readonly Route[] = [
  {
    method: "POST",
    path: "/auth/refresh",
    access: "public",
    doc: {
      operationId: "refresh",
      tag: "Tokens",
      summary: "Exchange a refresh token for a new token set",
      description:
        "The refresh token sent is spent; sending a spent one again revokes its whole session, unless `refreshReuseInterval` is set and it is the one replaced last, within that interval: then the answer carries the session's current refresh token (RT-5). The session records this request's time, `User-Agent` and address as where it was last used. Without `refreshToken` in the body the refresh cookie is read (cookie mode, CK-2): only from a page of this origin (`Sec-Fetch-Site: same-origin`, or else an `Origin` equal to the request's own; 40300 otherwise, CK-3), and the answer sets the new refresh token in the cookie and leaves it out of `data`. Without either, 40001, or 40101 when the request asks for cookie mode.",
      parameters: [tokenDeliveryParameter, ...refreshCookieParameters],
      body: requestObject({ refreshToken: refreshTokenField }),
      data: schemaRef("TokenSet"),
      codes: [40001, 40101, 50300],
      setsCookie:
        "In cookie mode, the new refresh token: `portcullis_refresh` (`__Host-portcullis_refresh` over TLS), HttpOnly, SameSite=Strict, for its lifetime (CK-2)",
    },
    async handle(context) {
      const { auth, ip, header } = context;
      const presented = presentedRefreshToken(context);
      const tokens = await refresh(auth, { refreshToken: presented.token as string, ip, userAgent: header("user-agent") });
      return signedInResponse(context, tokens, presented.fromCookie || asksCookieDelivery(context));
    },
  },
  {
    method: "POST",
    path: "/auth/logout",
    access: "public",
    doc: {
      operationId: "logout",
      tag: "Tokens",
      summary: "Revoke the session of a refresh token",
      description:
        "Without `refreshToken` in the body the refresh cookie is read, as refresh reads it (CK-2, CK-3); in cookie mode the answer deletes the cookie (CK-5).",
      parameters: [tokenDeliveryParameter, ...refreshCookieParameters],
      body: requestObject({ refreshToken: refreshTokenField }),
      data: answerObject({}),
      codes: [40001, 40101, 50300],
      setsCookie: "In cookie mode, deletes the refresh cookie (`Max-Age=0`; CK-5)",
    },
    async handle(context) {
      const { auth, secure } = context;
      const presented = presentedRefreshToken(context);
      await logout(auth, { refreshToken: presented.token as string });
      const clears = presented.fromCookie || asksCookieDelivery(context);
      return { data: {}, cookies: clears ? [clearedRefreshCookie(auth, secure)] : [] };
    },
  },
];
