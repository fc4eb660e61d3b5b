import { ensureUser } from "@portcullis/core";
import { createApp } from "./express-quick-start.js";

const { app, auth, storage } = await createApp("./auth-data");
// The first start creates alice; every later start finds her and leaves her as she is.
await ensureUser(auth, { username: "alice", password: process.env.ALICE_PASSWORD ?? "", roles: ["admin"] });
const server = app.listen(Number(process.env.PORT ?? 3000), "127.0.0.1");
// Ctrl-C or SIGTERM: finish the requests under way, then close the storage (which unlocks ./auth-data).
for (const signal of ["SIGINT", "SIGTERM"]) process.once(signal, () => server.close(() => storage.close()));
