// `pnpm --filter @portcullis/example-react start`: the example on http://localhost:3001 with one
// user, alice, whose password is printed once.
import { randomBytes } from "node:crypto";
import { serve } from "@hono/node-server";
import { createUser } from "@portcullis/core";
import { createExampleApp } from "./app.js";

const port = Number(process.env.PORT ?? 3001);
const origin = `http://localhost:${port}`;
const { app, auth } = createExampleApp({ origin });
const password = randomBytes(12).toString("base64url");
await createUser(auth, { username: "alice", password, roles: ["user"] });
serve({ fetch: app.fetch, port, hostname: "127.0.0.1" }, () => {
  console.log(`Open ${origin}/ and sign in as alice with the password ${password}`);
});
