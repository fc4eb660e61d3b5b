// A load process: `node --import tsx load.ts` reads one JSON load spec per line on stdin, runs
// that autocannon measurement against a server of another process, and answers one JSON line
// on stdout, `{"result":…}` or `{"error":…}`, before it reads the next.
import { createInterface } from "node:readline";
import autocannon from "autocannon";

/** What one load process sends, read from the JSON file named on its command line. */
export interface LoadSpec {
  url: string;
  method: "GET" | "POST";
  connections: number;
  seconds: number;
  /** Requests per second over all connections; unlimited when absent. */
  overallRate?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Access tokens sent as `Authorization: Bearer`, the next one on each request, round the pool. */
  bearerTokens?: string[];
  /**
   * Unused refresh tokens, one per connection: each request sends `{"refreshToken"}` from the
   * queue, and each answer's `data.refreshToken` goes back in it, so no token is sent twice.
   */
  refreshTokens?: string[];
}

/** What one load process measured. */
export interface LoadResult {
  requestsPerSecond: number;
  /** 99th percentile of the latency of 2xx answers, in milliseconds (sub-millisecond, unlike autocannon's histogram). */
  p99Ms: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
}

type Request = autocannon.Request;

function rotatingBearer(tokens: string[]): Request["setupRequest"] {
  let next = 0;
  return (request) => {
    const token = tokens[next++ % tokens.length];
    return { ...request, headers: { ...request.headers, authorization: `Bearer ${token}` } };
  };
}

/** Feeds each refresh request an unused token and keeps the one its answer returns. */
function chainedRefresh(starting: string[]): Pick<Request, "setupRequest" | "onResponse"> {
  const unused = [...starting];
  return {
    setupRequest: (request) => ({ ...request, body: JSON.stringify({ refreshToken: unused.shift() ?? "pool-ran-dry" }) }),
    onResponse: (status, body) => {
      if (status !== 200) return;
      const token = (JSON.parse(body) as { data?: { refreshToken?: unknown } }).data?.refreshToken;
      if (typeof token === "string") unused.push(token);
    },
  };
}

function requestOf(spec: LoadSpec): Request {
  if (spec.bearerTokens) return { setupRequest: rotatingBearer(spec.bearerTokens) };
  if (spec.refreshTokens) return chainedRefresh(spec.refreshTokens);
  return {};
}

function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] as number;
}

/** Runs the measurement a spec describes. */
async function measureLoad(spec: LoadSpec): Promise<LoadResult> {
  const latencies: number[] = [];
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const options = {
      url: spec.url,
      method: spec.method,
      connections: spec.connections,
      duration: spec.seconds,
      overallRate: spec.overallRate,
      headers: spec.headers,
      body: spec.body,
      requests: [requestOf(spec)],
    };
    const instance = autocannon(options, (error: unknown, finished: autocannon.Result) =>
      error ? reject(error) : resolve(finished),
    );
    instance.on("response", (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
  });
  const statusCodes = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([code, stats]) => [code, (stats as { count?: number }).count ?? 0]),
  );
  return {
    requestsPerSecond: result.requests.total / result.duration,
    p99Ms: percentile(Float64Array.from(latencies).sort(), 0.99),
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
  };
}

for await (const line of createInterface({ input: process.stdin })) {
  const answer = await measureLoad(JSON.parse(line) as LoadSpec).then(
    (result) => ({ result }),
    (error: unknown) => ({ error: String((error as Error)?.stack ?? error) }),
  );
  process.stdout.write(`${JSON.stringify(answer)}\n`);
}
