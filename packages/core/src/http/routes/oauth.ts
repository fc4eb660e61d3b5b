import type { Auth } from "../../auth.js";
import { oauthAuthorize, oauthCallback, oauthProviders } from "../../flows/oauth-sign-in.js";
import { bindingCookie, bindingFrom } from "../../oauth/browser-binding.js";
import { answerObject, listOf, oauthSecondFactorData, oauthSignInData } from "../openapi-schemas.js";
import type { ParameterDoc, Route } from "../route-types.js";
import { loginResponse, setsDeviceCookie } from "./shared.js";

const oauthEnabled = (auth: Auth) => auth.config.oauthProviders.size > 0;

const providerParameter: ParameterDoc = {
  name: "provider",
  in: "path",
  description: "A provider's name, as in `oauth.providers`",
};

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
      setsCookie:
        "The binding cookie the callback needs, HttpOnly, SameSite=Lax, for 10 minutes: `__Host-portcullis_oauth` (Secure, path `/`) over TLS, `portcullis_oauth` (path of the OAuth routes) over plain HTTP",
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
        "A user with TOTP gets 40102, unless the provider is trusted for the second factor; a user who must have a second factor and has none, 40105 (STUP-4).",
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
      ],
      data: oauthSignInData,
      secondFactor: oauthSecondFactorData,
      enrolment: oauthSecondFactorData,
      setsCookie: `Clears the binding cookie. ${setsDeviceCookie}`,
      codes: [40100, 40300, 40400, 40900, 50300],
    },
    async handle(context) {
      const { auth, params, query, header, secure, ip } = context;
      const browserBinding = bindingFrom(header("cookie"), secure);
      const userAgent = header("user-agent");
      const result = await oauthCallback(auth, { provider: params.provider as string, query, browserBinding, ip, userAgent });
      const answer = loginResponse(context, result);
      return {
        ...answer,
        data: { ...(answer.data as object), returnPath: result.returnPath },
        cookies: [bindingCookie(auth, "", secure, 0), ...(answer.cookies ?? [])],
      };
    },
  },
];
