// ensureUser on SQL storage (issue 38, item 1): a seed run at every start creates its user once, on
// storage that keeps it across restarts and that several processes share, with no error for the race.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Auth, type AuthEvent, type CreateUserInput, type Storage, createAuth, ensureUser, login } from "@portcullis/core";
import { afterAll, expect, it } from "vitest";
import { describeNeedingService } from "../../../test/fixtures/required-service.js";
import { everyDatabase, serverMissing } from "./databases.test-support.js";
import type { KyselyStorage } from "./kysely-storage.js";
import { migrate } from "./migrate.js";
import { pgliteStorage } from "./pglite.js";

const seed = { username: "alice", password: "correct horse battery staple", roles: ["admin"] } satisfies CreateUserInput;
const secrets = { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("base64url") };

/** An auth instance on `storage`, as one process of a service makes it, and the events it emitted. */
function authOn(storage: Storage): { auth: Auth; events: AuthEvent[] } {
  const events: AuthEvent[] = [];
  const auth = createAuth({ storage, issuer: "https://api.example.com", audience: "example-api", secrets });
  auth.events.on("*", (event) => {
    events.push(event);
  });
  return { auth, events };
}

it("a PGlite data directory reopened (a restart): the second start's ensureUser finds alice as she was, and she signs in", async () => {
  const directory = await mkdtemp(join(tmpdir(), "portcullis-ensure-user-"));
  try {
    const first = await pgliteStorage({ dataDir: directory });
    const created = await ensureUser(authOn(first).auth, seed);
    await first.close();
    expect(created).toMatchObject({ created: true, differs: [] });

    const second = await pgliteStorage({ dataDir: directory });
    try {
      const { auth, events } = authOn(second);
      expect(await ensureUser(auth, seed)).toEqual({ created: false, user: created.user, differs: [] });
      expect(await ensureUser(auth, { ...seed, roles: ["admin", "ops"] })).toMatchObject({ created: false, differs: ["roles"] });
      expect((await login(auth, seed)).status).toBe("authenticated");
      expect(events.filter((event) => event.type === "user.created")).toEqual([]);
    } finally {
      await second.close();
    }
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
});

for (const database of everyDatabase) {
  const missing = database.url === null ? null : await serverMissing(database.url);
  describeNeedingService(`packages/kysely/src/ensure-user.test.ts (${database.name})`, missing)(
    `ensureUser on ${database.name}`,
    () => {
      const dropped: Array<() => Promise<void>> = [];
      afterAll(async () => {
        for (const drop of dropped) await drop();
      });
      const open = async (): Promise<KyselyStorage> => {
        const opened = await database.open();
        dropped.push(opened.drop);
        await migrate(opened.storage);
        return opened.storage;
      };

      it("20 calls at once from two instances (two processes starting together) end with one user, one created: true and no error", async () => {
        const storage = await open();
        const processes = [authOn(storage), authOn(storage)];
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, index) => ensureUser((processes[index % 2] as { auth: Auth }).auth, seed)),
        );
        expect(results.filter((result) => result.created)).toHaveLength(1);
        expect(new Set(results.map((result) => result.user.id)).size).toBe(1);
        expect(results.every((result) => result.differs.length === 0)).toBe(true);
        expect(processes.flatMap(({ events }) => events).filter((event) => event.type === "user.created")).toHaveLength(1);
        expect((await storage.users.list({ limit: 10 })).map((user) => user.username)).toEqual(["alice"]);
      });
    },
  );
}
