// requireAuth's scopes and credentials options and what they put on the request, as types (AK-2):
// a route that accepts keys sees AccessContext | ApiKeyContext, told apart by kind; the others
// keep AccessContext; a mistake in the options fails the type check.
import type { AccessContext, ApiKeyContext, Auth, CredentialOptions, ServiceAccountContext } from "@portcullis/core";
import { type CredentialRequest, type MachineRequest, requireAuth as requireAuthExpress } from "@portcullis/express";
import {
  type CredentialRequest as FastifyCredentialRequest,
  type MachineRequest as FastifyMachineRequest,
  requireAuth as requireAuthFastify,
} from "@portcullis/fastify";
import { requireAuth as requireAuthHono } from "@portcullis/hono";
import { Hono } from "hono";
import { describe, expectTypeOf, it } from "vitest";

describe("API key types", () => {
  it("AK-2: the contexts are told apart by kind", () => {
    expectTypeOf<AccessContext["kind"]>().toEqualTypeOf<"access_token">();
    expectTypeOf<ApiKeyContext["kind"]>().toEqualTypeOf<"api_key">();
    expectTypeOf<NonNullable<CredentialRequest["auth"]>>().toEqualTypeOf<AccessContext | ApiKeyContext>();
    expectTypeOf<NonNullable<FastifyCredentialRequest["auth"]>>().toEqualTypeOf<AccessContext | ApiKeyContext>();
  });

  it("AK-2: Hono's c.get('auth') is the union only where requireAuth accepts keys", () => {
    const typeOnly = (auth: Auth) => {
      const app = new Hono();
      app.get("/keys", requireAuthHono(auth, { scopes: ["reports:read"] }), (c) => {
        expectTypeOf(c.get("auth").kind).toEqualTypeOf<"access_token" | "api_key">();
        return c.text("ok");
      });
      app.get("/keys-only", requireAuthHono(auth, { credentials: "api_key" }), (c) => {
        expectTypeOf(c.get("auth").kind).toEqualTypeOf<"access_token" | "api_key">();
        return c.text("ok");
      });
      app.get("/tokens", requireAuthHono(auth, { roles: ["admin"] }), (c) => {
        expectTypeOf(c.get("auth").kind).toEqualTypeOf<"access_token">();
        expectTypeOf(c.get("auth").sessionId).toEqualTypeOf<string>();
        return c.text("ok");
      });
      app.get("/tokens-named", requireAuthHono(auth, { credentials: "access_token" }), (c) => {
        expectTypeOf(c.get("auth").kind).toEqualTypeOf<"access_token">();
        expectTypeOf(c.get("auth").sessionId).toEqualTypeOf<string>();
        return c.text("ok");
      });
    };
    expectTypeOf(typeOnly).toBeFunction();
  });

  it("SA-4: a service account's context appears only where credentials name service accounts", () => {
    expectTypeOf<ServiceAccountContext["kind"]>().toEqualTypeOf<"service_account">();
    expectTypeOf<NonNullable<MachineRequest["auth"]>>().toEqualTypeOf<AccessContext | ApiKeyContext | ServiceAccountContext>();
    expectTypeOf<NonNullable<FastifyMachineRequest["auth"]>>().toEqualTypeOf<
      AccessContext | ApiKeyContext | ServiceAccountContext
    >();
    const typeOnly = (auth: Auth) => {
      const app = new Hono();
      app.get("/services", requireAuthHono(auth, { credentials: "service_account", scopes: ["invoices:read"] }), (c) => {
        expectTypeOf(c.get("auth").kind).toEqualTypeOf<"access_token" | "api_key" | "service_account">();
        return c.text("ok");
      });
      app.get("/people-or-services", requireAuthHono(auth, { credentials: ["access_token", "service_account"] }), (c) => {
        expectTypeOf(c.get("auth").kind).toEqualTypeOf<"access_token" | "api_key" | "service_account">();
        return c.text("ok");
      });
      app.get("/any", requireAuthHono(auth, { credentials: "any" }), (c) => {
        expectTypeOf(c.get("auth").kind).toEqualTypeOf<"access_token" | "api_key">();
        return c.text("ok");
      });
      requireAuthExpress(auth, { credentials: ["api_key", "service_account"] });
      // @ts-expect-error: no such kind of credential in a list
      requireAuthFastify(auth, { credentials: ["access_token", "client"] });
    };
    expectTypeOf(typeOnly).toBeFunction();
  });

  it("AK-2: every adapter's requireAuth takes scopes and credentials; anything else does not compile", () => {
    const typeOnly = (auth: Auth) => {
      const good: CredentialOptions = { scopes: ["reports:read"], credentials: "any" };
      requireAuthExpress(auth, { ...good, roles: ["user"] });
      requireAuthHono(auth, { credentials: "api_key" });
      requireAuthFastify(auth, { scopes: [] });
      // @ts-expect-error: scopes are a list
      requireAuthExpress(auth, { scopes: "reports:read" });
      // @ts-expect-error: no such kind of credential
      requireAuthHono(auth, { credentials: "session" });
      // @ts-expect-error: no such kind of credential
      requireAuthFastify(auth, { credentials: "cookie" });
    };
    expectTypeOf(typeOnly).toBeFunction();
  });
});
