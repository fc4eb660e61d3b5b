// Runs the OpenAPI examples of docs/openapi.md.
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AuthConfig, createAuth, createUser, login, memoryStorage, openApiDocument } from "@portcullis/core";
import { authRouter } from "@portcullis/express";
import { validate } from "@readme/openapi-parser";
import express from "express";
import type { OpenAPIV3_1 } from "openapi-types";
import { afterEach, describe, expect, it } from "vitest";
import { serveOpenApiToAdmins, writeOpenApiFile } from "./openapi.js";

const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

function makeAuth(http: AuthConfig["http"] = {}) {
  return createAuth({
    storage: memoryStorage(),
    issuer: "https://api.example.com",
    audience: "example-api",
    secrets: { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("hex") },
    http,
  });
}

async function listen(app: express.Express): Promise<string> {
  const server = app.listen(0, "127.0.0.1");
  servers.push(server);
  await new Promise((resolve) => server.once("listening", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("docs/examples/openapi.ts", () => {
  it("writeOpenApiFile writes a valid OpenAPI 3.1 document with the given server", async () => {
    const auth = makeAuth();
    const folder = await mkdtemp(join(tmpdir(), "portcullis-openapi-"));
    try {
      await writeOpenApiFile(auth, join(folder, "openapi.json"), "https://api.example.com");
      const written = JSON.parse(await readFile(join(folder, "openapi.json"), "utf8"));
      expect(written).toEqual(openApiDocument(auth, { servers: [{ url: "https://api.example.com" }] }));
      expect((await validate(written as OpenAPIV3_1.Document, { resolve: { external: false } })).valid).toBe(true);
    } finally {
      await rm(folder, { recursive: true });
    }
  });

  it("serveOpenApiToAdmins serves the document to an administrator only", async () => {
    const auth = makeAuth();
    const password = randomBytes(18).toString("base64url");
    await createUser(auth, { username: "root", password, roles: ["admin"] });
    const signedIn = await login(auth, { username: "root", password });
    if (signedIn.status !== "authenticated") throw new Error("expected tokens");
    const app = express();
    app.use(authRouter(auth));
    serveOpenApiToAdmins(app, auth);
    const base = await listen(app);
    expect((await fetch(`${base}/internal/openapi.json`)).status).toBe(401);
    const answer = await fetch(`${base}/internal/openapi.json`, {
      headers: { authorization: `Bearer ${signedIn.tokens.accessToken}` },
    });
    expect(await answer.json()).toEqual(openApiDocument(auth));
  });

  it("http.openApi serves it at <basePath>/auth/openapi.json; without it that path is 40400", async () => {
    for (const openApi of [true, false]) {
      const auth = makeAuth({ openApi, basePath: "/v2" });
      const app = express();
      app.use(authRouter(auth));
      const answer = await fetch(`${await listen(app)}/v2/auth/openapi.json`);
      expect(answer.status).toBe(openApi ? 200 : 404);
      const body = (await answer.json()) as { paths?: object; code?: number };
      if (openApi) expect(Object.keys(body.paths ?? {})).toContain("/v2/auth/login");
      else expect(body.code).toBe(40400);
    }
  });

  it("docs/openapi.md shows the example exactly as it is", async () => {
    const read = (path: string) => readFile(new URL(path, import.meta.url), "utf8");
    expect(await read("../openapi.md")).toContain(`\`\`\`ts\n${await read("./openapi.ts")}\`\`\``);
  });
});
