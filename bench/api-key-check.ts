// Figure 15's in-process part: `verifyApiKey(auth, { key })` against `verifyAccessToken(auth, {
// token })` of the same user, in the bench process, in alternating batches timed in this process's
// CPU time (`process.cpuUsage()`), as figure 14's `org-check.ts` measures: other work on a busy
// machine delays a batch but adds little to its CPU time, and a stretch of it falls on both cases
// of a pair alike.
import { randomBytes } from "node:crypto";
import {
  type Auth,
  type Storage,
  createApiKey,
  createAuth,
  createUser,
  listApiKeys,
  login,
  verifyAccessToken,
  verifyApiKey,
} from "@portcullis/core";
import { audience, issuer, username } from "./common.js";
import type { CheckStorage } from "./org-check.js";

/** The bench user's access token and an API key of theirs, on an auth with API keys on. */
interface SignedInWithKey {
  auth: Auth;
  userId: string;
  token: string;
  key: string;
}

/** An auth with API keys on (the defaults otherwise: no token-state cache, no per-key rate limit), the bench user signed in, and a key made in that session. */
async function signedInWithKey(storage: Storage): Promise<SignedInWithKey> {
  const auth = createAuth({
    storage,
    issuer,
    audience,
    secrets: { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("base64url") },
    apiKeys: { enabled: true },
    sweepInterval: false,
  });
  const password = `bench-${randomBytes(18).toString("base64url")}`;
  const user = await createUser(auth, { username, password, roles: ["user"] });
  const signedIn = await login(auth, { username, password });
  if (signedIn.status !== "authenticated") throw new Error(`login answered ${signedIn.status}`);
  const token = signedIn.tokens.accessToken;
  const sessionId = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8")).sid as string;
  const { key } = await createApiKey(auth, { userId: user.id, sessionId, password, name: "bench", scopes: ["bench:read"] });
  return { auth, userId: user.id, token, key };
}

/** Counts the calls of the store's `recordApiKeyUse`: the writes of `lastUsedAt` (AK-4). */
function countLastUsedWrites(storage: Storage): { readonly count: number } {
  const store = storage.apiKeys;
  if (store === undefined) throw new Error("the storage has no apiKeys store");
  const record = store.recordApiKeyUse.bind(store);
  const counter = { count: 0 };
  store.recordApiKeyUse = (uses, minIntervalMs) => {
    counter.count++;
    return record(uses, minIntervalMs);
  };
  return counter;
}

/** Waits until the key's `lastUsedAt` is stored (its write follows the answer), at most 5 s. */
async function lastUsedStored(auth: Auth, userId: string): Promise<boolean> {
  for (let wait = 0; wait < 100; wait++) {
    if ((await listApiKeys(auth, { userId }))[0]?.lastUsedAt != null) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

/** What one storage's comparison measured: calls per CPU second of each case, one sample a pair. */
export interface KeySamples {
  key: number[];
  token: number[];
  /** Calls a batch. */
  batch: number;
  /** `lastUsedAt` writes during the measured and warm-up batches (the probe's first use wrote once before). */
  writes: number;
  /** Seconds from the first warm-up batch to the last batch. */
  seconds: number;
}

/**
 * Measures `pairs` pairs of batches of sequential calls, the order of the two cases swapped every
 * pair, after `warmupPairs` discarded pairs; a batch holds as many calls as take about `batchMs`
 * of CPU with the token (counted once, after a first batch of each). First checks that both
 * credentials are live and of the same user, that a key with a wrong checksum is refused (40101),
 * and that the key's first use stored its `lastUsedAt`.
 */
export async function measureKeyCheck(
  storage: CheckStorage,
  { pairs, batchMs, warmupPairs }: { pairs: number; batchMs: number; warmupPairs: number },
): Promise<KeySamples> {
  const opened = await storage.open();
  try {
    const writes = countLastUsedWrites(opened);
    const { auth, userId, token, key } = await signedInWithKey(opened);
    const byKey = await verifyApiKey(auth, { key });
    const byToken = await verifyAccessToken(auth, { token });
    if (byKey.userId !== userId || byToken.userId !== userId)
      throw new Error(`${storage.name}: the key or token is not the user's`);
    if (!(await lastUsedStored(auth, userId))) throw new Error(`${storage.name}: the key's first use stored no lastUsedAt`);
    const last = key.at(-1) === "a" ? "b" : "a";
    const refused = await verifyApiKey(auth, { key: `${key.slice(0, -1)}${last}` }).then(
      () => null,
      (error: { code?: number }) => error.code,
    );
    if (refused !== 40101) throw new Error(`${storage.name}: a key with a wrong checksum got ${refused}, not 40101`);

    // One input object each, made once, as an adapter's would be made per request either way.
    const keyInput = { key };
    const tokenInput = { token };
    let batch = 100;
    const run = async (byKey: boolean) => {
      const started = process.cpuUsage();
      if (byKey) for (let call = 0; call < batch; call++) await verifyApiKey(auth, keyInput);
      else for (let call = 0; call < batch; call++) await verifyAccessToken(auth, tokenInput);
      const used = process.cpuUsage(started);
      return batch / ((used.user + used.system) / 1e6);
    };
    const writesBefore = writes.count;
    const started = performance.now();
    await run(true);
    batch = Math.max(10, Math.round(((await run(false)) * batchMs) / 1000));
    const samples: KeySamples = { key: [], token: [], batch, writes: 0, seconds: 0 };
    for (let pair = 0; pair < warmupPairs + pairs; pair++) {
      const keyFirst = pair % 2 === 0;
      const first = await run(keyFirst);
      const second = await run(!keyFirst);
      if (pair < warmupPairs) continue;
      samples.key.push(keyFirst ? first : second);
      samples.token.push(keyFirst ? second : first);
    }
    samples.seconds = (performance.now() - started) / 1000;
    samples.writes = writes.count - writesBefore;
    return samples;
  } finally {
    await opened.close?.();
  }
}
