// The demo on embedded PGlite, as `pnpm demo` runs it: what was stored survives a restart.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { login } from "@portcullis/core";
import { pgliteStorage } from "@portcullis/kysely";
import { expect, it } from "vitest";
import { createDemoApp, randomSecret } from "./app.js";

it("a restart on the same data directory keeps the demo user (with the new demo password) and what it stored", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), "portcullis-demo-"));
  const secrets = { signingSecret: randomSecret(), encryptionKey: randomSecret() };
  try {
    const firstStorage = await pgliteStorage({ dataDir });
    const first = await createDemoApp({ ...secrets, storage: firstStorage, demoPassword: "first demo password" });
    await first.auth.storage.settings.set("demo.kept", "across restarts", 1);
    await firstStorage.close();

    const secondStorage = await pgliteStorage({ dataDir });
    const second = await createDemoApp({ ...secrets, storage: secondStorage, demoPassword: "second demo password" });
    expect(second.demoUser.id).toBe(first.demoUser.id);
    expect(await second.auth.storage.settings.get("demo.kept")).toBe("across restarts");
    expect((await login(second.auth, { username: "demo", password: "second demo password" })).status).toBe("authenticated");
    await expect(login(second.auth, { username: "demo", password: "first demo password" })).rejects.toMatchObject({
      code: 40100,
    });
    await secondStorage.close();
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
