import type { Auth } from "../../auth.js";
import { changeEmail, verifyEmail } from "../../flows/change-email.js";
import { forgotPassword } from "../../flows/forgot-password.js";
import { resetPassword } from "../../flows/reset-password.js";
import { type JsonSchema, answerObject, requestObject, requiredText } from "../openapi-schemas.js";
import type { Route } from "../route-types.js";
import { proofFields, reauthentication, signedIn } from "./shared.js";

const emailConfigured = (auth: Auth) => auth.config.email !== null;

const address: JsonSchema = {
  type: "string",
  maxLength: 254,
  description: "An address (at most 254 characters, one `@`, no spaces or control characters)",
};

const linkToken: JsonSchema = { ...requiredText, description: "The token of the link: what follows `#token=`" };

/**
 * Password reset by email and verified addresses: only with `email` configured (40400
 * otherwise). Links are built from `email.resetUrl` and `email.verifyUrl`, never from the
 * request's Host (PR-5).
 */
export const emailRoutes: readonly Route[] = [
  {
    method: "POST",
    path: "/auth/password/forgot",
    access: "public",
    enabled: emailConfigured,
    doc: {
      operationId: "forgotPassword",
      tag: "Email",
      summary: "Ask for a password reset link",
      description:
        "Answers `{}` for known and unknown accounts alike, in the same time (PR-1). Only a local account with a password, enabled, with a verified address gets a link (to `email.resetUrl`, the token in its fragment), sent after the answer. `email` finds only the account that holds the address verified. Budgets of its own: `throttle.passwordResetRequests` per username or address asked for, `throttle.passwordResetRequestsIp` per client address; never the account's sign-in budget.",
      body: requestObject({
        username: { type: "string", description: "The account's username; or `email`, not both" },
        email: address,
      }),
      data: answerObject({}),
      codes: [40001, 40400, 42900],
    },
    async handle({ auth, body, ip, header }) {
      const input = {
        username: body.username as string | undefined,
        email: body.email as string | undefined,
        ip,
        acceptLanguage: header("accept-language"),
      };
      return { data: await forgotPassword(auth, input) };
    },
  },
  {
    method: "POST",
    path: "/auth/password/reset",
    access: "public",
    enabled: emailConfigured,
    doc: {
      operationId: "resetPassword",
      tag: "Email",
      summary: "Set a new password with a reset link's token",
      description:
        "The token works once, for `email.tokenLifetime` (30 minutes by default), and only the newest one a user was sent; a password change voids it (PR-2). A user with TOTP also sends `totpCode` or `recoveryCode` (40103 without; PR-3), counted against the account's failure budget. Ends every session and temporary token of the user (PR-4) and sends a notice; sign in afresh.",
      body: requestObject(
        {
          token: linkToken,
          newPassword: { ...requiredText, description: "Checked against the password policy (PW-3)" },
          totpCode: { type: "string", description: "A current code of the user's authenticator, when TOTP is on" },
          recoveryCode: { type: "string", description: "One of the user's recovery codes, instead of `totpCode`; it is spent" },
        },
        ["token", "newPassword"],
      ),
      data: answerObject({ reset: { const: true } }),
      codes: [40001, 40101, 40103, 40400, 42200, 42900, 50300],
    },
    async handle({ auth, body, ip }) {
      const input = {
        token: body.token as string,
        newPassword: body.newPassword as string,
        totpCode: body.totpCode as string | undefined,
        recoveryCode: body.recoveryCode as string | undefined,
        ip,
      };
      return { data: await resetPassword(auth, input) };
    },
  },
  {
    method: "POST",
    path: "/auth/email",
    access: "bearer",
    enabled: emailConfigured,
    doc: {
      operationId: "changeEmail",
      tag: "Email",
      summary: "Set the account's address: a link goes to it",
      description:
        "Needs every factor of the account (STUP-3, EV-1): the `password`, and a `totpCode` with TOTP on, or a sign-in or re-authentication within `reauthentication.recentSignIn` that proved them. A verification link goes to the new address and a notice to the current verified one; the account keeps its address until the link is used. The same address again sends a new link. An address another account holds verified gets no link, with the same answer. `throttle.emailChanges` per user. 50300 when the link could not be sent.",
      body: requestObject(
        {
          email: { ...address, minLength: 1 },
          ...proofFields,
        },
        ["email"],
      ),
      data: answerObject({ pending: { const: true } }),
      codes: [40001, 40100, 40103, 40900, 42900, 50300],
    },
    async handle(context) {
      const { auth, body } = context;
      const input = {
        ...reauthentication(context),
        userId: signedIn(context),
        email: body.email as string,
        acceptLanguage: context.header("accept-language"),
      };
      return { data: await changeEmail(auth, input) };
    },
  },
  {
    method: "POST",
    path: "/auth/email/verify",
    access: "public",
    enabled: emailConfigured,
    doc: {
      operationId: "verifyEmail",
      tag: "Email",
      summary: "Verify an address with its link's token",
      description:
        "The token works once, for `email.tokenLifetime`, and only the user's newest. The account's address becomes the verified one; 40900 when another account verified it first (EV-1).",
      body: requestObject({ token: linkToken }, ["token"]),
      data: answerObject({ verified: { const: true } }),
      codes: [40001, 40101, 40400, 40900],
    },
    async handle({ auth, body }) {
      return { data: await verifyEmail(auth, { token: body.token as string }) };
    },
  },
];
