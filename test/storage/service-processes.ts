// Starting and stopping service processes (service-process.ts) from a test: each a Node process
// of its own, running the TypeScript sources through tsx (the repository's runner for
// TypeScript outside vitest), so the tests need no build.
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { AuthConfig } from "@portcullis/core";
import type { RunningServer } from "../http/servers.js";

/** What a service process is told to serve. Everything but the port is the same for every replica. */
export interface ServiceConfig {
  /** The PostgreSQL URL, its `options` naming the scratch schema. */
  databaseUrl: string;
  prefix: string;
  issuer: string;
  audience: string;
  secrets: { signing: string; encryption: string };
  passkeys: AuthConfig["passkeys"];
  oauth: AuthConfig["oauth"];
  throttle: AuthConfig["throttle"];
  /** How long a process may trust a checked token state (TV-2); 0, every request reads storage, when left out. */
  tokenStateCacheSeconds?: number;
  /** When given, challenges and counters live in this Redis under this key prefix (`@portcullis/redis`), the rest in PostgreSQL. */
  redis?: { url: string; prefix: string };
}

/** The messages between a test and a service process. */
export type ServiceMessage =
  | { type: "ready" }
  | { type: "start"; config: ServiceConfig }
  | { type: "listening"; port: number }
  | { type: "failed"; message: string }
  | { type: "stop" };

/** A service process listening on loopback: a {@link RunningServer} for `call` and `post`. */
export interface ServiceProcess extends RunningServer {
  pid: number;
  /** What the process wrote to stderr so far (pool and internal errors), for failure messages. */
  stderr(): string;
}

const repositoryRoot = fileURLToPath(new URL("../../", import.meta.url));
const program = fileURLToPath(new URL("./service-process.ts", import.meta.url));

function stopped(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
}

/**
 * Forks a service process with `node --import tsx` in the repository root (so tsconfig.json's
 * paths resolve the `@portcullis/*` sources), sends it `config` and waits until it listens, says
 * it failed, or exits: events, never a clock, so a busy machine that compiles slowly only waits
 * longer (the calling hook's timeout is the guard against a hang). `close` asks it to stop, and
 * kills it if it has not exited within 5 s.
 */
export async function startServiceProcess(config: ServiceConfig): Promise<ServiceProcess> {
  const child = fork(program, [], {
    cwd: repositoryRoot,
    execArgv: ["--import", "tsx"],
    env: { ...process.env, TSX_TSCONFIG_PATH: `${repositoryRoot}tsconfig.json` },
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  child.stdout?.resume();
  const close = async () => {
    if (child.connected) child.send({ type: "stop" } satisfies ServiceMessage);
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await stopped(child);
    clearTimeout(timer);
  };
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.on("message", (message: ServiceMessage) => {
        if (message.type === "ready") child.send({ type: "start", config } satisfies ServiceMessage);
        else if (message.type === "listening") resolve(message.port);
        else if (message.type === "failed") reject(new Error(`the service process failed to start: ${message.message}`));
      });
      child.once("exit", (code, signal) => {
        reject(new Error(`the service process exited (${code ?? signal}) before listening: ${stderr}`));
      });
    });
    return {
      pid: child.pid as number,
      baseUrl: `http://127.0.0.1:${port}`,
      host: "127.0.0.1",
      port,
      stderr: () => stderr,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
