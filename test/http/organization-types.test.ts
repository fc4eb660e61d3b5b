// requireAuth's org option and what it puts on the request, as types (OR-7): a mistake in the
// option fails the type check in the user's editor, before any request.
import type { AccessContext, ActiveOrganization, Auth, OrganizationOptions } from "@portcullis/core";
import { requireAuth as requireAuthExpress } from "@portcullis/express";
import { requireAuth as requireAuthFastify } from "@portcullis/fastify";
import { requireAuth as requireAuthHono } from "@portcullis/hono";
import type { Request } from "express";
import type { FastifyRequest } from "fastify";
import { describe, expectTypeOf, it } from "vitest";

describe("organization types", () => {
  it("OR-7: the request's access context has org: { id, roles } or null, on every adapter's request", () => {
    expectTypeOf<AccessContext["org"]>().toEqualTypeOf<ActiveOrganization | null>();
    expectTypeOf<ActiveOrganization>().toEqualTypeOf<{ readonly id: string; readonly roles: readonly string[] }>();
    expectTypeOf<NonNullable<Request["auth"]>["org"]>().toEqualTypeOf<ActiveOrganization | null>();
    expectTypeOf<NonNullable<FastifyRequest["auth"]>["org"]>().toEqualTypeOf<ActiveOrganization | null>();
  });

  it("OR-7: every adapter's requireAuth takes org: true or { roles }; anything else does not compile", () => {
    const typeOnly = (auth: Auth) => {
      const good: OrganizationOptions = { org: { roles: ["admin"] } };
      requireAuthExpress(auth, { ...good, roles: ["user"], maxAge: "5m" });
      requireAuthHono(auth, { org: true });
      requireAuthFastify(auth, { org: { roles: ["owner", "admin"] } });
      // @ts-expect-error: org is true or { roles }, never false
      requireAuthExpress(auth, { org: false });
      // @ts-expect-error: the roles are a list
      requireAuthHono(auth, { org: { roles: "admin" } });
      // @ts-expect-error: a role name alone is not the option
      requireAuthFastify(auth, { org: "admin" });
    };
    expectTypeOf(typeOnly).toBeFunction();
  });
});
