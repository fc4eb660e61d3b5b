import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { explainMountPath } from "@portcullis/core";
import { authRouter, requireAuth as requireAuthExpress } from "@portcullis/express";
import { authApp, authRoutes, requireAuth as requireAuthHono } from "@portcullis/hono";
import express, { type NextFunction, type Request, type Response } from "express";
import { Hono } from "hono";
import { afterEach, describe, expect, it, vi } from "vitest";
import { makeTestAuth } from "../fixtures/auth.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function listen(app: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve()) && server.closeAllConnections()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Captures what is written to stderr from now on. */
function captureStderr(): string[] {
  const written: string[] = [];
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  return written;
}

const login = (base: string, path: string) =>
  fetch(`${base}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });

describe("Express: the adapter checks what it is given", () => {
  it("authRouter() and requireAuth() without an auth instance throw a TypeError that says what to write", () => {
    const { auth } = makeTestAuth();
    expect(() => authRouter(undefined as never)).toThrow(
      new TypeError("authRouter needs the auth instance createAuth() returns, and got nothing. Write app.use(authRouter(auth))"),
    );
    expect(() => requireAuthExpress(undefined as never)).toThrow(
      'requireAuth needs the auth instance createAuth() returns, and got nothing. Write requireAuth(auth) or requireAuth(auth, { roles: ["admin"] })',
    );
    expect(() => authRouter({ issuer: "https://x", secrets: {} } as never)).toThrow(
      "got a configuration; pass it to createAuth() first",
    );
    expect(() => authRouter(auth)).not.toThrow();
    expect(() => requireAuthExpress(auth)).not.toThrow();
  });

  it("takes only an auth instance, each part of its shape checked, and names what it got instead", () => {
    const { auth } = makeTestAuth();
    const got = (value: unknown) => {
      try {
        authRouter(value as never);
      } catch (error) {
        expect(error).toBeInstanceOf(TypeError);
        return (error as TypeError).message.replace(/^.*and got (.*)\. Write .*$/, "$1");
      }
      return "accepted";
    };
    const { config, storage, emit, keys } = auth;
    expect(got({ config, storage, emit, keys })).toBe("accepted");
    expect(got({ storage, emit, keys })).toBe("an object");
    expect(got({ config, emit, keys })).toBe("an object");
    expect(got({ config, storage, keys })).toBe("an object");
    expect(got({ config, storage, emit })).toBe("an object");
    expect(got({ config, storage, emit: {}, keys })).toBe("an object");
    expect(got({ config: "x", storage, emit, keys })).toBe("an object");
    expect(got("auth")).toBe("a string");
    expect(got(() => auth)).toBe("a function");
    expect(got({ issuer: "https://x" })).toBe("an object");
    expect(got({ secrets: {} })).toBe("an object");
    expect(got({ issuer: "https://x", secrets: {} })).toBe("a configuration; pass it to createAuth() first");
    expect(got({ method: "GET" })).toBe("a request, so the function itself was mounted without being called");
  });

  it("app.use(authRouter), without the call, fails its first request with that TypeError instead of hanging", async () => {
    const errors: unknown[] = [];
    const app = express();
    app.use(authRouter as never);
    app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
      errors.push(error);
      res.status(500).end();
    });
    const response = await login(await listen(app), "/api/v1/auth/login");
    expect(response.status).toBe(500);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(TypeError);
    expect((errors[0] as TypeError).message).toBe(
      "authRouter needs the auth instance createAuth() returns, and got a request, so the function itself was mounted without being called. Write app.use(authRouter(auth))",
    );
  });

  it("mounted under a path that swallows part of basePath, it explains once on stderr which basePath or mount to use", async () => {
    const { auth } = makeTestAuth();
    const app = express();
    app.use("/api/v1", authRouter(auth));
    const base = await listen(app);
    const written = captureStderr();
    expect((await login(base, "/api/v1/auth/login")).status).toBe(404);
    expect((await login(base, "/api/v1/auth/logout")).status).toBe(404);
    expect((await login(base, "/api/v1/things")).status).toBe(404);
    expect(written).toEqual([
      '[portcullis] authRouter(auth) is mounted under "/api/v1", so it sees "/auth/login" for "/api/v1/auth/login"; its routes are at "/api/v1/auth/…" below where it is mounted. Mount it with app.use(authRouter(auth)) and no path, or set http.basePath to "".\n',
    ]);
  });

  it("says nothing when the mount and basePath agree, or for paths that name no route", async () => {
    const { auth } = makeTestAuth({ http: { basePath: "" } });
    const app = express();
    app.use("/api/v1", authRouter(auth));
    const base = await listen(app);
    const written = captureStderr();
    expect((await login(base, "/api/v1/auth/login")).status).toBe(400);
    expect((await login(base, "/api/v1/elsewhere/auth")).status).toBe(404);
    expect(written).toEqual([]);
  });
});

describe("Express: what a mount under a path is told", () => {
  /** The lines written for one request to `path`, with authRouter mounted under `mount`. */
  async function linesFor(mount: string, path: string, http?: { basePath: string }): Promise<string[]> {
    const { auth } = makeTestAuth(http ? { http } : {});
    const app = express();
    app.use(mount, authRouter(auth));
    const base = await listen(app);
    const written = captureStderr();
    await login(base, path);
    return written;
  }

  it("a route with a parameter is recognised, and the base path to set is the part the mount swallowed too little of", async () => {
    expect(await linesFor("/api/v1", "/api/v1/auth/sessions/abc")).toEqual([
      expect.stringContaining('sees "/auth/sessions/abc" for "/api/v1/auth/sessions/abc"; its routes are at "/api/v1/auth/…"'),
    ]);
    expect(await linesFor("/api", "/api/v1/auth/login")).toEqual([
      '[portcullis] authRouter(auth) is mounted under "/api", so it sees "/v1/auth/login" for "/api/v1/auth/login"; its routes are at "/api/v1/auth/…" below where it is mounted. Mount it with app.use(authRouter(auth)) and no path, or set http.basePath to "/v1".\n',
    ]);
    expect(await linesFor("/x", "/x/a/b/auth/admin/users/u1/totp", { basePath: "/a" })).toEqual([
      expect.stringContaining('or set http.basePath to "/a/b".'),
    ]);
  });

  it("says nothing for a path under /auth that names no route, or is shorter than every route", async () => {
    expect(await linesFor("/api/v1", "/api/v1/auth/nothing-here")).toEqual([]);
    expect(await linesFor("/api/v1", "/api/v1/auth")).toEqual([]);
    expect(await linesFor("/api/v1", "/api/v1/auth/sessions/abc/more")).toEqual([]);
  });

  it("explainMountPath says nothing when the path names a route under the configured basePath", () => {
    const { auth } = makeTestAuth();
    const written = captureStderr();
    explainMountPath(auth, "/api", "/api/v1/auth/login");
    expect(written).toEqual([]);
    explainMountPath(auth, "/api", "/v1/auth/login");
    expect(written).toHaveLength(1);
  });
});

describe("Hono: the adapter checks what it is given", () => {
  it("authRoutes(), authApp() and requireAuth() without an auth instance throw a TypeError that says what to write", () => {
    expect(() => authRoutes(undefined as never)).toThrow("Write app.use(authRoutes(auth))");
    expect(() => authApp(null as never)).toThrow(
      'authApp needs the auth instance createAuth() returns, and got null. Write app.route("/", authApp(auth))',
    );
    expect(() => requireAuthHono(undefined as never)).toThrow("Write requireAuth(auth)");
  });

  it("app.use(authRoutes), without the call, fails its first request with that TypeError", async () => {
    const errors: unknown[] = [];
    const app = new Hono();
    app.use(authRoutes as never);
    app.onError((error, c) => {
      errors.push(error);
      return c.text("error", 500);
    });
    const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    const response = await login(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, "/api/v1/auth/login");
    expect(response.status).toBe(500);
    expect((errors[0] as TypeError).message).toContain("got a request, so the function itself was mounted without being called");
  });
});

describe("Hono: what a mount under a prefix is told", () => {
  /** The base URL of a server for `app`, by @hono/node-server as an app would run it. */
  async function served(app: Hono): Promise<string> {
    const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** The status of one login request to `path` and the lines written, with authApp mounted under `mount` by `app.route`. */
  async function answerFor(mount: string, path: string, http?: { basePath: string }) {
    const { auth } = makeTestAuth(http ? { http } : {});
    const app = new Hono();
    app.route(mount, authApp(auth));
    const base = await served(app);
    const written = captureStderr();
    const { status } = await login(base, path);
    return { status, written };
  }

  it("app.route under a prefix matches from the root: a request under the prefix is told once which basePath to set", async () => {
    const { auth } = makeTestAuth();
    const app = new Hono();
    app.route("/svc", authApp(auth));
    const base = await served(app);
    const written = captureStderr();
    expect((await login(base, "/svc/api/v1/auth/login")).status).toBe(404);
    expect((await login(base, "/svc/api/v1/auth/logout")).status).toBe(404);
    expect(written).toEqual([
      '[portcullis] authApp(auth) is mounted under "/svc" and matches the whole path the client sent, "/svc/api/v1/auth/login", so its routes are at "/api/v1/auth/…" from the root, never below the mount. Set http.basePath to "/svc/api/v1", or mount it at the root with app.route("/", authApp(auth)).\n',
    ]);
  });

  it("says nothing at the root, when basePath names the whole prefix (and then serves), or for paths that name no route", async () => {
    expect(await answerFor("/", "/api/v1/auth/login")).toEqual({ status: 400, written: [] });
    expect(await answerFor("/svc", "/svc/api/v1/auth/login", { basePath: "/svc/api/v1" })).toEqual({ status: 400, written: [] });
    expect(await answerFor("/svc", "/svc/api/v1/auth/nothing-here")).toEqual({ status: 404, written: [] });
    expect(await answerFor("/svc", "/svc/elsewhere")).toEqual({ status: 404, written: [] });
  });
});
