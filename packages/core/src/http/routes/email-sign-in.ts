import type { Auth } from "../../auth.js";
import { tokenDeliveryParameter } from "../../cookie-sessions/refresh-cookie.js";
import { beginEmailSignIn } from "../../passwordless/begin-email-sign-in.js";
import { emailBindingCookie, emailBindingFrom } from "../../passwordless/binding-cookie.js";
import { finishEmailSignIn } from "../../passwordless/finish-email-sign-in.js";
import { answerObject, enrolmentTokenData, requestObject, schemaRef, tempTokenData } from "../openapi-schemas.js";
import type { Route } from "../route-types.js";
import { deviceTokenOf, loginResponse, setsDeviceCookie } from "./shared.js";

const emailSignInEnabled = (auth: Auth) => auth.config.emailSignIn.enabled;

const bindingCookieDoc =
  "The binding of this sign-in, HttpOnly, SameSite=Lax, for `emailSignIn.ttl`: `__Host-portcullis_email_sign_in` (Secure, path `/`) over TLS, `portcullis_email_sign_in` (path of the email sign-in routes) over plain HTTP. A link works only where it is sent back (PL-2)";

/**
 * Sign-in with a one-time code or link sent by email (PL-1…): only with `emailSignIn.enabled`
 * (40400 otherwise). The begin answers alike for every address (PL-3) and binds the sign-in to
 * the client that asked (a cookie, and `binding` for clients without cookies); the finish takes the
 * code or the link's token and answers as `POST /auth/login` does.
 */
export const emailSignInRoutes: readonly Route[] = [
  {
    method: "POST",
    path: "/auth/email-sign-in/begin",
    access: "public",
    enabled: emailSignInEnabled,
    doc: {
      operationId: "beginEmailSignIn",
      tag: "Sign-in",
      summary: "Ask for a sign-in code or link by email",
      description:
        "Answers alike, in the same time, for every address (PL-3): only a local, enabled account holding the address verified is sent a code, a link to `email.signInUrl` or both (`emailSignIn.method`), after the answer; with `emailSignIn.signUp`, an address no account holds is sent a sign-up code. Budgets of its own: `throttle.emailSignInRequests` per address asked for, `throttle.emailSignInRequestsIp` per client address. Sets the binding cookie; `binding` is the same secret, for clients without cookies to send to the finish.",
      body: requestObject(
        {
          email: {
            type: "string",
            maxLength: 254,
            description: "An address (at most 254 characters, one `@`, no spaces or control characters)",
          },
        },
        ["email"],
      ),
      data: answerObject({
        binding: {
          type: "string",
          description: "The sign-in's binding: send it as `binding` to the finish when no cookie is kept",
        },
        expiresIn: { type: "integer", description: "Seconds the code and link work for" },
      }),
      setsCookie: bindingCookieDoc,
      codes: [40001, 40002, 40400, 42900],
    },
    async handle({ auth, body, ip, header, secure }) {
      const input = { email: body.email as string, ip, acceptLanguage: header("accept-language") };
      const { binding, expiresIn } = await beginEmailSignIn(auth, input);
      return { data: { binding, expiresIn }, cookies: [emailBindingCookie(auth, binding, secure, expiresIn)] };
    },
  },
  {
    method: "POST",
    path: "/auth/email-sign-in/finish",
    access: "public",
    enabled: emailSignInEnabled,
    doc: {
      operationId: "finishEmailSignIn",
      tag: "Sign-in",
      summary: "Sign in with an emailed code or link",
      description:
        "The binding comes from the binding cookie, else from `binding` (40001 with neither); one of `code` or `token` (the link's, what follows `#token=`). Every failure is the same 40100 (PL-3); a code takes one of `emailSignIn.maxAttempts` attempts, and a wrong one one from the account's failure budget. A right one works once (PL-1) and signs in as `POST /auth/login` does: a user with TOTP gets 40102 (PL-4), one who must enrol a second factor 40105, a disabled account 40300. The access token's `amr` holds `email`.",
      body: requestObject({
        code: { type: "string", description: "The code the message carried" },
        token: { type: "string", description: "The link's token: what follows `#token=`" },
        binding: { type: "string", description: "The begin's `binding`, for clients that keep no cookie" },
        deviceToken: {
          type: "string",
          description: "The `deviceToken` of an earlier sign-in of this client, for clients without cookies (RL-5)",
        },
      }),
      data: schemaRef("TokenSet"),
      secondFactor: tempTokenData,
      enrolment: enrolmentTokenData,
      parameters: [tokenDeliveryParameter],
      setsCookie: `On success, clears the binding cookie. ${setsDeviceCookie}`,
      codes: [40001, 40002, 40100, 40300, 40400, 40900, 42200, 42900, 50300],
    },
    async handle(context) {
      const { auth, body, ip, header, secure } = context;
      const fromCookie = emailBindingFrom(header("cookie"), secure);
      const result = await finishEmailSignIn(auth, {
        binding: (fromCookie ?? body.binding) as string,
        code: body.code as string | undefined,
        token: body.token as string | undefined,
        ip,
        userAgent: header("user-agent"),
        deviceToken: deviceTokenOf(context),
      });
      const answer = await loginResponse(context, result);
      return { ...answer, cookies: [emailBindingCookie(auth, "", secure, 0), ...(answer.cookies ?? [])] };
    },
  },
];
