import { changePassword } from "../../flows/change-password.js";
import { requiredString } from "../../flows/input.js";
import { getPublicUser, signOutEverywhere } from "../../flows/manage-users.js";
import { endOtherSessions, endSession, listSessions, sessionListLimit } from "../../flows/sessions.js";
import { type UpdateProfileInput, updateProfile } from "../../user-fields/profile.js";
import { type JsonSchema, answerObject, requestObject, requiredText, schemaRef, userFieldsBody } from "../openapi-schemas.js";
import type { ParameterDoc, Route, RouteContext } from "../route-types.js";
import { proofFields, reauthentication, sessionOf, signedIn, totpCodeProof } from "./shared.js";

/** A session as the list shows it: never a token. */
const sessionInfo: JsonSchema = {
  description: "A live session of the signed-in user. Times are epoch milliseconds.",
  ...answerObject({
    id: { type: "string", description: "The session's id (the `sid` claim of its access tokens): no secret" },
    current: { type: "boolean", description: "True for the session of the request's access token" },
    createdAt: { type: "integer", minimum: 0 },
    lastUsedAt: { type: "integer", minimum: 0, description: "Its sign-in or its last refresh" },
    expiresAt: { type: "integer", minimum: 0, description: "The end of its absolute lifetime" },
    amr: { type: "array", items: { type: "string" }, description: "How it was signed in (RFC 8176)" },
    userAgent: { type: ["string", "null"], description: "The `User-Agent` it was last used with, cut to 256 characters" },
    address: {
      type: ["string", "null"],
      description: "The network it was last used from: IPv4 /24, IPv6 /48, or the whole address with `sessions.keepFullAddress`",
    },
    impersonatedBy: {
      oneOf: [answerObject({ id: { type: "string" }, username: { type: ["string", "null"] } }), { type: "null" }],
      description:
        "The administrator acting as the user in this session (impersonation, IMP-1), with their username; null for the user's own",
    },
  }),
};

const endedCount: JsonSchema = answerObject({ ended: { type: "integer", minimum: 0 } });

/** What a password change answers, on its own route and on its alias. */
const passwordChanged: JsonSchema = answerObject({
  changed: { const: true },
  sessionsEnded: { type: "integer", minimum: 0, description: "How many other sessions ended" },
});

/** The codes of a password change, on its own route and on its alias. */
const passwordChangeCodes = [40001, 40100, 40103, 40900, 42200, 42900] as const;

/** Changes the password of the token's user from the token's session (SE-4), the current one proven by `currentPassword`. */
const changePasswordFrom = (context: RouteContext, currentPassword: string) =>
  changePassword(context.auth, {
    userId: signedIn(context),
    sessionId: sessionOf(context),
    currentPassword,
    newPassword: context.body.newPassword as string,
    totpCode: context.body.totpCode as string | undefined,
  });
const sessionIdParameter: ParameterDoc = { name: "id", in: "path", description: "A session's `id`, as the list shows it" };

/** The signed-in user's own account: who they are, their own fields, their password, and their sessions. */
export const accountRoutes: readonly Route[] = [
  {
    method: "GET",
    path: "/auth/me",
    access: "bearer",
    doc: {
      operationId: "getPublicUser",
      tag: "Account",
      summary: "The signed-in user",
      data: schemaRef("PublicUser"),
      codes: [],
    },
    async handle(context) {
      return { data: await getPublicUser(context.auth, { userId: signedIn(context) }) };
    },
  },
  {
    method: "PATCH",
    path: "/auth/me",
    access: "bearer",
    doc: {
      operationId: "updateProfile",
      tag: "Account",
      summary: "Change the signed-in user's own additional fields",
      description:
        "Only the additional user fields declared `selfEdit: true`; those left out stay. Ends no session: access tokens carry a changed `inToken` field from their next refresh.",
      body: requestObject({ fields: userFieldsBody("only those declared `selfEdit: true`") }, ["fields"]),
      data: schemaRef("PublicUser"),
      codes: [40001, 40002, 42200],
    },
    async handle(context) {
      const fields = context.body.fields as UpdateProfileInput["fields"];
      return { data: await updateProfile(context.auth, { userId: signedIn(context), fields }) };
    },
  },
  {
    method: "POST",
    path: "/auth/password",
    access: "bearer",
    doc: {
      operationId: "changePassword",
      tag: "Account",
      summary: "Change the password",
      description:
        "The current password proves it is the user (a wrong one counts against this session's failure budget); with TOTP on, a `totpCode` too, unless the session's sign-in or re-authentication within `reauthentication.recentSignIn` proved a second factor (STUP-3; 40001 without). The new one passes the password policy. Ends every other session of the user and any pending second-factor sign-in; this session goes on (SE-2, SE-4). 40900 for an account without a local password (directory, provider only).",
      body: requestObject({ currentPassword: requiredText, newPassword: requiredText, totpCode: totpCodeProof }, [
        "currentPassword",
        "newPassword",
      ]),
      data: passwordChanged,
      codes: [...passwordChangeCodes],
    },
    async handle(context) {
      return { data: await changePasswordFrom(context, context.body.currentPassword as string) };
    },
  },
  {
    method: "PUT",
    path: "/users/me/password",
    access: "bearer",
    enabled: (auth) => auth.config.passwordChangeAlias,
    doc: {
      operationId: "changePasswordAlias",
      tag: "Account",
      summary: "Change the password, as clients built for the original service send it",
      description:
        "Only with `http.passwordChangeAlias`; otherwise the path is not Portcullis's and the app answers it. `POST /auth/password` at the path and with the field name of the original service (`oldPassword` for `currentPassword`): the same checks, throttles, events and sessions ended (SE-4, SE-6). The old password re-authenticates; with TOTP on, a `totpCode` too, unless the session's sign-in or re-authentication within `reauthentication.recentSignIn` proved a second factor (STUP-3; 40001 without).",
      body: requestObject({ oldPassword: requiredText, newPassword: requiredText, totpCode: totpCodeProof }, [
        "oldPassword",
        "newPassword",
      ]),
      data: passwordChanged,
      codes: [...passwordChangeCodes],
    },
    async handle(context) {
      // Named as this route's body names it: a missing or non-string one is 40001 or 40002 for `oldPassword` (PW-5).
      return { data: await changePasswordFrom(context, requiredString(context.body.oldPassword, "oldPassword")) };
    },
  },
  {
    method: "GET",
    path: "/auth/sessions",
    access: "bearer",
    doc: {
      operationId: "listSessions",
      tag: "Account",
      summary: "List the signed-in user's sessions, newest first",
      description: `At most ${sessionListLimit}; \`current\` marks this request's session.`,
      data: { type: "array", items: sessionInfo, maxItems: sessionListLimit },
      codes: [],
    },
    async handle(context) {
      return { data: await listSessions(context.auth, { userId: signedIn(context), sessionId: sessionOf(context) }) };
    },
  },
  {
    method: "DELETE",
    path: "/auth/sessions/:id",
    access: "bearer",
    doc: {
      operationId: "endSession",
      tag: "Account",
      summary: "End one of the signed-in user's sessions",
      description:
        "Needs every factor of the account (STUP-3): the `password`, and a `totpCode` with TOTP on, in an optional JSON body, or a sign-in or re-authentication within `reauthentication.recentSignIn` that proved them. Another user's session and an unknown one are the same 40400 (SE-1). Ending this request's own session signs it out.",
      parameters: [sessionIdParameter],
      body: requestObject(proofFields),
      data: answerObject({ ended: { const: true } }),
      codes: [40001, 40100, 40103, 40400, 40900, 42900],
    },
    async handle(context) {
      return {
        data: await endSession(context.auth, {
          ...reauthentication(context),
          userId: signedIn(context),
          id: context.params.id as string,
        }),
      };
    },
  },
  {
    method: "POST",
    path: "/auth/sessions/end-others",
    access: "bearer",
    doc: {
      operationId: "endOtherSessions",
      tag: "Account",
      summary: "End every other session of the signed-in user",
      description:
        "Needs every factor of the account (STUP-3): the `password`, and a `totpCode` with TOTP on, or a sign-in or re-authentication within `reauthentication.recentSignIn` that proved them. This session goes on (SE-2).",
      body: requestObject(proofFields),
      data: endedCount,
      codes: [40001, 40100, 40103, 40900, 42900],
    },
    async handle(context) {
      return { data: await endOtherSessions(context.auth, { ...reauthentication(context), userId: signedIn(context) }) };
    },
  },
  {
    method: "DELETE",
    path: "/auth/sessions",
    access: "bearer",
    doc: {
      operationId: "signOutEverywhere",
      tag: "Account",
      summary: "Sign out everywhere: end every session of the signed-in user, this one included",
      description:
        "Raises the user's token version: every access, refresh and temporary token issued before is refused. An impersonated session may not (40300, IMP-2): it would end the user's own sessions.",
      data: endedCount,
      codes: [],
    },
    async handle(context) {
      const input = { userId: signedIn(context), sessionId: sessionOf(context) };
      return { data: { ended: await signOutEverywhere(context.auth, input) } };
    },
  },
];
