// The child processes of a run: servers, load, pgbench, cold imports; each pinned to its core.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { type BenchSecrets, type ServerMode, type ServerOptions, type ServerReady, readyMarker } from "./common.js";
import type { LoadResult, LoadSpec } from "./load.js";

/** The folder of the bench package: the working directory of every child process. */
export const benchDirectory = fileURLToPath(new URL(".", import.meta.url));

/** How servers and load are kept to their cores, and what the output says about it. */
export interface Pinning {
  /** The prefix that runs a command on the server core (cold imports). */
  server: string[];
  /** The prefix that runs a command on the load core (autocannon, pgbench). */
  load: string[];
  /** Moves a started server, every thread of it, to the server core. */
  pinServer(pid: number): void;
  summary: string;
}

/**
 * Servers on core 0 and load on core 1 with `taskset`, when the machine has two cores and
 * `taskset` works. Servers start on any core and are moved to core 0 once they listen, so that
 * their start-up (module loading, argon2id for the sign-ins that mint tokens) runs in parallel.
 */
export function choosePinning(): Pinning {
  const cores = availableParallelism();
  const unpinned = (summary: string): Pinning => ({ server: [], load: [], pinServer: () => {}, summary });
  if (cores < 2) return unpinned(`not pinned: this machine has ${cores} core`);
  const probe = spawnSync("taskset", ["-c", "1", "true"]);
  if (probe.error || probe.status !== 0) return unpinned("not pinned: taskset -c 1 does not work here");
  return {
    server: ["taskset", "-c", "0"],
    load: ["taskset", "-c", "1"],
    pinServer(pid) {
      const moved = spawnSync("taskset", ["-a", "-p", "-c", "0", String(pid)]);
      if (moved.status !== 0) throw new Error(`taskset could not pin process ${pid}: ${moved.stderr}`);
    },
    summary: "pinned: servers and cold imports on core 0 (taskset -c 0), load generators on core 1 (taskset -c 1)",
  };
}

/** Spawns `command` behind a pinning prefix, in the bench folder; stdout and stderr piped. */
function spawnChild(prefix: string[], command: string[], env?: NodeJS.ProcessEnv) {
  const [program, ...args] = [...prefix, ...command] as [string, ...string[]];
  return spawn(program, args, { cwd: benchDirectory, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
}

/** Runs a command to its end and returns its stdout; rejects with its stderr when it fails. */
export function runToEnd(prefix: string[], command: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawnChild(prefix, command, env);
    child.stdin.end();
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve(Buffer.concat(stdout).toString());
      else
        reject(new Error(`${command.join(" ").slice(0, 200)} exited with ${code}: ${Buffer.concat(stderr).toString().trim()}`));
    });
  });
}

/** A server process that printed its ready line. */
export interface RunningServer {
  mode: ServerMode;
  ready: ServerReady;
  /** The CPU seconds (user and system, every thread) the server process has used so far, from `/proc`; null where there is none. */
  cpuSeconds(): number | null;
  url(path: string): string;
  stop(): Promise<void>;
}

/**
 * Starts `server.ts <mode>`, waits for its ready line and pins it; its other output goes to
 * stderr, marked with the mode.
 */
export function startServer(
  pinning: Pinning,
  secrets: BenchSecrets,
  mode: ServerMode,
  options: ServerOptions = {},
): Promise<RunningServer> {
  const child = spawnChild([], [process.execPath, "--import", "tsx", "server.ts", mode, JSON.stringify(options)], {
    ...secrets,
  });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  child.stderr.on("data", (chunk: Buffer) => process.stderr.write(`[${mode}] ${chunk}`));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`server ${mode} was not ready within 180 s`));
    }, 180_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server ${mode} exited with ${code} before it was ready`));
    });
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (!line.startsWith(readyMarker)) {
        process.stderr.write(`[${mode}] ${line}\n`);
        return;
      }
      clearTimeout(timer);
      try {
        pinning.pinServer(child.pid as number);
      } catch (error) {
        child.kill();
        reject(error);
        return;
      }
      const ready = JSON.parse(line.slice(readyMarker.length)) as ServerReady;
      resolve({
        mode,
        ready,
        url: (path) => `http://127.0.0.1:${ready.port}${path}`,
        cpuSeconds: () => processCpuSeconds(child.pid as number),
        async stop() {
          if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
          await exited;
        },
      });
    });
  });
}

/** Clock ticks a second of `/proc/<pid>/stat`'s times (`getconf CLK_TCK`), read once; 100 on Linux. */
let clockTicks: number | undefined;

/**
 * The CPU seconds a process has used, user and system time of all its threads (fields 14 and 15
 * of `/proc/<pid>/stat`, after the command name in parentheses); null without `/proc`.
 */
export function processCpuSeconds(pid: number): number | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  clockTicks ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / clockTicks;
}

/** A running `load.ts` process, which measures one spec at a time. */
interface LoadProcess {
  measure(spec: LoadSpec): Promise<LoadResult>;
  stop(): void;
}

function startLoadProcess(pinning: Pinning): LoadProcess {
  const child = spawnChild(pinning.load, [process.execPath, "--import", "tsx", "load.ts"]);
  child.stderr.pipe(process.stderr);
  let pending: { resolve(result: LoadResult): void; reject(error: Error): void } | undefined;
  child.on("exit", (code) => pending?.reject(new Error(`the load process exited with ${code}`)));
  createInterface({ input: child.stdout }).on("line", (line) => {
    const answer = JSON.parse(line) as { result?: LoadResult; error?: string };
    if (answer.result) pending?.resolve(answer.result);
    else pending?.reject(new Error(`the load process failed: ${answer.error}`));
    pending = undefined;
  });
  return {
    measure(spec) {
      return new Promise((resolve, reject) => {
        pending = { resolve, reject };
        child.stdin.write(`${JSON.stringify(spec)}\n`);
      });
    },
    stop: () => child.stdin.end(),
  };
}

/** Load processes between two measurements: started once, so a run pays no process start-up. */
const idleLoadProcesses: LoadProcess[] = [];

/**
 * Runs one measurement in a load process (`load.ts`) pinned to the load core, started when
 * none is idle (two measurements at once get two processes), and returns what it measured.
 */
export async function runLoad(pinning: Pinning, spec: LoadSpec): Promise<LoadResult> {
  const load = idleLoadProcesses.pop() ?? startLoadProcess(pinning);
  const result = await load.measure(spec);
  idleLoadProcesses.push(load);
  return result;
}

/** Ends the idle load processes. */
export function stopLoadProcesses(): void {
  for (const load of idleLoadProcesses.splice(0)) load.stop();
}
