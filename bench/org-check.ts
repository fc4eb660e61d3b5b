// Figure 14's in-process part: `authorizeRequest(auth, request, { org: true })` against
// `authorizeRequest(auth, request)`, one access token carrying an organization, in the bench
// process, in alternating batches timed in this process's CPU time (`process.cpuUsage()`): other
// work on a busy machine delays a batch but adds little to its CPU time, and a stretch of it falls
// on both cases of a pair alike.
import { randomBytes } from "node:crypto";
import {
  type Auth,
  type Storage,
  authorizeRequest,
  createAuth,
  createOrganization,
  createUser,
  login,
  memoryStorage,
  switchOrganization,
} from "@portcullis/core";
import { audience, issuer, username } from "./common.js";

/** A storage the figure measures on, and how to let it go. */
export interface CheckStorage {
  name: string;
  open(): Promise<Storage & { close?(): Promise<void> }>;
}

/** Memory, PGlite in memory, and PostgreSQL on `postgresUrl` when there is one. */
export function checkStorages(postgresUrl: string | null): CheckStorage[] {
  const storages: CheckStorage[] = [
    { name: "memory", open: async () => memoryStorage() },
    {
      name: "PGlite",
      open: async () => (await import("@portcullis/kysely")).pgliteStorage({ dataDir: "memory://" }),
    },
  ];
  if (postgresUrl !== null) {
    storages.push({
      name: "PostgreSQL",
      open: async () => {
        const { connectStorage, migrate } = await import("@portcullis/kysely");
        const storage = await connectStorage({ url: postgresUrl });
        await migrate(storage);
        return storage;
      },
    });
  }
  return storages;
}

/** An auth with organizations on, and the bench user's access token of a session whose active organization is one the user owns. */
async function signedInWithOrganization(storage: Storage): Promise<{ auth: Auth; token: string; noOrgToken: string }> {
  const auth = createAuth({
    storage,
    issuer,
    audience,
    secrets: { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("base64url") },
    organizations: { enabled: true },
    sweepInterval: false,
  });
  const password = `bench-${randomBytes(18).toString("base64url")}`;
  const user = await createUser(auth, { username, password, roles: ["user"] });
  const signIn = async () => {
    const result = await login(auth, { username, password });
    if (result.status !== "authenticated") throw new Error(`login answered ${result.status}`);
    return result.tokens;
  };
  const [session, other] = [await signIn(), await signIn()];
  const sid = JSON.parse(Buffer.from(session.accessToken.split(".")[1] ?? "", "base64url").toString("utf8")).sid as string;
  const organization = await createOrganization(auth, { userId: user.id, name: "Bench Org" });
  const switched = await switchOrganization(auth, { userId: user.id, sessionId: sid, orgId: organization.id });
  return { auth, token: switched.accessToken, noOrgToken: other.accessToken };
}

/** A request as an adapter hands it to core: the bearer header, a loopback peer over plain HTTP. */
function requestWith(token: string) {
  const authorization = `Bearer ${token}`;
  return {
    header: (name: string) => (name === "authorization" ? authorization : undefined),
    peerAddress: "127.0.0.1",
    secure: false,
  };
}

/** What one storage's comparison measured: calls per CPU second of each case, one sample a pair. */
export interface CheckSamples {
  withOrg: number[];
  without: number[];
}

/**
 * Measures `pairs` pairs of batches of sequential calls, the order of the two cases swapped every
 * pair, after `warmupPairs` discarded pairs; a batch holds as many calls as take about `batchMs`
 * of CPU without `org` (counted once, after a first batch of each). First checks that the org check is
 * live: the token passes both, and a session without an organization is refused (40300) with it.
 */
export async function measureOrgCheck(
  storage: CheckStorage,
  { pairs, batchMs, warmupPairs }: { pairs: number; batchMs: number; warmupPairs: number },
): Promise<CheckSamples & { batch: number }> {
  const opened = await storage.open();
  try {
    const { auth, token, noOrgToken } = await signedInWithOrganization(opened);
    const request = requestWith(token);
    const withOrg = await authorizeRequest(auth, request, { org: true });
    if (withOrg.org === null) throw new Error(`${storage.name}: the token carries no organization`);
    await authorizeRequest(auth, requestWith(noOrgToken));
    const refused = await authorizeRequest(auth, requestWith(noOrgToken), { org: true }).then(
      () => null,
      (error: { code?: number }) => error.code,
    );
    if (refused !== 40300) throw new Error(`${storage.name}: a session without an organization got ${refused}, not 40300`);

    // One options object each, made once, as requireAuth makes its own when the route is declared.
    const orgRequired = { org: true } as const;
    const noOptions = {};
    let batch = 100;
    const run = async (options: { org?: true }) => {
      const started = process.cpuUsage();
      for (let call = 0; call < batch; call++) await authorizeRequest(auth, request, options);
      const used = process.cpuUsage(started);
      return batch / ((used.user + used.system) / 1e6);
    };
    await run(orgRequired);
    batch = Math.max(10, Math.round(((await run(noOptions)) * batchMs) / 1000));
    const samples: CheckSamples & { batch: number } = { withOrg: [], without: [], batch };
    for (let pair = 0; pair < warmupPairs + pairs; pair++) {
      const orgFirst = pair % 2 === 0;
      const first = await run(orgFirst ? orgRequired : noOptions);
      const second = await run(orgFirst ? noOptions : orgRequired);
      if (pair < warmupPairs) continue;
      samples.withOrg.push(orgFirst ? first : second);
      samples.without.push(orgFirst ? second : first);
    }
    return samples;
  } finally {
    await opened.close?.();
  }
}
