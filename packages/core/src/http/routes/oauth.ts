import type { Auth } from "../../auth.js";
import { tokenDeliveryParameter } from "../../cookie-sessions/refresh-cookie.js";
import { oauthAuthorize, oauthCallback, oauthProviders } from "../../flows/oauth-sign-in.js";
import { bindingCookie, bindingFrom } from "../../oauth/browser-binding.js";
import { beginOAuthReauthentication } from "../../oauth/reauthenticate.js";
import {
  answerObject,
  listOf,
  oauthReauthenticatedData,
  oauthSecondFactorData,
  oauthSignInData,
  requestObject,
} from "../openapi-schemas.js";
import type { ParameterDoc, Route, RouteContext, RouteResult } from "../route-types.js";
import { loginResponse, sessionOf, setsDeviceCookie, signedIn, signedInResponse } from "./shared.js";

const oauthEnabled = (auth: Auth) => auth.config.oauthProviders.size > 0;

const providerParameter: ParameterDoc = {
  name: "provider",
  in: "path",
  description: "A provider's name, as in `oauth.providers`",
};

const bindingCookieDoc =
  "The binding cookie the callback needs, HttpOnly, SameSite=Lax, for 10 minutes: `__Host-portcullis_oauth` (Secure, path `/`) over TLS, `portcullis_oauth` (path of the OAuth routes) over plain HTTP";

/**
 * The callback's answer: a sign-in's, or for a re-authentication (STUP-5, ASVS 7.2.4) the tokens of
 * the new session that replaced the one that began it, answered as a sign-in's are.
 */
async function callbackAnswer(context: RouteContext): Promise<RouteResult> {
  const { auth, params, query, header, secure, ip } = context;
  const browserBinding = bindingFrom(header("cookie"), secure);
  const userAgent = header("user-agent");
  const result = await oauthCallback(auth, { provider: params.provider as string, query, browserBinding, ip, userAgent });
  const clearBinding = bindingCookie(auth, "", secure, 0);
  const answer =
    result.status === "reauthenticated" ? await signedInResponse(context, result.tokens) : await loginResponse(context, result);
  const flag = result.status === "reauthenticated" ? { reauthenticated: true } : {};
  return {
    ...answer,
    data: { ...(answer.data as object), returnPath: result.returnPath, ...flag },
    cookies: [clearBinding, ...(answer.cookies ?? [])],
  };
}

/** Sign-in with OAuth 2.0 and OpenID Connect providers; `authorize` and `callback` only with a provider configured. */
export const oauthRoutes: readonly Route[] = [
  {
    method: "GET",
    path: "/auth/oauth/providers",
    access: "public",
    doc: {
      operationId: "oauthProviders",
      tag: "OAuth",
      summary: "List the configured sign-in providers",
      data: listOf("OAuthProvider"),
      codes: [],
    },
    async handle({ auth }) {
      return { data: oauthProviders(auth) };
    },
  },
  {
    method: "GET",
    path: "/auth/oauth/:provider/authorize",
    access: "public",
    enabled: oauthEnabled,
    doc: {
      operationId: "oauthAuthorize",
      tag: "OAuth",
      summary: "Begin a sign-in with a provider",
      description:
        "Answers the provider's URL to send the browser to, and sets the HttpOnly cookie that binds the flow to this browser.",
      parameters: [
        providerParameter,
        { name: "redirect", in: "query", description: "Where the app goes afterwards: a path of this app only" },
        { name: "mode", in: "query", description: "`redirect` answers a 302 to the provider", schema: { enum: ["redirect"] } },
      ],
      data: answerObject({ authUrl: { type: "string", format: "uri" } }),
      setsCookie: bindingCookieDoc,
      redirect: "With `mode=redirect`: a 302 to the provider, with the same cookie",
      codes: [40002, 40400, 42900, 50300],
    },
    async handle({ auth, params, query, secure, ip }) {
      const search = new URLSearchParams(query);
      const redirect = search.get("redirect") ?? undefined;
      const { authUrl, browserBinding } = await oauthAuthorize(auth, { provider: params.provider as string, redirect, ip });
      const cookie = bindingCookie(auth, browserBinding, secure, 600);
      const cookies = [cookie];
      return search.get("mode") === "redirect" ? { data: null, redirectTo: authUrl, cookies } : { data: { authUrl }, cookies };
    },
  },
  {
    method: "GET",
    path: "/auth/oauth/:provider/callback",
    access: "public",
    enabled: oauthEnabled,
    doc: {
      operationId: "oauthCallback",
      tag: "OAuth",
      summary: "Finish a sign-in with a provider: relay the provider's callback query",
      description:
        "A user with TOTP gets 40102, unless the provider is trusted for the second factor and its ID token asserts one (`amr`, `acr`; STUP-5); a user who must have a second factor and has none, 40105 (STUP-4). The session's `amr` and sign-in time are what the ID token states. For a flow begun by `oauthReauthenticate`, once the provider signed the person in again (`auth_time` at most 30 s old) with the provider account linked to the user, ends the session that began it and answers the token set of a new one in its place, as a sign-in answers (`reauthenticated: true`, no device token; ASVS 7.2.4): its `auth_time` now, the ended session's absolute expiry, and every token of the ended session refused from then on.",
      parameters: [
        providerParameter,
        { name: "code", in: "query", description: "From the provider" },
        { name: "state", in: "query", description: "From the provider" },
        { name: "iss", in: "query", description: "From the provider (RFC 9207)" },
        { name: "error", in: "query", description: "From the provider, when the user refused" },
        {
          name: "__Host-portcullis_oauth",
          in: "cookie",
          description: "The cookie `authorize` set, over TLS; sent twice, 40100 (OA-10)",
        },
        {
          name: "portcullis_oauth",
          in: "cookie",
          description: "The cookie `authorize` set, over plain HTTP (development); ignored over TLS; sent twice, 40100",
        },
        tokenDeliveryParameter,
      ],
      data: { oneOf: [oauthSignInData, oauthReauthenticatedData] },
      secondFactor: oauthSecondFactorData,
      enrolment: oauthSecondFactorData,
      setsCookie: `Clears the binding cookie. ${setsDeviceCookie}; not at a re-authentication, whose answer has no device token`,
      codes: [40100, 40101, 40300, 40400, 40900, 50300],
    },
    handle: callbackAnswer,
  },
  {
    method: "POST",
    path: "/auth/oauth/:provider/reauthenticate",
    access: "bearer",
    enabled: oauthEnabled,
    doc: {
      operationId: "oauthReauthenticate",
      tag: "OAuth",
      summary: "Begin re-authenticating this session through a provider linked to the user",
      description:
        "For a user who signs in through a provider and is asked to step up (40104) or to prove a recent sign-in (STUP-5). Answers the provider's URL, which asks it to authenticate the person again (`max_age=0`, `prompt=login`), and sets the binding cookie; the provider sends the browser to the callback, which ends this session and answers the token set of a new one in its place (ASVS 7.2.4), with `auth_time` now and `amr` `fed` (with the provider's asserted factors and `mfa` where it is trusted for the second factor). A user with TOTP sends `totpCode` (40001 without it) unless the provider is trusted for the second factor and asserts one. 40400 for a plain OAuth 2.0 provider, 40900 when none of the user's accounts at this provider is linked.",
      parameters: [providerParameter],
      body: requestObject({
        redirect: { type: "string", description: "Where the app goes afterwards: a path of this app only" },
        totpCode: { type: "string", description: "A current code of the user's authenticator, when TOTP is on (STUP-3)" },
      }),
      data: answerObject({ authUrl: { type: "string", format: "uri" } }),
      setsCookie: bindingCookieDoc,
      codes: [40001, 40103, 40400, 40900, 42900],
    },
    async handle(context) {
      const { auth, params, body, secure, ip } = context;
      const { authUrl, browserBinding } = await beginOAuthReauthentication(auth, {
        provider: params.provider as string,
        userId: signedIn(context),
        sessionId: sessionOf(context),
        redirect: body.redirect as string | undefined,
        totpCode: body.totpCode as string | undefined,
        ip,
      });
      return { data: { authUrl }, cookies: [bindingCookie(auth, browserBinding, secure, 600)] };
    },
  },
];
