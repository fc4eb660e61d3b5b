import { ensureUser } from "@portcullis/core";
import { serveOnNode } from "./hono-node-server.js";
import { createApp } from "./hono-quick-start.js";

const quickStart = createApp();
await ensureUser(quickStart.auth, { username: "alice", password: process.env.ALICE_PASSWORD ?? "", roles: ["admin"] });
serveOnNode(quickStart).listen(3000, "127.0.0.1");
