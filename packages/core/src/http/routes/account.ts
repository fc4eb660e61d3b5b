import { getPublicUser } from "../../flows/manage-users.js";
import { schemaRef } from "../openapi-schemas.js";
import type { Route } from "../route-types.js";
import { signedIn } from "./shared.js";

/** The signed-in user's own account. */
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
];
