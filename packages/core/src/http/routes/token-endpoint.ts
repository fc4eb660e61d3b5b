import type { Auth } from "../../auth.js";
import { ErrorCode } from "../../errors/codes.js";
import { jwtBearerAssertionType } from "../../service-accounts/client-assertion.js";
import { issueClientCredentialsToken, tokenError } from "../../service-accounts/client-credentials.js";
import { type JsonSchema, answerObject, requestObject } from "../openapi-schemas.js";
import type { Route } from "../route-types.js";

/** The longest `Authorization: Basic` value read: an id and a secret are far shorter. */
const maxBasicLength = 4096;

const malformedBasic = () =>
  tokenError(ErrorCode.MalformedParameter, "invalid_request", "The Authorization header is not well-formed Basic credentials");

/** Decodes one half of Basic credentials: form-urlencoded (RFC 6749 §2.3.1), `+` a space. */
function basicComponent(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    throw malformedBasic();
  }
}

/**
 * The client id and secret of an `Authorization: Basic` header (`client_secret_basic`, RFC 6749
 * §2.3.1): the base64 of the form-urlencoded id, `:`, the form-urlencoded secret (RFC 7617). Null
 * without the header; `invalid_request` for another scheme or a malformed value.
 *
 * @example
 * ```ts
 * basicCredentials("Basic YWJjOnBjc19saXZlX3g="); // { clientId: "abc", clientSecret: "pcs_live_x" }
 * ```
 */
export function basicCredentials(authorization: string | undefined): { clientId: string; clientSecret: string } | null {
  if (authorization === undefined) return null;
  const match = /^basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(authorization);
  if (match === null || authorization.length > maxBasicLength) {
    if (/^basic(?: |$)/i.test(authorization.trim())) throw malformedBasic();
    throw tokenError(
      ErrorCode.MalformedParameter,
      "invalid_request",
      "Authenticate the client with Authorization: Basic or a client assertion",
    );
  }
  const encoded = match[1] as string;
  const bytes = Buffer.from(encoded, "base64");
  if (bytes.toString("base64").replace(/=+$/, "") !== encoded.replace(/=+$/, "")) throw malformedBasic();
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  const colon = text.indexOf(":");
  if (colon <= 0) throw malformedBasic();
  const clientId = basicComponent(text.slice(0, colon));
  const clientSecret = basicComponent(text.slice(colon + 1));
  if (clientId === "" || clientSecret === "") throw malformedBasic();
  return { clientId, clientSecret };
}

const formText: JsonSchema = { type: "string" };

/**
 * The OAuth 2.0 token endpoint (`POST /auth/token`, SA-3): the client-credentials grant of service
 * accounts, form-encoded as RFC 6749 §4.4.2 asks, answered in RFC 6749's JSON rather than the
 * envelope. Only with `serviceAccounts.enabled`.
 */
export const tokenEndpointRoutes: readonly Route[] = [
  {
    method: "POST",
    path: "/auth/token",
    access: "public",
    enabled: (auth: Auth) => auth.config.serviceAccounts.enabled,
    body: "form",
    errors: "oauth",
    bodyLimit: 16 * 1024,
    doc: {
      operationId: "issueClientCredentialsToken",
      tag: "Service accounts",
      summary: "Get a service account's access token (OAuth 2.0 client credentials)",
      description: `RFC 6749 §4.4: \`grant_type=client_credentials\`, form-encoded, with the client authenticated by \`Authorization: Basic\` (\`client_secret_basic\`, RFC 6749 §2.3.1: the form-urlencoded \`client_id\` and client secret) or by \`client_assertion_type=${jwtBearerAssertionType}\` and a \`client_assertion\` signed with one of its registered keys (\`private_key_jwt\`, RFC 7523; its \`aud\` the issuer or this endpoint's URL, its \`jti\` accepted once). A \`client_secret\` in the body is refused. Answers RFC 6749 §5.1's JSON itself (no envelope, no refresh token) and refusals as §5.2's \`{ error, error_description }\` with their status, whatever \`http.statusMode\` says: \`invalid_client\` is 401 with \`WWW-Authenticate: Basic\` after \`Authorization: Basic\`, else 400; a parameter given twice, a JSON body or another content type are \`invalid_request\`; too many failures from one address are 429 \`temporarily_unavailable\` with \`Retry-After\`. The token is accepted by \`requireAuth\` with \`credentials\` naming \`"service_account"\`, never by Portcullis's own routes.`,
      body: requestObject(
        {
          grant_type: { const: "client_credentials" },
          scope: { type: "string", description: "Space-separated scopes, each one of the account's; absent for all of them" },
          client_id: { type: "string", description: "Optional; when given, the client authenticated" },
          client_assertion_type: { const: jwtBearerAssertionType },
          client_assertion: { type: "string", description: "A JWT signed with a registered key (RFC 7523 §2.2)" },
          client_secret: { ...formText, description: "Refused (`invalid_request`): send it in `Authorization: Basic`" },
        },
        ["grant_type"],
      ),
      data: answerObject({
        access_token: { type: "string", description: "A JWT with `client_id`, `scope` and the account's `roles`" },
        token_type: { const: "Bearer" },
        expires_in: { type: "integer", minimum: 1, description: "Seconds: `serviceAccounts.tokenTtl`" },
        scope: { type: "string", description: "The scopes granted, space-separated" },
      }),
      codes: [],
    },
    async handle(context) {
      const { body } = context;
      const token = await issueClientCredentialsToken(context.auth, {
        grantType: body.grant_type,
        scope: body.scope,
        basic: basicCredentials(context.header("authorization")),
        clientId: body.client_id,
        clientSecret: body.client_secret,
        clientAssertionType: body.client_assertion_type,
        clientAssertion: body.client_assertion,
        ip: context.ip,
      });
      return { data: token, oauth: true };
    },
  },
];
