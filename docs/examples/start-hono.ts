import { serve } from "@hono/node-server";
import { createUser } from "@portcullis/core";
import { createApp } from "./hono-quick-start.js";

const { app, auth } = createApp();
await createUser(auth, { username: "alice", password: process.env.ALICE_PASSWORD ?? "", roles: ["admin"] });
serve({ fetch: app.fetch, port: 3000, hostname: "127.0.0.1" });
