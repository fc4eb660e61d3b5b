import { type UpdateUserInput, endUserSessions, removeTotp, updateUser } from "../../flows/admin-user-changes.js";
import { listUsers, maxPageSize } from "../../flows/admin-user-list.js";
import { type AdminCreateUserInput, adminCreateUser, getUserDetails } from "../../flows/admin-users.js";
import { adminRevokeAllSessions } from "../../incident/revoke-all-sessions.js";
import { answerObject, requestObject, requiredText, roleNames, schemaRef, userFieldsBody } from "../openapi-schemas.js";
import type { ParameterDoc, Route, RouteContext } from "../route-types.js";
import { limitOf, passwordProof, queryValue, sessionOf, signedIn } from "./shared.js";

const userIdParameter: ParameterDoc = { name: "id", in: "path", description: "The user's id" };

/** The fields of an administrator's re-authentication (`password` is theirs, never the user's). */
export const adminProof = {
  password: { ...passwordProof, description: "The administrator's own password, when their sign-in is not recent" },
  totpCode: { type: "string", description: "A current code of the administrator's authenticator, instead of the password" },
};

/** The administrator's re-authentication of a request: their session, and a password or TOTP code from the body. */
export const adminProofOf = (context: RouteContext) => ({
  adminUserId: signedIn(context),
  sessionId: sessionOf(context),
  password: context.body.password as string | undefined,
  totpCode: context.body.totpCode as string | undefined,
});

/** User administration, for the admin role (AD-1). */
export const adminRoutes: readonly Route[] = [
  {
    method: "GET",
    path: "/auth/admin/users",
    access: "admin",
    doc: {
      operationId: "listUsers",
      tag: "Administration",
      summary: "List users, a page at a time, optionally by username prefix",
      description:
        "In the order of the usernames' lookup keys (NFKC, lower case, code point order). Send `nextCursor` back as `cursor` for the next page, with the same `q`; a cursor this listing did not give is 40002.",
      parameters: [
        { name: "cursor", in: "query", description: "The `nextCursor` of the page before" },
        {
          name: "limit",
          in: "query",
          description: "Users per page, default 20",
          schema: { type: "integer", minimum: 1, maximum: maxPageSize },
        },
        { name: "q", in: "query", description: "A username prefix, compared case-insensitively after NFKC" },
      ],
      data: schemaRef("UserPage"),
      codes: [40002],
    },
    async handle({ auth, query }) {
      const params = new URLSearchParams(query);
      const page = await listUsers(auth, {
        cursor: queryValue(params, "cursor"),
        limit: limitOf(queryValue(params, "limit"), maxPageSize),
        q: queryValue(params, "q"),
      });
      return { data: page };
    },
  },
  {
    method: "POST",
    path: "/auth/admin/users",
    access: "admin",
    doc: {
      operationId: "adminCreateUser",
      tag: "Administration",
      summary: "Make a local account",
      description:
        "No session is started. The admin role is not granted here (42200): grant it with `PATCH /auth/admin/users/{id}`, which re-authenticates. `email` is stored unverified unless `emailVerified` is true (the administrator vouches for it); a verified address held by another account is 40900 (EV-1), one that is not an address 40002.",
      body: requestObject(
        {
          username: requiredText,
          password: {
            type: "string",
            description: "The new account's first password (PW-3); without one it cannot sign in with a password",
          },
          email: {
            type: "string",
            maxLength: 254,
            description: "An address: at most 254 characters, one `@`, no spaces or control characters",
          },
          emailVerified: { type: "boolean", description: "True when the administrator vouches for `email`; default false" },
          roles: roleNames,
          fields: userFieldsBody("any declared field; those left out get their defaults"),
        },
        ["username"],
      ),
      data: schemaRef("AdminUser"),
      codes: [40001, 40002, 40900, 42200, 50300],
    },
    async handle(context) {
      const { auth, body } = context;
      const user = await adminCreateUser(auth, {
        adminUserId: signedIn(context),
        username: body.username as string,
        password: body.password as string | undefined,
        email: body.email as string | undefined,
        emailVerified: body.emailVerified as boolean | undefined,
        roles: body.roles as string[] | undefined,
        fields: body.fields as AdminCreateUserInput["fields"],
      });
      return { data: user };
    },
  },
  {
    method: "GET",
    path: "/auth/admin/users/:id",
    access: "admin",
    doc: {
      operationId: "getUserDetails",
      tag: "Administration",
      summary: "One user, with counts of live sessions and passkeys and the providers linked",
      parameters: [userIdParameter],
      data: schemaRef("AdminUserDetails"),
      codes: [40400],
    },
    async handle({ auth, params }) {
      return { data: await getUserDetails(auth, { userId: params.id as string }) };
    },
  },
  {
    method: "PATCH",
    path: "/auth/admin/users/:id",
    access: "admin",
    doc: {
      operationId: "updateUser",
      tag: "Administration",
      summary: "Disable or enable an account, set its roles or its additional fields",
      description:
        "Needs the administrator's re-authentication: a recent sign-in, or their own `password` or `totpCode`. New roles and disabling end every session of the user. An administrator cannot disable themselves or take the admin role from themselves (40900); a directory user's roles come from the directory policy (40900).",
      parameters: [userIdParameter],
      body: requestObject({
        disabled: { type: "boolean" },
        roles: { ...roleNames, description: `Replaces the roles. ${roleNames.description}` },
        fields: userFieldsBody("any declared field; those left out stay"),
        ...adminProof,
      }),
      data: schemaRef("AdminUser"),
      codes: [40001, 40100, 40103, 40400, 40900, 42200, 42900],
    },
    async handle(context) {
      const { auth, body, params } = context;
      const user = await updateUser(auth, {
        ...adminProofOf(context),
        userId: params.id as string,
        disabled: body.disabled as boolean | undefined,
        roles: body.roles as string[] | undefined,
        fields: body.fields as UpdateUserInput["fields"],
      });
      return { data: user };
    },
  },
  {
    method: "DELETE",
    path: "/auth/admin/users/:id/sessions",
    access: "admin",
    doc: {
      operationId: "endUserSessions",
      tag: "Administration",
      summary: "End every session of a user",
      description: "Raises the user's token version: every access and refresh token of the user is refused from now on.",
      parameters: [userIdParameter],
      data: answerObject({ ended: { type: "integer", minimum: 0, description: "How many sessions were live" } }),
      codes: [40400],
    },
    async handle(context) {
      return {
        data: await endUserSessions(context.auth, { adminUserId: signedIn(context), userId: context.params.id as string }),
      };
    },
  },
  {
    method: "DELETE",
    path: "/auth/admin/users/:id/totp",
    access: "admin",
    doc: {
      operationId: "removeTotp",
      tag: "Administration",
      summary: "Remove a user's TOTP factor and recovery codes",
      description:
        "For a user who lost the authenticator and was verified out of band. Needs the administrator's re-authentication: a recent sign-in, or their own `password` or `totpCode` in an optional JSON body. Ends every session of the user.",
      parameters: [userIdParameter],
      body: requestObject(adminProof),
      data: answerObject({ removed: { const: true } }),
      codes: [40001, 40100, 40103, 40400, 40900, 42900],
    },
    async handle(context) {
      return { data: await removeTotp(context.auth, { ...adminProofOf(context), userId: context.params.id as string }) };
    },
  },
  {
    method: "DELETE",
    path: "/auth/admin/sessions",
    access: "admin",
    doc: {
      operationId: "revokeAllSessions",
      tag: "Administration",
      summary: "End every session of every user (incident response)",
      description:
        "Needs the administrator's re-authentication: a recent sign-in, or their own `password` or `totpCode` in an optional JSON body. Every session ends, the administrator's own too: every refresh token is refused at once, every access token at its next check (within `tokenStateCacheSeconds` on instances without a revocation channel). Sign-ins after it start new sessions (STUP-6).",
      body: requestObject(adminProof),
      data: answerObject({ ended: { type: "integer", minimum: 0, description: "How many sessions were live" } }),
      codes: [40001, 40100, 40103, 40900, 42900],
    },
    async handle(context) {
      return { data: await adminRevokeAllSessions(context.auth, adminProofOf(context)) };
    },
  },
];
