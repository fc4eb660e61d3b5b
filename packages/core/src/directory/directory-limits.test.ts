import { describe, expect, it } from "vitest";
import { resolveDirectoryLimits } from "./directory-limits.js";

describe("resolveDirectoryLimits", () => {
  it("issue 20 item 11: defaults to 10 calls at once, 100 waiting and a 10 s deadline, well below the step timeouts' sum", () => {
    expect(resolveDirectoryLimits(undefined)).toEqual({ maxConcurrent: 10, maxQueued: 100, deadlineMs: 10_000 });
    expect(resolveDirectoryLimits({ maxConcurrent: 3, maxQueued: 0, deadline: "1m" })).toEqual({
      maxConcurrent: 3,
      maxQueued: 0,
      deadlineMs: 60_000,
    });
    expect(resolveDirectoryLimits({ deadline: 120 }).deadlineMs).toBe(120_000);
  });

  it("names the bad option in a TypeError", () => {
    const cases: [unknown, string][] = [
      [{ maxConcurrent: 0 }, "directoryLimits.maxConcurrent must be a whole number of at least 1; got 0"],
      [{ maxConcurrent: 2.5 }, "directoryLimits.maxConcurrent must be a whole number of at least 1; got 2.5"],
      [{ maxQueued: -1 }, "directoryLimits.maxQueued must be a whole number of at least 0; got -1"],
      [
        { deadline: "0s" },
        'directoryLimits.deadline must be a positive whole number of seconds or a string like "15m", "12h" or "30d"; got "0s"',
      ],
      [{ deadline: 0.5 }, "directoryLimits.deadline must be a positive whole number of seconds"],
      [{ deadline: "3m" }, "directoryLimits.deadline must be at most 120 seconds; got 180"],
    ];
    for (const [config, message] of cases) {
      expect(() => resolveDirectoryLimits(config as never), JSON.stringify(config)).toThrow(
        new TypeError(`Portcullis configuration: ${message}`).message,
      );
    }
  });
});
