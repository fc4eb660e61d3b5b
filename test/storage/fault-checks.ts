// What the fault tests of test/storage expect of a service whose database is cut off: every
// request answers, 50300 with nothing but the envelope, within a bound, and the error behind it
// reaches onInternalError. Shared by postgres-faults.test.ts and mariadb-faults.test.ts.
import { type TokenSet, isAuthError } from "@portcullis/core";
import { isConnectionFailure } from "@portcullis/kysely";
import { expect } from "vitest";
import { testPassword } from "../fixtures/auth.js";
import { type CallResult, call, post } from "../http/client.js";
import { expectEnvelope } from "../http/contract-suite.js";
import type { RunningServer } from "../http/servers.js";

/** A request's answer and how long it took, or `answered: false` when it did not come within the bound. */
export type TimedAnswer = { answered: true; result: CallResult; elapsedMs: number } | { answered: false; elapsedMs: number };

/**
 * The requests the fault tests send to the service `server()` answers at the time: alice's
 * login, a refresh, `GET /me` with a bearer token, and a login expected to succeed.
 */
export function serviceRequests(server: () => RunningServer | undefined) {
  const base = "/api/v1/auth";
  const running = () => server() as RunningServer;
  const login = () => post(running(), `${base}/login`, { username: "alice", password: testPassword });
  const refresh = (refreshToken: string) => post(running(), `${base}/refresh`, { refreshToken });
  const me = (accessToken: string) => call(running(), "GET", `${base}/me`, { token: accessToken });
  const signIn = async (): Promise<TokenSet> => {
    const result = await login();
    expectEnvelope(result, 0);
    return result.body.data;
  };
  return { login, refresh, me, signIn };
}

/** What {@link faultChecks} needs to know of the service under test. */
export interface FaultCheckOptions {
  /** How long a request may take to answer 50300. */
  unavailableWithinMs: number;
  /** The errors the service handed to `onInternalError`, by request id. */
  internalErrors: ReadonlyMap<string, unknown>;
  /** Text of the database that must never reach a client (SQL, driver and table names). */
  leaks: RegExp;
}

/** The checks of one fault test file, bound to its service's bound, errors and database words. */
export function faultChecks({ unavailableWithinMs, internalErrors, leaks }: FaultCheckOptions) {
  /** Sends `request` and times it; gives up waiting (`answered: false`) after `waitMs`, so a request that hangs fails its test by name. */
  async function timed(request: () => Promise<CallResult>, waitMs = unavailableWithinMs + 5000): Promise<TimedAnswer> {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), waitMs);
    });
    try {
      const result = await Promise.race([request(), gaveUp]);
      const elapsedMs = performance.now() - started;
      return result === null ? { answered: false, elapsedMs } : { answered: true, result, elapsedMs };
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Each answer as its code and message, whether it came within the bound, and the message of
   * the error the service reported under its request id: one comparison that shows them all.
   */
  const summary = (answers: Record<string, TimedAnswer>) =>
    Object.fromEntries(
      Object.entries(answers).map(([what, answer]) => [
        what,
        answer.answered
          ? {
              code: answer.result.body?.code,
              message: answer.result.body?.message,
              inTime: answer.elapsedMs < unavailableWithinMs,
              reported: (internalErrors.get(answer.result.body?.requestId) as Error | undefined)?.message,
            }
          : `no answer within ${Math.round(answer.elapsedMs)} ms`,
      ]),
    );

  const allUnavailable = (answers: Record<string, unknown>) =>
    Object.fromEntries(
      Object.keys(answers).map((what) => [
        what,
        { code: 50300, message: "Storage is unavailable", inTime: true, reported: "Storage is unavailable" },
      ]),
    );

  /**
   * 50300 "Storage is unavailable" with a request id and nothing else (HTTP-5: no SQL, no driver
   * text), within the bound; the error behind it, handed to onInternalError under that request
   * id, is storageUnavailable around a connection failure.
   */
  function expectUnavailable(answer: TimedAnswer, what: string): void {
    if (!answer.answered) throw new Error(`${what}: no answer within ${Math.round(answer.elapsedMs)} ms`);
    const { result, elapsedMs } = answer;
    expect(result.body, `${what}: ${result.text}`).toEqual({
      code: 50300,
      message: "Storage is unavailable",
      requestId: expect.stringMatching(/^[A-Za-z0-9_-]{12}$/),
    });
    expect(result.status).toBe(503);
    expect(result.headers.get("cache-control")).toBe("no-store");
    // The request id is random base64url, which can spell any of these ("…pg_…"): only the rest is searched.
    expect(result.text.replace(result.body.requestId, "")).not.toMatch(leaks);
    expect(elapsedMs, what).toBeLessThan(unavailableWithinMs);
    const error = internalErrors.get(result.body.requestId);
    expect(isAuthError(error) && error.code === 50300, what).toBe(true);
    expect(isConnectionFailure((error as Error).cause), what).toBe(true);
  }

  /** {@link expectUnavailable} for each of `answers`, after checking their codes and times together. */
  function expectAllUnavailable(answers: Record<string, TimedAnswer>): void {
    expect(summary(answers)).toEqual(allUnavailable(answers));
    for (const [what, answer] of Object.entries(answers)) expectUnavailable(answer, what);
  }

  return { timed, summary, expectUnavailable, expectAllUnavailable };
}

/** Resolves with `promise`, or fails naming `what` if it has not settled within `ms`. */
export const within = <T>(promise: Promise<T> | undefined, ms: number, what: string) =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms)),
  ]);
