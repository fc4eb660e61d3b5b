// Additional user fields over HTTP (issue 38, item 2): sign-up and the user's own profile update,
// on every adapter, with the contract's codes for a malformed field (40002) and a refused one (42200).
import { field } from "@portcullis/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestAuth, createTestUser, generousThrottle, makeTestAuth, testPassword } from "../fixtures/auth.js";
import { call, post } from "./client.js";
import { expectEnvelope } from "./contract-suite.js";
import { describeOpenApiDrift } from "./openapi-drift.js";
import { type RunningServer, adapters } from "./servers.js";

const base = "/api/v1/auth";
const fields = {
  company: field.string({ maxLength: 20, signUp: true, selfEdit: true }),
  plan: field.enum(["free", "pro"], { default: "free", inToken: true }),
  beta: field.boolean({ default: false, selfEdit: true, inMe: false }),
};

describe.each(adapters)("additional user fields on %s", (_name, start) => {
  const context = {} as { testAuth: TestAuth; server: RunningServer };
  beforeAll(async () => {
    context.testAuth = makeTestAuth({ throttle: generousThrottle, signUp: { enabled: true }, user: { fields } });
    context.server = await start(context.testAuth.auth);
  });
  afterAll(async () => {
    await context.server?.close();
  });
  const register = (username: string, given: unknown) =>
    post(context.server, `${base}/register`, { username, password: testPassword, fields: given });
  const patchMe = (token: string, json: unknown) => call(context.server, "PATCH", `${base}/me`, { token, json });

  it("UF-1: sign-up stores the signUp fields and answers them with the defaults of the others; /me shows the same", async () => {
    const answer = await register("ada", { company: "Acme" });
    expectEnvelope(answer, 0);
    expect(answer.body.data.user).toMatchObject({ username: "ada", company: "Acme", plan: "free" });
    expect(answer.body.data.user).not.toHaveProperty("beta");
    const me = await call(context.server, "GET", `${base}/me`, { token: answer.body.data.accessToken });
    expect(me.body.data).toEqual(answer.body.data.user);
  });

  it("UF-1: sign-up refuses a field that is not signUp (42200) and a malformed or undeclared one (40002), naming it", async () => {
    const notSignUp = await register("bea", { plan: "pro" });
    expectEnvelope(notSignUp, 42200);
    expect(notSignUp.body.message).toBe("fields.plan cannot be set at sign-up");
    const malformed = await register("bea", { company: 7 });
    expectEnvelope(malformed, 40002);
    expect(malformed.body.message).toBe("fields.company must be a string");
    expectEnvelope(await register("bea", { nope: "x" }), 40002);
    expectEnvelope(await register("bea", "company"), 40002);
    expectEnvelope(await register("bea", { company: "x".repeat(21) }), 42200);
    expect(await context.testAuth.auth.storage.users.findByUsernameKey("bea")).toBeNull();
  });

  it("UF-1: PATCH /auth/me changes selfEdit fields only; 42200 for another, 40001 without fields, 40101 without a token", async () => {
    const signedUp = await register("cyd", {});
    const token = signedUp.body.data.accessToken as string;
    const changed = await patchMe(token, { fields: { company: "Initech", beta: true } });
    expectEnvelope(changed, 0);
    expect(changed.body.data).toMatchObject({ username: "cyd", company: "Initech", plan: "free" });
    const stored = await context.testAuth.auth.storage.users.findByUsernameKey("cyd");
    expect(stored?.fields).toMatchObject({ company: "Initech", beta: true });
    const refused = await patchMe(token, { fields: { plan: "pro" } });
    expectEnvelope(refused, 42200);
    expect(refused.body.message).toBe("fields.plan cannot be changed by the user");
    expectEnvelope(await patchMe(token, {}), 40001);
    expectEnvelope(await patchMe(token, { fields: { company: ["x"] } }), 40002);
    expectEnvelope(await call(context.server, "PATCH", `${base}/me`, { json: { fields: { company: "x" } } }), 40101);
    expect((await context.testAuth.auth.storage.users.findByUsernameKey("cyd"))?.fields).toMatchObject({ plan: "free" });
  });

  it("administrators set any field: POST /auth/admin/users with fields, PATCH with fields after re-authentication", async () => {
    await createTestUser(context.testAuth.auth, "root", ["admin"]);
    const signedIn = await post(context.server, `${base}/login`, { username: "root", password: testPassword });
    const token = signedIn.body.data.accessToken as string;
    const made = await call(context.server, "POST", `${base}/admin/users`, {
      token,
      json: { username: "dee", fields: { plan: "pro", company: "Acme" } },
    });
    expectEnvelope(made, 0);
    expect(made.body.data).toMatchObject({ username: "dee", plan: "pro", company: "Acme" });
    const malformed = await call(context.server, "POST", `${base}/admin/users`, {
      token,
      json: { username: "eve", fields: { plan: 1 } },
    });
    expectEnvelope(malformed, 40002);
    const changed = await call(context.server, "PATCH", `${base}/admin/users/${made.body.data.id}`, {
      token,
      json: { fields: { plan: "free", beta: true }, password: testPassword },
    });
    expectEnvelope(changed, 0);
    expect(changed.body.data).toMatchObject({ plan: "free", company: "Acme" });
    const outOfRange = await call(context.server, "PATCH", `${base}/admin/users/${made.body.data.id}`, {
      token,
      json: { fields: { plan: "gold" }, password: testPassword },
    });
    expectEnvelope(outOfRange, 42200);
    expect(outOfRange.body.message).toBe("fields.plan must be one of free, pro");
  });
});

describeOpenApiDrift({ exercises: ["register", "updateProfile", "getPublicUser", "login", "adminCreateUser", "updateUser"] });
