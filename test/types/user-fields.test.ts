/**
 * Type tests of the additional user fields (issue 38, item 2): the declaration's types reach
 * `req.auth.user` on Express (through `Register`), `c.get("auth")` on Hono (through the
 * middleware's auth), the Fastify request (through `Register`), the client (`createAuthClient<typeof
 * auth>()`), and `InferUser`. `tsc -p tsconfig.json` checks this file: a wrong expectation fails the
 * typecheck. The runtime part only makes sure the file is also a test vitest runs.
 */

import { createAuthClient } from "@portcullis/client";
import {
  type AccessContext,
  type AccessUser,
  type FieldValueOf,
  type InferUser,
  type UserField,
  createAuth,
  field,
  memoryStorage,
} from "@portcullis/core";
import { requireAuth as expressRequireAuth } from "@portcullis/express";
import { requireAuth as fastifyRequireAuth } from "@portcullis/fastify";
import { type AuthVariables, requireAuth as honoRequireAuth } from "@portcullis/hono";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { describe, expect, expectTypeOf, it } from "vitest";

const typedAuth = createAuth({
  storage: memoryStorage(),
  issuer: "https://api.example.com",
  audience: "example-api",
  secrets: { signing: "type-test-signing-secret-0123456789-abcdefgh", encryption: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8" },
  user: {
    fields: {
      company: field.string({ maxLength: 100, signUp: true, selfEdit: true }),
      plan: field.enum(["free", "pro"], { default: "free", inToken: true }),
      seats: field.integer({ required: true, inToken: true }),
      beta: field.boolean({ selfEdit: true, inMe: false }),
      tags: field.stringArray({ default: [] }),
    },
  },
});

// What a service writes once, beside its auth instance: Express's and Fastify's requests know its fields.
declare module "@portcullis/core" {
  interface Register {
    auth: typeof typedAuth;
  }
}

describe("types of additional user fields", () => {
  it("a field's value type: nullable without a non-null default, not with one or when required", () => {
    const short = field.string({ maxLength: 3 });
    const choice = field.enum(["a", "b"], { default: "a" });
    const count = field.integer({ required: true });
    const flag = field.boolean({ default: null });
    expectTypeOf<FieldValueOf<typeof short>>().toEqualTypeOf<string | null>();
    expectTypeOf<FieldValueOf<typeof choice>>().toEqualTypeOf<"a" | "b">();
    expectTypeOf<FieldValueOf<typeof count>>().toEqualTypeOf<number>();
    expectTypeOf<FieldValueOf<typeof flag>>().toEqualTypeOf<boolean | null>();
    expectTypeOf<FieldValueOf<UserField<string, { required: true }>>>().toEqualTypeOf<string>();
  });

  it("InferUser: the contract's user with the fields not declared inMe: false", () => {
    type User = InferUser<typeof typedAuth>;
    expectTypeOf<User["company"]>().toEqualTypeOf<string | null>();
    expectTypeOf<User["plan"]>().toEqualTypeOf<"free" | "pro">();
    expectTypeOf<User["seats"]>().toEqualTypeOf<number>();
    expectTypeOf<User["tags"]>().toEqualTypeOf<string[]>();
    expectTypeOf<User["username"]>().toEqualTypeOf<string>();
    expectTypeOf<User>().not.toHaveProperty("beta");
  });

  it("AccessContext.user holds id, roles and the inToken fields only, by default the registered instance's", () => {
    expectTypeOf<AccessContext["user"]>().toEqualTypeOf<AccessUser>();
    expectTypeOf<AccessContext["user"]["plan"]>().toEqualTypeOf<"free" | "pro">();
    expectTypeOf<AccessContext["user"]["seats"]>().toEqualTypeOf<number>();
    expectTypeOf<AccessContext["user"]["id"]>().toEqualTypeOf<string>();
    expectTypeOf<AccessContext["user"]>().not.toHaveProperty("company");
    expectTypeOf<keyof AccessContext<Record<never, never>>["user"]>().toEqualTypeOf<"id" | "roles">();
  });

  it("Express: req.auth.user in a handler behind requireAuth", () => {
    const app = express();
    app.get("/things", expressRequireAuth(typedAuth), (req, res) => {
      expectTypeOf(req.auth?.user.plan).toEqualTypeOf<"free" | "pro" | undefined>();
      expectTypeOf(req.auth?.user.seats).toEqualTypeOf<number | undefined>();
      res.json({ plan: req.auth?.user.plan });
    });
    expect(typeof app).toBe("function");
  });

  it('Hono: c.get("auth").user behind requireAuth(auth), with or without AuthVariables', () => {
    const app = new Hono<{ Variables: AuthVariables<typeof typedAuth> }>();
    app.get("/things", honoRequireAuth(typedAuth), (c) => {
      expectTypeOf(c.get("auth").user.plan).toEqualTypeOf<"free" | "pro">();
      expectTypeOf(c.get("auth").user.seats).toEqualTypeOf<number>();
      return c.json({ plan: c.get("auth").user.plan });
    });
    const plain = new Hono();
    plain.get("/things", honoRequireAuth(typedAuth), (c) => {
      expectTypeOf(c.get("auth").user.plan).toEqualTypeOf<"free" | "pro">();
      return c.text("ok");
    });
    expect(app.routes.length + plain.routes.length).toBe(4);
  });

  it("Fastify: request.auth.user in a route behind requireAuth", () => {
    const app = Fastify();
    app.get("/things", { preHandler: fastifyRequireAuth(typedAuth) }, async (request) => {
      expectTypeOf(request.auth?.user.plan).toEqualTypeOf<"free" | "pro" | undefined>();
      return { plan: request.auth?.user.plan };
    });
    expect(typeof app.close).toBe("function");
  });

  it("the client: me(), currentUser(), the sign-in's user, sign-up and profile fields, without casts", () => {
    const client = createAuthClient<typeof typedAuth>({ baseUrl: "https://api.example.com/api/v1" });
    expectTypeOf(client.me).returns.resolves.toHaveProperty("company").toEqualTypeOf<string | null>();
    expectTypeOf(client.me).returns.resolves.toHaveProperty("plan").toEqualTypeOf<"free" | "pro">();
    expectTypeOf(client.currentUser).returns.resolves.toEqualTypeOf<InferUser<typeof typedAuth> | null>();
    expectTypeOf(client.account.updateProfile).parameter(0).toEqualTypeOf<{ company?: string | null; beta?: boolean | null }>();
    expectTypeOf(client.register).parameter(0).toHaveProperty("fields").toEqualTypeOf<{ company?: string | null } | undefined>();
    type Me = Awaited<ReturnType<typeof client.me>>;
    expectTypeOf<"beta" extends keyof Me ? true : false>().toEqualTypeOf<false>();
    const untyped = createAuthClient();
    type PlainMe = Awaited<ReturnType<typeof untyped.me>>;
    expectTypeOf<"company" extends keyof PlainMe ? true : false>().toEqualTypeOf<false>();
    expect(typeof client.me).toBe("function");
  });
});
