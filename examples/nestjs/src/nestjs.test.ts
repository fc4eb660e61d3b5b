// Drives the NestJS example over HTTP on both of Nest's platforms: the routes mounted from
// @portcullis/express and @portcullis/fastify, the controller behind the guard.
import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { INestApplication } from "@nestjs/common";
import { type Auth, createAuth, createUser, memoryStorage } from "@portcullis/core";
import { authRouter, requireAuth } from "@portcullis/express";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { createExpressApp } from "./express-app.js";
import { createFastifyApp } from "./fastify-app.js";

interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: the tests read whatever a route returns
  body: any;
}

const randomText = (bytes = 32) => randomBytes(bytes).toString("base64url");
const closers: Array<() => Promise<void>> = [];

afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

function newAuth(): Auth {
  return createAuth({
    storage: memoryStorage(),
    issuer: "https://api.example.com",
    audience: "example-api",
    secrets: { signing: randomText(), encryption: randomText() },
  });
}

async function listen(app: INestApplication): Promise<string> {
  await app.listen(0, "127.0.0.1");
  closers.push(() => app.close());
  return await app.getUrl().then((url) => url.replace("[::1]", "127.0.0.1"));
}

async function call(
  base: string,
  method: string,
  path: string,
  options: { body?: unknown; token?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.body !== undefined) headers["content-type"] = "application/json";
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

async function signIn(auth: Auth, base: string, username: string, roles: string[] = []) {
  const password = randomText(18);
  const user = await createUser(auth, { username, password, roles });
  const answer = await call(base, "POST", "/api/v1/auth/login", { body: { username, password } });
  expect(answer.status).toBe(200);
  expect(answer.body.code).toBe(0);
  return {
    userId: user.id,
    accessToken: answer.body.data.accessToken as string,
    refreshToken: answer.body.data.refreshToken as string,
  };
}

/** What the adapters' requireAuth answers for the same refusal, on a bare Express app with the same auth. */
async function requireAuthAnswer(auth: Auth, token: string | undefined, roles?: string[]): Promise<Answer> {
  const app = express();
  app.use(authRouter(auth));
  app.get("/guarded", requireAuth(auth, roles ? { roles } : {}), (_req, res) => {
    res.json({});
  });
  const server: Server = app.listen(0, "127.0.0.1");
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  await new Promise<void>((resolve) => server.once("listening", resolve));
  return await call(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, "GET", "/guarded", token ? { token } : {});
}

function expectSameRefusal(answer: Answer, reference: Answer, code: number): void {
  expect(answer.body.code).toBe(code);
  expect(answer.status).toBe(reference.status);
  expect(answer.body).toEqual(reference.body);
  for (const name of ["content-type", "cache-control", "x-content-type-options"]) {
    expect(answer.headers.get(name)).toBe(reference.headers.get(name));
  }
}

async function walkApp(auth: Auth, base: string): Promise<void> {
  const alice = await signIn(auth, base, "alice", ["admin"]);
  const bob = await signIn(auth, base, "bob");

  const profile = await call(base, "GET", "/api/profile", { token: bob.accessToken });
  expect(profile.status).toBe(200);
  expect(profile.body).toEqual({ userId: bob.userId, roles: [] });

  const anonymous = await call(base, "GET", "/api/profile");
  expectSameRefusal(anonymous, await requireAuthAnswer(auth, undefined), 40101);
  expect(anonymous.status).toBe(401);
  const forged = await call(base, "GET", "/api/profile", { token: `${bob.accessToken}x` });
  expectSameRefusal(forged, await requireAuthAnswer(auth, `${bob.accessToken}x`), 40101);

  const refused = await call(base, "GET", "/api/admin/report", { token: bob.accessToken });
  expectSameRefusal(refused, await requireAuthAnswer(auth, bob.accessToken, ["admin"]), 40300);
  expect(refused.status).toBe(403);

  const report = await call(base, "GET", "/api/admin/report", { token: alice.accessToken });
  expect(report.status).toBe(200);
  expect(report.body).toEqual({ report: "all good", readBy: alice.userId });

  const refreshed = await call(base, "POST", "/api/v1/auth/refresh", { body: { refreshToken: bob.refreshToken } });
  expect(refreshed.status).toBe(200);
  expect(refreshed.body.code).toBe(0);
  expect(refreshed.body.data.refreshToken).not.toBe(bob.refreshToken);
  const again = await call(base, "GET", "/api/profile", { token: refreshed.body.data.accessToken });
  expect(again.status).toBe(200);
  expect(again.body.userId).toBe(bob.userId);

  const me = await call(base, "GET", "/api/v1/auth/me", { token: refreshed.body.data.accessToken });
  expect(me.body.data).toMatchObject({ username: "bob" });
  expect((await call(base, "GET", "/api/v1/auth/nope")).body.code).toBe(40400);
  // HTTP-5: a path Fastify's router cannot decode is Portcullis's answer too (frameworkErrors).
  expect(await call(base, "GET", "/api/v1/auth/%ff")).toMatchObject({ status: 404, body: { code: 40400 } });
}

describe("examples/nestjs", () => {
  it("on Nest's Express platform: the routes, the guard and the roles decorator", async () => {
    const auth = newAuth();
    await walkApp(auth, await listen(await createExpressApp(auth)));
  });

  it("on Nest's Fastify platform: the routes, the guard and the roles decorator", async () => {
    const auth = newAuth();
    await walkApp(auth, await listen(await createFastifyApp(auth)));
  });
});
