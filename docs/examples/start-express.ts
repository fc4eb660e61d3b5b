import { createUser } from "@portcullis/core";
import { createApp } from "./express-quick-start.js";

const { app, auth } = createApp();
await createUser(auth, { username: "alice", password: process.env.ALICE_PASSWORD ?? "", roles: ["admin"] });
app.listen(3000, "127.0.0.1");
