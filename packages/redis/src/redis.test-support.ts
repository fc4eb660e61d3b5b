// What the Redis tests share: where the machine's Redis is, whether it answers, a key prefix of
// the run's own, and a second process that consumes challenges at the same moment as the test.
import { type ChildProcess, fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { createClient } from "redis";

/** The machine's single Redis server: `REDIS_URL`, or 127.0.0.1:6379. */
export const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** Why no Redis answers at `url`, or null when one does. */
export async function redisMissing(url = redisUrl): Promise<string | null> {
  const probe = createClient({ url, socket: { connectTimeout: 1000, reconnectStrategy: false } });
  probe.on("error", () => {});
  try {
    await probe.connect();
    await probe.ping();
    return null;
  } catch (error) {
    return `no Redis answers at ${url} (${error instanceof Error ? error.message : String(error)}); set REDIS_URL to use another`;
  } finally {
    if (probe.isOpen) probe.destroy();
  }
}

/** A key prefix no other run uses: the tests never need an empty Redis. */
export const uniquePrefix = (name: string) => `portcullis-test-${name}-${randomBytes(6).toString("hex")}`;

/** Deletes every key under `prefix` on a single server: a run cleans up after itself. */
export async function deleteKeys(
  client: {
    scanIterator(options: { MATCH: string; COUNT: number }): AsyncIterable<string[]>;
    del(keys: string[]): Promise<number>;
  },
  prefix: string,
): Promise<number> {
  let deleted = 0;
  for await (const keys of client.scanIterator({ MATCH: `${prefix}:*`, COUNT: 1000 })) {
    if (keys.length > 0) deleted += await client.del(keys);
  }
  return deleted;
}

/** Where the consumer process connects: one server's URL, or a cluster's root nodes. */
export type Target = { url: string } | { rootNodes: string[] };

/** The messages between a test and its consumer process. */
export type ConsumerMessage =
  | { type: "start"; target: Target; prefix: string }
  | { type: "ready" }
  | { type: "consume"; id: string; kind: string; now: number; times: number; at: number }
  | { type: "consumed"; winners: number; unavailable: number; failures: string[] }
  | { type: "failed"; message: string };

/** A second Node process holding a client and the Redis stores of its own, on the same prefix. */
export interface ConsumerProcess {
  /** At wall-clock time `at`, runs `times` concurrent `challenges.consume` calls; how many won, and how many answered 50300. */
  consume(
    request: Omit<Extract<ConsumerMessage, { type: "consume" }>, "type">,
  ): Promise<{ winners: number; unavailable: number }>;
  close(): Promise<void>;
}

const repositoryRoot = fileURLToPath(new URL("../../../", import.meta.url));
const program = fileURLToPath(new URL("./consumer-process.test-support.ts", import.meta.url));

function next(child: ChildProcess, type: ConsumerMessage["type"]): Promise<ConsumerMessage> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: ConsumerMessage) => {
      if (message.type !== type && message.type !== "failed") return;
      child.off("message", onMessage);
      child.off("exit", onExit);
      if (message.type === "failed") reject(new Error(`consumer process: ${message.message}`));
      else resolve(message);
    };
    const onExit = (code: number | null) => {
      child.off("message", onMessage);
      reject(new Error(`consumer process exited (${code}) before "${type}"`));
    };
    child.on("message", onMessage);
    child.once("exit", onExit);
  });
}

/** Forks the consumer process with `node --import tsx` (as test/storage/service-processes.ts does) and waits until it is connected. */
export async function startConsumerProcess(target: Target, prefix: string): Promise<ConsumerProcess> {
  const child = fork(program, [], {
    cwd: repositoryRoot,
    execArgv: ["--import", "tsx"],
    env: { ...process.env, TSX_TSCONFIG_PATH: `${repositoryRoot}tsconfig.json` },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const ready = next(child, "ready");
  child.send({ type: "start", target, prefix } satisfies ConsumerMessage);
  try {
    await ready;
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  return {
    async consume(request) {
      const answer = next(child, "consumed");
      child.send({ type: "consume", ...request } satisfies ConsumerMessage);
      const result = (await answer) as Extract<ConsumerMessage, { type: "consumed" }>;
      if (result.failures.length > 0) throw new Error(`consumer process: ${result.failures.join("; ")}`);
      return { winners: result.winners, unavailable: result.unavailable };
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
        child.once("exit", () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill("SIGTERM");
      }),
  };
}

/** Waits until wall-clock time `at`, so that two processes start their calls at the same moment. */
export const until = (at: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));

/** A connected client of the single server at `url`, for code outside this package (which cannot import `redis` itself). */
export async function connectRedis(url = redisUrl) {
  const client = createClient({ url });
  client.on("error", (error: Error) => console.error(`redis error: ${error.message}`));
  await client.connect();
  return client;
}
