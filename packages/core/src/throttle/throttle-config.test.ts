import { describe, expect, it } from "vitest";
import { type ThrottleConfig, resolveThrottleConfig, resolveTiers } from "./throttle-config.js";

/** The message `resolveThrottleConfig` refuses `config` with. */
function refusal(config: unknown): string {
  try {
    resolveThrottleConfig(config as ThrottleConfig);
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    return (error as TypeError).message;
  }
  throw new Error("expected a TypeError, but the configuration was accepted");
}

describe("resolveThrottleConfig", () => {
  it("PR-1, EV-1: a bad tier of the forgot and address-change budgets is refused naming its option", () => {
    for (const scope of ["passwordResetRequests", "passwordResetRequestsIp", "emailChanges"] as const) {
      expect(refusal({ [scope]: [{ window: "1h" }] })).toBe(
        `Portcullis configuration: throttle.${scope}[0].limit is required: a whole number of at least 1`,
      );
      expect(refusal({ [scope]: [] })).toBe(
        `Portcullis configuration: throttle.${scope} must be a non-empty list of { limit, window }`,
      );
    }
  });

  it("EM-1: resolveTiers, which email.recipientLimit shares, turns windows into milliseconds and keeps the order", () => {
    expect(
      resolveTiers(
        [
          { limit: 1, window: "1m" },
          { limit: 2, window: 3600 },
        ],
        "x",
        [],
      ),
    ).toEqual([
      { limit: 1, windowMs: 60_000 },
      { limit: 2, windowMs: 3_600_000 },
    ]);
    expect(resolveTiers(undefined, "x", [{ limit: 4, window: "2m" }])).toEqual([{ limit: 4, windowMs: 120_000 }]);
  });
});
