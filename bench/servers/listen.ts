import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { Express } from "express";
import type { Hono } from "hono";
import { username } from "../common.js";

/** The body of every protected route: the same small JSON. */
export const ok = { ok: true };

/** Serves an Express app on a random port of 127.0.0.1 and returns the port. */
export function listenExpress(app: Express): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = app.listen(0, "127.0.0.1", (error?: Error) =>
      error ? reject(error) : resolve((server.address() as AddressInfo).port),
    );
  });
}

/** Serves a Hono app through `@hono/node-server` on a random port of 127.0.0.1 and returns the port. */
export function listenHono(app: Hono): Promise<number> {
  return new Promise((resolve) => {
    serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => resolve(info.port));
  });
}

/** An answer shaped like Portcullis' token answer and about its size, for the bare routes. */
export function tokenShapedAnswer(): unknown {
  return {
    code: 0,
    message: "OK",
    data: {
      accessToken: "x".repeat(420),
      refreshToken: randomBytes(32).toString("base64url"),
      tokenType: "Bearer",
      expiresIn: 900,
      user: { id: "0".repeat(26), username, roles: ["user"], totpEnabled: false },
    },
  };
}

/** The PHC prefix that names a hash's algorithm and cost: `$argon2id$v=19$m=19456,t=2,p=1`. */
export function hashParameters(phc: string): string {
  return phc.split("$").slice(0, 4).join("$");
}
