// The demo as `pnpm demo` starts it, in its own process: Ctrl-C stops it cleanly.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";

const exampleDirectory = fileURLToPath(new URL("../", import.meta.url));
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "portcullis-demo-stop-"));
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

/** Starts `src/server.ts` as the package's start script does, on a free port, and collects what it prints. */
function startDemo(): { child: ChildProcess; stdout: () => string; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ["--import", "tsx", "src/server.ts"], {
    cwd: exampleDirectory,
    env: { ...process.env, PORT: "0", PORTCULLIS_DATA_DIR: dataDir, TSX_TSCONFIG_PATH: "../../tsconfig.json" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Resolves once `read()` matches `pattern`; fails with what was printed when the process ends first. */
async function printed(read: () => string, pattern: RegExp, exited: Promise<number | null>): Promise<RegExpMatchArray> {
  for (;;) {
    const match = pattern.exec(read());
    if (match) return match;
    const ended = await Promise.race([exited.then(() => true), new Promise((resolve) => setTimeout(resolve, 100, false))]);
    if (ended) throw new Error(`the demo exited before printing ${pattern}; it printed: ${read()}`);
  }
}

// SIGTERM takes the same path (stopOnSignals); one start is enough for the test's time.
it("prints the outbox's address, which shows the mail sent; Ctrl-C (SIGINT) closes the server, the provider, the mail server and PGlite, prints one line and exits 0", async () => {
  for (const signal of ["SIGINT"] as const) {
    const demo = startDemo();
    const [, origin] = await printed(demo.stdout, /listening on (http:\/\/localhost:\d+)\//, demo.exited);
    const page = await fetch(`${(origin as string).replace("localhost", "127.0.0.1")}/`);
    expect(page.status).toBe(200);
    // What it prints at startup ends within moments of listening; wait until it has.
    let before = "";
    while (before !== demo.stdout()) {
      before = demo.stdout();
      await new Promise((resolve) => setTimeout(resolve, 300));
    }

    // The outbox: printed beside the rest, and a reset link sent through the demo's SMTP server lands there.
    const [, outbox] = await printed(demo.stdout, /^Outbox: (http:\/\/localhost:\d+\/outbox) /m, demo.exited);
    expect(demo.stdout()).toMatch(/^Email: {5}demo@example\.test \(verified/m);
    const local = (origin as string).replace("localhost", "127.0.0.1");
    const forgot = await fetch(`${local}/api/v1/auth/password/forgot`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "demo" }),
    });
    expect(forgot.status).toBe(200);
    let listed = "";
    for (let attempt = 0; attempt < 50 && !listed.includes("#token="); attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      listed = await (await fetch((outbox as string).replace("localhost", "127.0.0.1"))).text();
    }
    expect(listed).toContain(`${origin}/reset-password#token=`);
    expect(listed).toContain("demo@example.test");

    const stderrBefore = demo.stderr();

    demo.child.kill(signal);
    expect(await demo.exited).toBe(0);
    expect(demo.stdout().slice(before.length)).toBe(`Portcullis demo stopped (${signal}).\n`);
    expect(demo.stderr().slice(stderrBefore.length)).toBe("");
  }
});
