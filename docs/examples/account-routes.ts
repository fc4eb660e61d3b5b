import {
  type AccessContext,
  type Auth,
  type HttpResponse,
  changePassword,
  errorResponse,
  setUserDisabled,
  setUserRoles,
  signOutEverywhere,
} from "@portcullis/core";
import { requireAuth } from "@portcullis/express";
import express, { type Request, type Response, Router } from "express";

/** Sends a core response (status, headers, envelope body) through Express. */
function send(res: Response, response: HttpResponse): void {
  res.status(response.status).set(response.headers).send(response.body);
}

/** Answers `data` in the Portcullis envelope, or the envelope of the error `action` threw. */
async function answer(auth: Auth, res: Response, action: () => Promise<unknown>): Promise<void> {
  try {
    const data = await action();
    res.set("cache-control", "no-store").json({ code: 0, message: "OK", data });
  } catch (error) {
    send(res, errorResponse(auth, error)); // AuthError → its code; anything else → 50000 + onInternalError
  }
}

/** Who the access token speaks for; `requireAuth` ran before, so it is set. */
const caller = (req: Request) => req.auth as AccessContext;

/** A string field of the JSON body, or undefined; the flows answer 40001/40002 for bad values. */
const field = (req: Request, name: string) => (req.body as Record<string, unknown> | undefined)?.[name] as string;

/**
 * The account flows called from a service's own routes, under paths of its own: changing one's
 * own password, signing out everywhere, and an administrator setting roles or disabling a user.
 * Portcullis serves the same operations itself (`POST /auth/password`, `DELETE /auth/sessions`,
 * `/auth/admin/users…`); routes like these are for a service that wants other paths or checks.
 * A password change made from a session keeps that session and ends the user's others (SE-2);
 * signing out everywhere, a role change and disabling raise the token version and end them all.
 */
export function accountRoutes(auth: Auth): Router {
  const router = Router();
  const json = express.json({ limit: "64kb" }); // after requireAuth: no body is read for a caller without a token

  router.post("/api/v1/account/password", requireAuth(auth), json, (req, res) =>
    answer(auth, res, () =>
      changePassword(auth, {
        userId: caller(req).userId,
        sessionId: caller(req).sessionId,
        currentPassword: field(req, "currentPassword"),
        newPassword: field(req, "newPassword"),
      }),
    ),
  );

  router.post("/api/v1/account/sign-out-everywhere", requireAuth(auth), (req, res) =>
    answer(auth, res, async () => ({ ended: await signOutEverywhere(auth, { userId: caller(req).userId }) })),
  );

  const admin = requireAuth(auth, { roles: ["admin"] });
  router.put("/api/v1/admin/users/:id/roles", admin, json, (req, res) =>
    answer(auth, res, () =>
      setUserRoles(auth, {
        userId: String(req.params.id),
        roles: (req.body as { roles?: unknown } | undefined)?.roles as string[],
      }),
    ),
  );
  router.post("/api/v1/admin/users/:id/disable", admin, (req, res) =>
    answer(auth, res, () => setUserDisabled(auth, { userId: String(req.params.id), disabled: true })),
  );
  return router;
}
