// The program of one process that holds a PGlite data directory, for pglite-lock.test.ts: run
// with `node --import tsx` by that test, never imported. It opens the directory given as its
// argument with pgliteStorage and says so over IPC (or says why it could not); then it stores and
// reads settings when asked, and closes when told to.
import type { KyselyStorage } from "./kysely-storage.js";
import { pgliteStorage } from "./pglite.js";

/** The messages between the test and a holder process. */
export type HolderMessage =
  | { type: "opened" }
  | { type: "failed"; message: string }
  | { type: "set"; key: string; value: string }
  | { type: "get"; key: string }
  | { type: "value"; value: unknown }
  | { type: "close" }
  | { type: "closed" };

const send = (message: HolderMessage) => process.send?.(message);
const dataDir = process.argv[2] as string;

let storage: KyselyStorage | undefined;
try {
  storage = await pgliteStorage({ dataDir });
  send({ type: "opened" });
} catch (error) {
  send({ type: "failed", message: error instanceof Error ? error.message : String(error) });
  process.exit(1);
}
const open = storage as KyselyStorage;

process.on("message", async (message: HolderMessage) => {
  if (message.type === "set") {
    await open.settings.set(message.key, message.value, Date.now());
    send({ type: "value", value: message.value });
  } else if (message.type === "get") {
    send({ type: "value", value: (await open.settings.get(message.key)) ?? null });
  } else if (message.type === "close") {
    await open.close();
    send({ type: "closed" });
    process.exit(0);
  }
});
process.on("disconnect", () => process.exit(0));
