import type { Auth } from "../../auth.js";
import { endImpersonation, impersonateUser } from "../../impersonation/impersonate.js";
import { answerObject, requestObject, tokenSetProperties } from "../openapi-schemas.js";
import type { Route } from "../route-types.js";
import { adminProof, adminProofOf } from "./admin.js";
import { sessionOf, signedIn } from "./shared.js";

/** Impersonation is on: its routes exist only then (otherwise 40400, as an unknown route). */
const impersonationOn = (auth: Auth): boolean => auth.config.impersonation.enabled;

/**
 * Impersonation (`docs/flows/impersonation.md`, IMP-1…IMP-4): an administrator begins a session as a
 * user, and the impersonated session ends itself. Only with `impersonation.enabled`.
 */
export const impersonationRoutes: readonly Route[] = [
  {
    method: "POST",
    path: "/auth/admin/users/:id/impersonate",
    access: "admin",
    enabled: impersonationOn,
    doc: {
      operationId: "impersonateUser",
      tag: "Impersonation",
      summary: "Begin a session as a user, for support",
      description:
        "For an administrator who also holds `impersonation.role`, after their re-authentication (STUP-3): a recent sign-in, or their own `password` (and `totpCode`) in the body. The user must be enabled and hold neither role (40300). The new session is the user's, marked with the administrator: its access tokens carry `act: { sub: <administrator> }` (RFC 8693 §4.1), the user's sessions list shows it, it ends at `impersonation.expiresAt` (`impersonation.duration` after it began; refreshes never extend it), proves no factor, and can neither re-authenticate nor change a credential or second factor (40300, IMP-2). Its tokens are answered in the body only, never in a cookie: the administrator's own session and refresh cookie go on. Emits `impersonation.started`.",
      parameters: [{ name: "id", in: "path", description: "The user's id" }],
      body: requestObject(adminProof),
      data: answerObject(
        {
          ...tokenSetProperties,
          impersonation: answerObject({
            by: { type: "string", description: "The administrator acting" },
            expiresAt: { type: "integer", minimum: 0, description: "When the session ends, epoch milliseconds" },
          }),
        },
        ["deviceToken", "offerPasskey"],
      ),
      codes: [40001, 40100, 40103, 40400, 40900, 42900],
    },
    async handle(context) {
      const tokens = await impersonateUser(context.auth, {
        ...adminProofOf(context),
        userId: context.params.id as string,
        ip: context.ip,
        userAgent: context.header("user-agent"),
      });
      return { data: tokens };
    },
  },
  {
    method: "POST",
    path: "/auth/impersonation/end",
    access: "bearer",
    enabled: impersonationOn,
    doc: {
      operationId: "endImpersonation",
      tag: "Impersonation",
      summary: "End the impersonated session of the request",
      description:
        "What the administrator's “stop acting as” button calls with the impersonated session's access token: the session ends at once (its refresh token is refused). A session of the user's own is 40300. Emits `impersonation.ended`.",
      data: answerObject({ ended: { const: true } }),
      codes: [],
    },
    async handle(context) {
      return { data: await endImpersonation(context.auth, { userId: signedIn(context), sessionId: sessionOf(context) }) };
    },
  },
];
