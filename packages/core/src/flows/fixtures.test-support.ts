/**
 * Shared fixture of the core unit tests: an auth instance with a frozen clock, memory storage,
 * real argon2id and real keys. Not a test file itself (vitest includes only `*.test.ts`), and
 * excluded from the build by `tsconfig.build.json`.
 */
import { randomBytes } from "node:crypto";
import { HOTP, Secret } from "otpauth";
import { type Auth, type CreateAuthOptions, createAuth } from "../auth.js";
import type { AuthConfig } from "../config.js";
import { AuthError } from "../errors/auth-error.js";
import type { AuthEvent } from "../events/types.js";
import { memoryStorage } from "../storage/memory.js";
import type { Storage } from "../storage/types.js";
import type { PublicUser, TokenSet } from "../tokens/issue-tokens.js";
import { type HotpAlgorithm, totpStep } from "../totp/totp.js";
import { createUser } from "./create-user.js";
import { type LoginResult, login } from "./login.js";
import { beginTotpSetup, enableTotp } from "./totp-enrolment.js";

/** 15 January 2025, 12:00:01 UTC: one second into a TOTP step. */
export const startTime = Date.UTC(2025, 0, 15, 12, 0, 1);

/** An HS256 secret of 44 bytes. */
export const signingSecret = "test-signing-secret-0123456789-abcdefghijklm";

/** A random 32-byte encryption key, base64url, the same for every auth made in one test file. */
export const encryptionKey = randomBytes(32).toString("base64url");

export const issuer = "https://api.example.com";
export const audience = "example-api";

/** A password that passes the policy. */
export const goodPassword = "correct horse battery staple";

/** A frozen clock that moves only when told. */
export interface Clock {
  now: number;
  advance(ms: number): number;
}

export function makeClock(start = startTime): Clock {
  const clock: Clock = {
    now: start,
    advance(ms) {
      clock.now += ms;
      return clock.now;
    },
  };
  return clock;
}

/** Everything a test needs around one auth instance. */
export interface Harness {
  auth: Auth;
  clock: Clock;
  storage: Storage;
  /** Every event the instance emitted, in order. */
  events: AuthEvent[];
}

export type AuthOverrides = Partial<AuthConfig & CreateAuthOptions> & { clock?: Clock };

/** Account throttling generous enough for tests that make many attempts on purpose. */
export const generousThrottle: AuthConfig["throttle"] = { account: [{ limit: 1000, window: "15m" }] };

/**
 * Makes an auth instance: memory storage, the frozen clock `clock.now`, an HS256 secret of
 * 44 bytes, a random encryption key, issuer `https://api.example.com`, audience `example-api`.
 * Pass `storage` and `clock` of another harness to make a second instance sharing them.
 */
export function makeAuth(overrides: AuthOverrides = {}): Harness {
  const { clock = makeClock(), ...config } = overrides;
  const storage = config.storage ?? memoryStorage();
  const auth = createAuth({
    issuer,
    audience,
    secrets: { signing: signingSecret, encryption: encryptionKey },
    now: () => clock.now,
    ...config,
    storage,
  });
  const events: AuthEvent[] = [];
  auth.events.on("*", (event) => {
    events.push(event);
  });
  return { auth, clock, storage, events };
}

/**
 * Memory storage without the optional `sessions.findTokenState`: token checks go through its
 * single operations, as on a store that does not have it (see `findTokenState`).
 */
export function stepwiseMemoryStorage(): Storage {
  const storage = memoryStorage();
  const { findTokenState: _, ...sessions } = storage.sessions;
  return { ...storage, sessions };
}

/** Creates a local user with {@link goodPassword} (or the given one) and returns its id. */
/** The contract's user object of an account made by {@link addUser}: no roles, no TOTP and no address unless given. */
export function shownUser(fields: Pick<PublicUser, "id" | "username" | "createdAt"> & Partial<PublicUser>): PublicUser {
  return { roles: [], totpEnabled: false, email: null, emailVerified: false, ...fields };
}

export async function addUser(auth: Auth, username: string, password = goodPassword, roles: string[] = []): Promise<string> {
  return (await createUser(auth, { username, password, roles })).id;
}

/** The code of a TOTP secret (SHA-1, 6 digits, 30 s) at an instant. */
export function codeAt(secret: Uint8Array, epochMs: number, digits = 6, algorithm: HotpAlgorithm = "SHA1"): string {
  return HOTP.generate({
    secret: new Secret({ buffer: new Uint8Array(secret).buffer }),
    counter: totpStep(epochMs),
    digits,
    algorithm,
  });
}

/** A six-digit string that is not the code of `secret` at any step within ±2 of `epochMs`. */
export function wrongCodeAt(secret: Uint8Array, epochMs: number): string {
  const near = new Set([-2, -1, 0, 1, 2].map((offset) => codeAt(secret, epochMs + offset * 30_000)));
  for (let candidate = 0; ; candidate += 1) {
    const code = String(candidate).padStart(6, "0");
    if (!near.has(code)) return code;
  }
}

/** Decodes the base32 secret an authenticator app is shown. */
export function decodeBase32(secret: string): Uint8Array {
  return new Uint8Array(Secret.fromBase32(secret).bytes);
}

/**
 * Enrols TOTP for a user through the real flows (setup, then enable with the current code,
 * each re-authenticated with `password`) and returns the secret bytes and the recovery codes. The step of `auth.now()` is spent by
 * enabling: advance the clock by 30 s before the next code (see {@link nextCode}).
 */
export async function enrolTotp(
  auth: Auth,
  userId: string,
  password = goodPassword,
): Promise<{ secret: Uint8Array; recoveryCodes: string[] }> {
  const setup = await beginTotpSetup(auth, { userId, password });
  const secret = decodeBase32(setup.secret);
  const { recoveryCodes } = await enableTotp(auth, { userId, password, code: codeAt(secret, auth.now()) });
  return { secret, recoveryCodes };
}

/** Moves the clock to the next TOTP step and returns the code of that step. */
export function nextCode(harness: Harness, secret: Uint8Array): string {
  return codeAt(secret, harness.clock.advance(30_000));
}

/** The business code of a rejected promise, or "fulfilled". */
export async function outcome(promise: Promise<unknown>): Promise<number | "fulfilled"> {
  try {
    await promise;
    return "fulfilled";
  } catch (error) {
    if (error instanceof AuthError) return error.code;
    throw error;
  }
}

/** The {@link AuthError} a promise rejects with; fails when it fulfils or rejects with anything else. */
export async function authError(promise: Promise<unknown>): Promise<AuthError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AuthError) return error;
    throw error;
  }
  throw new Error("expected an AuthError, but the promise fulfilled");
}

/** Counts the outcomes of settled operations by business code. */
export async function tally(promises: Promise<unknown>[]): Promise<Map<number | "fulfilled", number>> {
  const counts = new Map<number | "fulfilled", number>();
  for (const result of await Promise.all(promises.map(outcome))) counts.set(result, (counts.get(result) ?? 0) + 1);
  return counts;
}

/** The token set of a sign-in that must have completed (not 40102 or 40105); throws on anything else. */
export function tokensOf(result: LoginResult): TokenSet {
  if (result.status !== "authenticated") throw new Error(`expected a session, got ${result.status}`);
  return result.tokens;
}

/** Signs a user without TOTP in with a password and returns the token set; throws on anything else. */
export async function signIn(harness: Harness, username: string, password = goodPassword): Promise<TokenSet> {
  const result = await login(harness.auth, { username, password });
  if (result.status !== "authenticated") throw new Error(`expected a session, got ${result.status}`);
  return result.tokens;
}

/**
 * Wraps a storage so that every operation waits `ms` milliseconds before it runs, like a
 * database across a network: concurrent flows then interleave at every storage call, which
 * is where races live.
 */
export function slowStorage(storage: Storage, ms = 2): Storage {
  const pause = () => new Promise((resolve) => setTimeout(resolve, ms));
  const wrap = <T extends object>(store: T): T =>
    new Proxy(store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== "function") return value;
        return async (...args: unknown[]) => {
          await pause();
          return value.apply(target, args);
        };
      },
    });
  return Object.fromEntries(Object.entries(storage).map(([name, store]) => [name, wrap(store)])) as unknown as Storage;
}
