// Run by scripts/check-packages.sh inside an empty npm project in which the packed tarballs are
// installed: imports every public entry point the way a user would and signs a user in, in-process
// and through @portcullis/client against the packed Express adapter on loopback; renders
// @portcullis/react's hooks with react-dom/server.
import { randomBytes } from "node:crypto";
import express from "express";

const expected = {
  "@portcullis/core": [
    "createAuth",
    "memoryStorage",
    "createUser",
    "login",
    "verifyTotp",
    "useRecoveryCode",
    "refresh",
    "logout",
    "verifyAccessToken",
    "AuthError",
  ],
  "@portcullis/core/testing": ["runStorageConformance"],
  "@portcullis/express": ["authRouter", "requireAuth"],
  "@portcullis/hono": ["authApp", "requireAuth"],
  "@portcullis/fastify": ["portcullis", "requireAuth", "default"],
  "@portcullis/ldap": ["ldapDirectory"],
  "@portcullis/kysely": ["kyselyStorage", "pgliteStorage", "connectStorage", "migrate", "checkSchema"],
  "@portcullis/redis": ["redisStores", "isRedisUnreachable"],
  "@portcullis/client": ["createAuthClient", "memoryTokenStore", "webStorageTokenStore", "AuthClientError"],
  "@portcullis/react": ["AuthProvider", "useAuthClient", "useSession", "useSignIn", "usePasskeys", "useSessions", "useStepUp"],
  "@portcullis/testing": [
    "createSoftwareAuthenticator",
    "startLocalProvider",
    "driveAuthorization",
    "totpCode",
    "runStorageConformance",
    "encodeCbor",
  ],
};

const modules = {};
const problems = [];
for (const [specifier, names] of Object.entries(expected)) {
  try {
    modules[specifier] = await import(specifier);
  } catch (error) {
    problems.push(`cannot import ${specifier}: ${error instanceof Error ? error.stack : error}`);
    continue;
  }
  for (const name of names) {
    if (typeof modules[specifier][name] !== "function") {
      problems.push(`${specifier} does not export ${name} (got ${typeof modules[specifier][name]})`);
    }
  }
}
if (problems.length > 0) {
  for (const problem of problems) console.error(`package smoke: ${problem}`);
  process.exit(1);
}

const { createAuth, memoryStorage, createUser, login, verifyAccessToken } = modules["@portcullis/core"];
const { pgliteStorage } = modules["@portcullis/kysely"];
const embedded = await pgliteStorage({ dataDir: "memory://" });
for (const [name, storage] of [
  ["memory", memoryStorage()],
  ["PGlite", embedded],
]) {
  const auth = createAuth({
    storage,
    issuer: "https://api.example.com",
    audience: "example-api",
    secrets: {
      signing: randomBytes(32).toString("base64url"),
      encryption: randomBytes(32).toString("base64url"),
    },
  });
  const password = `smoke-${randomBytes(12).toString("base64url")}`;
  await createUser(auth, { username: "smoke-user", password, roles: ["user"] });
  const result = await login(auth, { username: "smoke-user", password });
  if (result?.status !== "authenticated" || typeof result.tokens?.accessToken !== "string") {
    console.error(`package smoke: login on ${name} storage did not authenticate:`, result);
    process.exit(1);
  }
  await verifyAccessToken(auth, { token: result.tokens.accessToken });
}
await embedded.close();

const { createAuthClient } = modules["@portcullis/client"];
const { authRouter, requireAuth } = modules["@portcullis/express"];
const auth = createAuth({
  storage: memoryStorage(),
  issuer: "https://api.example.com",
  audience: "example-api",
  secrets: { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("base64url") },
});
const password = `smoke-${randomBytes(12).toString("base64url")}`;
await createUser(auth, { username: "client-user", password, roles: ["user"] });
const app = express();
app.use(authRouter(auth));
app.get("/api/v1/things", requireAuth(auth), (req, res) => res.json({ userId: req.auth.userId }));
const server = await new Promise((resolve) => {
  const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
});
try {
  const origin = `http://127.0.0.1:${server.address().port}`;
  const client = createAuthClient({ baseUrl: `${origin}/api/v1` });
  const step = await client.login({ username: "client-user", password });
  const things = await (await client.fetch(`${origin}/api/v1/things`)).json();
  const me = await client.me();
  await client.logout();
  if (step.status !== "authenticated" || things.userId !== me.id || (await client.accessToken()) !== null) {
    console.error("package smoke: the client did not sign in, call the app and sign out:", { step, things, me });
    process.exit(1);
  }
} finally {
  server.close();
}

// The packed Fastify adapter: the plugin's routes and a route behind requireAuth, on loopback.
const { default: Fastify } = await import("fastify");
const { portcullis, requireAuth: requireFastifyAuth } = modules["@portcullis/fastify"];
const fastify = Fastify();
await fastify.register(portcullis, { auth });
fastify.get("/api/v1/things", { preHandler: requireFastifyAuth(auth) }, async (request) => ({ userId: request.auth.userId }));
await fastify.listen({ port: 0, host: "127.0.0.1" });
try {
  const origin = `http://127.0.0.1:${fastify.server.address().port}`;
  const client = createAuthClient({ baseUrl: `${origin}/api/v1` });
  const step = await client.login({ username: "client-user", password });
  const things = await (await client.fetch(`${origin}/api/v1/things`)).json();
  const refused = await fetch(`${origin}/api/v1/things`);
  if (step.status !== "authenticated" || typeof things.userId !== "string" || (await refused.json()).code !== 40101) {
    console.error("package smoke: the client did not sign in through the Fastify plugin:", { step, things });
    process.exit(1);
  }
} finally {
  await fastify.close();
}
// The packed React hooks render on the server, in Node without a DOM: the session reads as loading.
const { createElement } = await import("react");
const { renderToString } = await import("react-dom/server");
const { AuthProvider, useSession } = modules["@portcullis/react"];
const Status = () => createElement("p", null, useSession().status);
const html = renderToString(createElement(AuthProvider, { client: createAuthClient() }, createElement(Status)));
if (html !== "<p>loading</p>") {
  console.error("package smoke: @portcullis/react did not render on the server:", html);
  process.exit(1);
}
console.log("packages ok");
