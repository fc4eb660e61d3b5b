import { describe, expect, it } from "vitest";
import { deferred } from "../../../../test/fixtures/deferred.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { createLimiter } from "./limiter.js";

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("createLimiter", () => {
  it("PW-4: with concurrency 2, ten tasks never run more than two at once, and all complete", async () => {
    const limiter = createLimiter(2, 100);
    let active = 0;
    let peak = 0;
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        limiter.run(async () => {
          active += 1;
          peak = Math.max(peak, active);
          await new Promise((resolve) => setTimeout(resolve, 2 + (index % 3)));
          active -= 1;
          return index;
        }),
      ),
    );
    expect(peak).toBe(2);
    expect(results).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it("PW-4: a task arriving while a slot is being handed to a waiter does not exceed the limit", async () => {
    // A caller arriving a few microtasks after the running task ends lands in the moment the
    // slot passes to the waiter; try each of several delays so that one of them hits it.
    for (let delay = 0; delay < 6; delay += 1) {
      const limiter = createLimiter(1, 10);
      let active = 0;
      let peak = 0;
      const task = (gate: Promise<void>) => async () => {
        active += 1;
        peak = Math.max(peak, active);
        await gate;
        active -= 1;
      };
      const first = deferred();
      const running = limiter.run(task(first.promise));
      const waiter = limiter.run(task(Promise.resolve()));
      await tick();
      let late = first.promise;
      for (let index = 0; index < delay; index += 1) late = late.then(() => undefined);
      const lateRun = late.then(() => limiter.run(task(Promise.resolve())));
      first.resolve();
      await Promise.all([running, waiter, lateRun]);
      expect({ delay, peak }).toEqual({ delay, peak: 1 });
    }
  });

  it("PW-4: when the queue is full, a further task gets 50300 and is never run", async () => {
    const limiter = createLimiter(2, 3);
    const gate = deferred();
    let started = 0;
    const task = async () => {
      started += 1;
      await gate.promise;
    };
    const accepted = Array.from({ length: 5 }, () => limiter.run(task));
    const refused = limiter.run(task);
    await expect(refused).rejects.toBeInstanceOf(AuthError);
    await expect(refused).rejects.toMatchObject({ code: ErrorCode.Unavailable, message: "The service is busy; try again later" });
    expect(started).toBe(2);
    gate.resolve();
    await Promise.all(accepted);
    expect(started).toBe(5);
    await expect(limiter.run(async () => "after")).resolves.toBe("after");
  });

  it("PW-4: a failing task frees its slot", async () => {
    const limiter = createLimiter(1, 0);
    await expect(limiter.run(async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    await expect(limiter.run(async () => 7)).resolves.toBe(7);
  });
});
