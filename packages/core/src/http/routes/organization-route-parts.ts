import type { Auth } from "../../auth.js";
import type { JsonSchema } from "../openapi-schemas.js";
import type { ParameterDoc, RouteContext } from "../route-types.js";
import { signedIn } from "./shared.js";

/** Organizations are on: every organization route exists only then (otherwise 40400, as an unknown route). */
export const organizationsOn = (auth: Auth): boolean => auth.config.organizations.enabled;

/** The path parameter of every `/auth/orgs/:orgId…` route. */
export const orgIdParameter: ParameterDoc = {
  name: "orgId",
  in: "path",
  description: "The organization's id. One of which the caller is not a member answers 40400, exactly as an unknown id (OR-2)",
};

/** The query parameters of a paged list of at most `max` entries a page. */
export const pageParameters = (max: number): ParameterDoc[] => [
  { name: "cursor", in: "query", description: "The `nextCursor` of the page before" },
  {
    name: "limit",
    in: "query",
    description: "Entries per page, default 50",
    schema: { type: "integer", minimum: 1, maximum: max },
  },
];

/** A paged answer's `nextCursor`. */
export const nextCursor: JsonSchema = {
  type: ["string", "null"],
  description: "The `cursor` of the next page; null on the last page",
};

/** The roles a member or an invitation is given. */
export const organizationRoles: JsonSchema = {
  type: "array",
  items: { type: "string", minLength: 1 },
  description: "Role names of `organizations.roles`, none above the caller's own highest (OR-4)",
};

/** The organization of the path and the signed-in caller: what every `/auth/orgs/:orgId…` flow takes. */
export const callerIn = (context: RouteContext) => ({ userId: signedIn(context), orgId: context.params.orgId as string });

/** The re-authentication codes (STUP-3): missing, wrong password, wrong code, no local password, throttled. */
export const reauthenticationCodes = [40001, 40100, 40103, 40900, 42900] as const;
