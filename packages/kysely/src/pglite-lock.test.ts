// One PGlite data directory, one process (issue 20 item 6): real processes (child_process, the
// program in pglite-holder.test-support.ts) open one directory; the second is refused with an
// error that names the directory and the holder, the first keeps its data, and a lock whose
// holder is gone is taken over.
import { type ChildProcess, fork } from "node:child_process";
import { utimesSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { pgliteStorage } from "./pglite.js";
import type { HolderMessage } from "./pglite-holder.test-support.js";
import { lockDataDirectory, lockFileName, lockStaleAfterMs } from "./pglite-lock.js";

const repositoryRoot = fileURLToPath(new URL("../../../", import.meta.url));
const program = fileURLToPath(new URL("./pglite-holder.test-support.ts", import.meta.url));

/** A process that opened (or failed to open) a data directory. */
interface Holder {
  child: ChildProcess;
  /** Sends a message and waits for the holder's next one. */
  ask(message: HolderMessage): Promise<HolderMessage>;
  /** Asks it to close the storage and waits for it to exit. */
  close(): Promise<void>;
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });

/** Forks a holder on `dataDir` and resolves with its first message: opened, or failed and why. */
async function startHolder(dataDir: string): Promise<{ holder: Holder; first: HolderMessage }> {
  const child = fork(program, [dataDir], {
    cwd: repositoryRoot,
    execArgv: ["--import", "tsx"],
    env: { ...process.env, TSX_TSCONFIG_PATH: `${repositoryRoot}tsconfig.json` },
    stdio: ["ignore", "ignore", "pipe", "ipc"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const next = () =>
    new Promise<HolderMessage>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the holder exited (${code}) without a word: ${stderr}`));
      child.once("exit", onExit);
      child.once("message", (message: HolderMessage) => {
        child.off("exit", onExit);
        resolve(message);
      });
    });
  const holder: Holder = {
    child,
    ask(message) {
      const answer = next();
      child.send(message);
      return answer;
    },
    async close() {
      if (child.exitCode === null && child.signalCode === null) await holder.ask({ type: "close" });
      await exited(child);
    },
  };
  return { holder, first: await next() };
}

let dataDir: string;
const holders: Holder[] = [];
beforeEach(async () => {
  dataDir = join(await mkdtemp(join(tmpdir(), "portcullis-pglite-lock-")), "data");
});
afterEach(async () => {
  for (const holder of holders.splice(0)) {
    holder.child.kill("SIGKILL");
    await exited(holder.child);
  }
  await rm(join(dataDir, ".."), { recursive: true, force: true });
});

async function opened(dir = dataDir): Promise<Holder> {
  const { holder, first } = await startHolder(dir);
  holders.push(holder);
  expect(first).toEqual({ type: "opened" });
  return holder;
}

async function refused(dir = dataDir): Promise<string> {
  const { holder, first } = await startHolder(dir);
  holders.push(holder);
  expect(first.type, JSON.stringify(first)).toBe("failed");
  return (first as { message: string }).message;
}

describe("issue 20 item 6: one process per PGlite data directory", () => {
  it("ST-1: a second process opening a directory another process has open is refused, naming the directory, that another process has it open, and its pid; the first keeps what it wrote, and once it closed the directory opens again", async () => {
    const first = await opened();
    await first.ask({ type: "set", key: "written-by", value: "the first" });
    const message = await refused();
    expect(message).toContain(`the PGlite data directory ${dataDir} is open in process ${first.child.pid} on `);
    expect(message).toContain("One process opens a data directory at a time");
    expect(await first.ask({ type: "get", key: "written-by" })).toEqual({ type: "value", value: "the first" });
    await first.close();
    const second = await opened();
    expect(await second.ask({ type: "get", key: "written-by" })).toEqual({ type: "value", value: "the first" });
    await second.close();
  });

  it("ST-1: the lock of a process that was killed (no close, no exit handler) is taken over at once by the next process on the same machine", async () => {
    const first = await opened();
    await first.ask({ type: "set", key: "written-by", value: "the killed one" });
    first.child.kill("SIGKILL");
    await exited(first.child);
    expect(JSON.parse(await readFile(join(dataDir, lockFileName), "utf8")).pid).toBe(first.child.pid);
    const next = await opened();
    expect(await next.ask({ type: "get", key: "written-by" })).toEqual({ type: "value", value: "the killed one" });
    await next.close();
  });

  it("ST-1: a lock of another container or host is honoured while it is refreshed, and taken over once it has not been for the stale time", async () => {
    await mkdir(dataDir);
    const lock = join(dataDir, lockFileName);
    const elsewhere = {
      pid: 1,
      hostname: "elsewhere",
      bootId: "another-boot",
      pidNamespace: "pid:[1]",
      nonce: "n",
      startedAt: 0,
    };
    await writeFile(lock, JSON.stringify(elsewhere));
    expect(await refused()).toContain(`is open in process 1 on elsewhere (its lock ${lock} refreshed `);
    const staleSince = new Date(Date.now() - lockStaleAfterMs - 5000);
    await utimes(lock, staleSince, staleSince);
    const next = await opened();
    await next.close();
  });

  it("ST-1: a second storage on an open directory in the same process is refused too, and the directory opens again once the first is closed", async () => {
    const first = await pgliteStorage({ dataDir });
    try {
      await expect(pgliteStorage({ dataDir })).rejects.toThrow(`is open in process ${process.pid} (this one)`);
    } finally {
      await first.close();
    }
    const again = await pgliteStorage({ dataDir });
    await again.close();
  });

  it("ST-1: a storage closed before its first query (migrate: false) frees the directory too", async () => {
    const unused = await pgliteStorage({ dataDir, migrate: false });
    await unused.close();
    await unused.close();
    const again = await pgliteStorage({ dataDir });
    await again.close();
  });

  it("ST-1: a lock this process holds is never stale, however late its refresh ran on a busy machine", () => {
    const held = lockDataDirectory(dataDir);
    try {
      const late = new Date(Date.now() - 2 * lockStaleAfterMs);
      utimesSync(join(dataDir, lockFileName), late, late);
      expect(() => lockDataDirectory(dataDir)).toThrow(`is open in process ${process.pid} (this one)`);
    } finally {
      held.release();
    }
    lockDataDirectory(dataDir).release();
  });
});
