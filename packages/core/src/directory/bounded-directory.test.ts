import { describe, expect, it } from "vitest";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { isAuthError } from "../errors/index.js";
import { boundedDirectory } from "./bounded-directory.js";
import type { Directory, DirectoryAuthentication } from "./directory.js";
import { fakeDirectory, person, workingPolicy } from "./directory.test-support.js";
import type { DirectorySettings } from "./policy.js";

const settings = workingPolicy as DirectorySettings;
const alice = person("alice", []);

/**
 * A directory whose calls each hold a slot until the test releases them, or until their signal
 * aborts (then they fail, as `ldapDirectory()` does, unless `honoursAbort` is false): what the
 * wrapper sees of a slow server.
 */
function heldDirectory({ honoursAbort = true } = {}) {
  const held: { release: () => void; signal: AbortSignal | undefined }[] = [];
  let active = 0;
  let peak = 0;
  const hold = (signal: AbortSignal | undefined) =>
    new Promise<void>((resolve, reject) => {
      active += 1;
      peak = Math.max(peak, active);
      let settled = false;
      const settle = (then: () => void) => {
        if (settled) return;
        settled = true;
        active -= 1;
        then();
      };
      held.push({ signal, release: () => settle(resolve) });
      if (!honoursAbort) return;
      signal?.addEventListener("abort", () =>
        settle(() => reject(new AuthError(ErrorCode.Unavailable, "The directory is unavailable", { cause: signal.reason }))),
      );
    });
  const directory: Directory = {
    async authenticate(_settings, _username, _password, options) {
      await hold(options?.signal);
      return { status: "authenticated", entry: alice.entry };
    },
    async lookup(_settings, _by, options) {
      await hold(options?.signal);
      return alice.entry;
    },
    async check(_settings, options) {
      await hold(options?.signal);
      return { ok: true };
    },
    async close() {},
  };
  return { directory, held, active: () => active, peak: () => peak };
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** What `attempt` settles to, and how long it took. */
async function timed<T>(attempt: Promise<T>): Promise<{ outcome: T | unknown; ms: number }> {
  const started = performance.now();
  const outcome = await attempt.catch((error: unknown) => error);
  return { outcome, ms: performance.now() - started };
}

describe("boundedDirectory", () => {
  it("issue 20 item 11: at most maxConcurrent calls run at once, whatever the method; the rest wait their turn", async () => {
    const { directory, held, peak } = heldDirectory();
    const bounded = boundedDirectory(directory, { maxConcurrent: 2, maxQueued: 10, deadlineMs: 5000 });
    const calls: Promise<unknown>[] = [
      bounded.authenticate(settings, "alice", "password"),
      bounded.lookup(settings, { username: "alice" }),
      bounded.check(settings),
      bounded.authenticate(settings, "alice", "password"),
    ];
    await tick();
    expect(held).toHaveLength(2);
    for (let index = 0; index < 4; index += 1) {
      held[index]?.release();
      await tick();
    }
    const [authenticated, entry, checked] = await Promise.all(calls);
    expect(peak()).toBe(2);
    expect(authenticated).toMatchObject({ status: "authenticated" });
    expect(entry).toEqual(alice.entry);
    expect(checked).toEqual({ ok: true });
  });

  it("issue 20 item 11: a call finding the queue full is 50300 `The directory is unavailable` at once, and never reaches the directory", async () => {
    const { directory, held } = heldDirectory();
    const bounded = boundedDirectory(directory, { maxConcurrent: 1, maxQueued: 1, deadlineMs: 5000 });
    const running = bounded.authenticate(settings, "alice", "password");
    const waiting = bounded.lookup(settings, { stableId: "uuid-alice" });
    const { outcome, ms } = await timed(bounded.authenticate(settings, "alice", "password"));
    expect(ms).toBeLessThan(50);
    expect(isAuthError(outcome, ErrorCode.Unavailable)).toBe(true);
    expect((outcome as AuthError).message).toBe("The directory is unavailable");
    expect(isAuthError((outcome as AuthError).cause, ErrorCode.Unavailable)).toBe(true);
    held[0]?.release();
    await tick();
    held[1]?.release();
    await Promise.all([running, waiting]);
    expect(held).toHaveLength(2);
  });

  it("LDAP-4: a call still running at the deadline is 50300 then, its signal aborted with the reason, and its slot is free again", async () => {
    const { directory, held, active } = heldDirectory();
    const bounded = boundedDirectory(directory, { maxConcurrent: 1, maxQueued: 5, deadlineMs: 150 });
    const { outcome, ms } = await timed(bounded.authenticate(settings, "alice", "password"));
    expect(ms).toBeGreaterThanOrEqual(140);
    expect(ms).toBeLessThan(400);
    expect(isAuthError(outcome, ErrorCode.Unavailable)).toBe(true);
    const cause = (outcome as AuthError).cause as Error;
    expect(cause.message).toBe("The directory call took longer than 150 ms");
    expect(held[0]?.signal?.aborted).toBe(true);
    expect(held[0]?.signal?.reason).toBe(cause);
    await tick();
    expect(active()).toBe(0);
    const next = bounded.lookup(settings, { username: "alice" });
    await tick();
    held[1]?.release();
    expect(await next).toEqual(alice.entry);
  });

  it("LDAP-4: the wait for a slot counts against the deadline; the caller is answered at the deadline even when the directory ignores its signal, and a call whose deadline passed never reaches the directory", async () => {
    const { directory, held, active } = heldDirectory({ honoursAbort: false });
    const bounded = boundedDirectory(directory, { maxConcurrent: 1, maxQueued: 5, deadlineMs: 150 });
    const first = timed(bounded.authenticate(settings, "alice", "password"));
    await tick();
    const second = await timed(bounded.lookup(settings, { username: "alice" }));
    expect(second.ms).toBeGreaterThanOrEqual(140);
    expect(second.ms).toBeLessThan(400);
    expect(isAuthError(second.outcome, ErrorCode.Unavailable)).toBe(true);
    const answered = await first;
    expect(answered.ms).toBeLessThan(400);
    expect(isAuthError(answered.outcome, ErrorCode.Unavailable)).toBe(true);
    // The slot stays taken while the directory's call runs on; the waiter it then goes to has expired.
    expect(active()).toBe(1);
    held[0]?.release();
    await tick();
    await tick();
    expect(held).toHaveLength(1);
    expect(active()).toBe(0);
  });

  it("LDAP-4: a check still running at the deadline answers category timeout, not an error", async () => {
    const { directory } = heldDirectory();
    const bounded = boundedDirectory(directory, { maxConcurrent: 1, maxQueued: 5, deadlineMs: 100 });
    expect(await bounded.check(settings)).toEqual({
      ok: false,
      category: "timeout",
      message: "The test took longer than the deadline of 0.1 s",
    });
  });

  it("the directory's answers and errors, and beforeBind's, pass unchanged; beforeBind and a signal reach the directory", async () => {
    const fake = fakeDirectory([alice]);
    const bounded = boundedDirectory(fake, { maxConcurrent: 1, maxQueued: 0, deadlineMs: 5000 });
    expect(await bounded.authenticate(settings, "alice", alice.password)).toEqual({
      status: "authenticated",
      entry: alice.entry,
    });
    expect(await bounded.authenticate(settings, "alice", "wrong")).toEqual({ status: "invalid_credentials" });
    fake.down = true;
    const down = await bounded.lookup(settings, { username: "alice" }).catch((error: unknown) => error);
    expect(down).toMatchObject({ code: ErrorCode.Unavailable, message: "The directory is unavailable" });
    expect((down as AuthError).cause).toBeUndefined();

    const refused = new AuthError(ErrorCode.TooManyAttempts, "Too many attempts");
    let seen: AbortSignal | undefined;
    const hooked: Directory = {
      ...fake,
      async authenticate(_settings, _username, _password, options): Promise<DirectoryAuthentication> {
        seen = options?.signal;
        await options?.beforeBind?.({ dn: alice.entry.dn, stableId: alice.entry.stableId, username: "alice" });
        return { status: "invalid_credentials" };
      },
    };
    const outcome = await boundedDirectory(hooked, { maxConcurrent: 1, maxQueued: 0, deadlineMs: 5000 })
      .authenticate(settings, " ALICE ", "x", {
        beforeBind: async () => {
          throw refused;
        },
      })
      .catch((error: unknown) => error);
    expect(outcome).toBe(refused);
    expect(seen).toBeInstanceOf(AbortSignal);
    expect(seen?.aborted).toBe(false);
  });

  it("a caller's own signal still reaches the directory, joined to the deadline's", async () => {
    const { directory, held } = heldDirectory();
    const bounded = boundedDirectory(directory, { maxConcurrent: 1, maxQueued: 0, deadlineMs: 5000 });
    const caller = new AbortController();
    const call = bounded.lookup(settings, { username: "alice" }, { signal: caller.signal });
    await tick();
    caller.abort(new Error("the client went away"));
    const outcome = await call.catch((error: unknown) => error);
    expect(isAuthError(outcome, ErrorCode.Unavailable)).toBe(true);
    expect(held[0]?.signal?.reason).toEqual(new Error("the client went away"));
  });
});
