import { logout } from "../../flows/logout.js";
import { refresh } from "../../flows/refresh.js";
import { answerObject, requestObject, requiredText, schemaRef } from "../openapi-schemas.js";
import type { Route } from "../route-types.js";

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
        "The refresh token sent is spent; sending a spent one again revokes its whole session. The session records this request's time, `User-Agent` and address as where it was last used.",
      body: requestObject({ refreshToken: requiredText }, ["refreshToken"]),
      data: schemaRef("TokenSet"),
      codes: [40001, 40101, 50300],
    },
    async handle({ auth, body, ip, header }) {
      return { data: await refresh(auth, { refreshToken: body.refreshToken as string, ip, userAgent: header("user-agent") }) };
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
      body: requestObject({ refreshToken: requiredText }, ["refreshToken"]),
      data: answerObject({}),
      codes: [40001, 40101, 50300],
    },
    async handle({ auth, body }) {
      await logout(auth, { refreshToken: body.refreshToken as string });
      return { data: {} };
    },
  },
];
