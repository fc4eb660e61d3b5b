// What the revocation channel's tests on a single Redis and on a Redis Cluster share: the
// instances' secrets, the heartbeat they run at, and how a test signs in, asks for a token's
// outcome and waits for one.
import { randomBytes } from "node:crypto";
import { type Auth, type TokenSet, isAuthError, login, verifyAccessToken } from "@portcullis/core";
import { testPassword } from "../../../test/fixtures/auth.js";

export const secrets = { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("hex") };

/** The channels' heartbeat in these tests: loose enough for a loaded two-core machine. */
export const heartbeatMs = 1000;

/** The code of a refused access token. */
export const refused = 40101;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Asks `probe` until `done` holds, failing after `withinMs`; answers when the probe that held was
 * asked, in milliseconds from the start: the moment a request was refused, not when its answer
 * got back across a busy machine.
 */
export async function until<T>(
  what: string,
  probe: () => Promise<T> | T,
  done: (value: T) => boolean,
  withinMs: number,
): Promise<number> {
  const started = performance.now();
  for (;;) {
    const asked = performance.now() - started;
    if (done(await probe())) return asked;
    if (performance.now() - started > withinMs) throw new Error(`${what} not within ${withinMs} ms`);
    await sleep(2);
  }
}

/** Signs `username` in on `auth` with the test password. */
export async function signIn(auth: Auth, username: string): Promise<TokenSet> {
  const result = await login(auth, { username, password: testPassword });
  if (result.status !== "authenticated") throw new Error(`expected a session, got ${result.status}`);
  return result.tokens;
}

/** What `auth` makes of the access token: "fulfilled", or the refusal's code. */
export const outcome = (auth: Auth, tokens: TokenSet) =>
  verifyAccessToken(auth, { token: tokens.accessToken }).then(
    () => "fulfilled" as const,
    (error: unknown) => (isAuthError(error) ? error.code : -1),
  );
