import { describe, expect, it } from "vitest";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { AmrValue } from "./amr.js";
import { type StepUpOptions, requireStepUp, stepUpRequirementOf, stepUpShortfall } from "./requirement.js";

const now = Date.UTC(2030, 0, 1, 12, 0, 0);
const nowSeconds = now / 1000;

describe("STUP-2, ASVS 7.5.3: what a route's step-up options ask of a session", () => {
  const table: [
    name: string,
    options: StepUpOptions,
    session: { authTime: number; amr: AmrValue[] },
    required: { maxAge?: number; amr?: AmrValue[] } | null,
  ][] = [
    ["no option asks nothing", {}, { authTime: 0, amr: [] }, null],
    ["maxAge: a sign-in exactly 5 minutes old passes", { maxAge: "5m" }, { authTime: nowSeconds - 300, amr: ["pwd"] }, null],
    ["maxAge: one second older is refused", { maxAge: "5m" }, { authTime: nowSeconds - 301, amr: ["pwd"] }, { maxAge: 300 }],
    ["maxAge: six minutes old is refused", { maxAge: "5m" }, { authTime: nowSeconds - 360, amr: ["pwd"] }, { maxAge: 300 }],
    ["maxAge in seconds", { maxAge: 30 }, { authTime: nowSeconds - 31, amr: ["pwd"] }, { maxAge: 30 }],
    [
      "maxAge: a token of before auth_time (0) is refused",
      { maxAge: "30d" },
      { authTime: 0, amr: ["pwd"] },
      { maxAge: 2_592_000 },
    ],
    ["maxAge: a sign-in in the future (clocks apart) passes", { maxAge: "1m" }, { authTime: nowSeconds + 5, amr: ["pwd"] }, null],
    ["secondFactor: mfa passes", { secondFactor: true }, { authTime: 0, amr: ["pwd", "otp", "mfa"] }, null],
    ["secondFactor: a password alone is refused", { secondFactor: true }, { authTime: 0, amr: ["pwd"] }, { amr: ["mfa"] }],
    ["secondFactor: false asks nothing", { secondFactor: false }, { authTime: 0, amr: ["pwd"] }, null],
    ["amr: every value named must be there", { amr: ["hwk", "user"] }, { authTime: 0, amr: ["hwk", "user", "mfa"] }, null],
    ["amr: the missing ones are named", { amr: ["hwk", "user"] }, { authTime: 0, amr: ["hwk"] }, { amr: ["user"] }],
    ["amr: swk is not hwk", { amr: ["hwk"] }, { authTime: 0, amr: ["swk", "user", "mfa"] }, { amr: ["hwk"] }],
    [
      "amr and secondFactor: mfa named once",
      { amr: ["mfa", "otp"], secondFactor: true },
      { authTime: 0, amr: ["pwd"] },
      { amr: ["mfa", "otp"] },
    ],
    [
      "everything at once: both named",
      { maxAge: "5m", secondFactor: true, amr: ["otp"] },
      { authTime: nowSeconds - 301, amr: ["pwd"] },
      { maxAge: 300, amr: ["otp", "mfa"] },
    ],
    [
      "everything at once: a fresh two-factor session passes",
      { maxAge: "5m", secondFactor: true, amr: ["otp"] },
      { authTime: nowSeconds - 10, amr: ["pwd", "otp", "mfa"] },
      null,
    ],
  ];

  it.each(table)("STUP-2, ASVS 7.5.3: %s", (_name, options, session, required) => {
    const requirement = stepUpRequirementOf(options);
    expect(requirement === null ? null : stepUpShortfall(session, requirement, now)).toEqual(required);
    const check = () => (requirement === null ? undefined : requireStepUp(session, requirement, now));
    if (required === null) {
      expect(check).not.toThrow();
      return;
    }
    let thrown: unknown;
    try {
      check();
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AuthError);
    expect(thrown).toMatchObject({ code: ErrorCode.StepUpRequired, data: { required } });
  });

  it("STUP-2, ASVS 7.5.3: no option, or only roles and the adapter's own, is no requirement; the same options object resolves once", () => {
    expect(stepUpRequirementOf({})).toBeNull();
    expect(stepUpRequirementOf({ roles: ["admin"], getPeerAddress: () => "::1" } as StepUpOptions)).toBeNull();
    const options: StepUpOptions = { maxAge: "5m" };
    expect(stepUpRequirementOf(options)).toBe(stepUpRequirementOf(options));
    expect(stepUpRequirementOf(options)).toEqual({ maxAgeSeconds: 300, amr: [] });
  });

  it("STUP-2, ASVS 7.5.3: an amr value asked twice is asked once, and named once when missing", () => {
    const requirement = stepUpRequirementOf({ amr: ["hwk", "hwk"], secondFactor: true });
    expect(requirement).toEqual({ amr: ["hwk", "mfa"] });
    expect(stepUpShortfall({ authTime: nowSeconds, amr: ["pwd"] }, requirement as NonNullable<typeof requirement>, now)).toEqual({
      amr: ["hwk", "mfa"],
    });
  });

  it("STUP-2, ASVS 7.5.3: a bad option is a TypeError naming it, when requireAuth is called", () => {
    const bad: [StepUpOptions, RegExp][] = [
      [{ maxAge: "5 minutes" as "5m" }, /maxAge must be a positive whole number of seconds/],
      [{ maxAge: 0 }, /maxAge must be a positive whole number of seconds/],
      [{ maxAge: -60 }, /maxAge must be a positive whole number of seconds/],
      [{ secondFactor: "yes" as unknown as boolean }, /secondFactor must be true or false; got "yes"/],
      [{ amr: "otp" as unknown as AmrValue[] }, /amr must be a list of RFC 8176 values, of .*; got "otp"$/],
      [{ amr: 7 as unknown as AmrValue[] }, /amr must be a list of RFC 8176 values, of .*; got 7$/],
      [{ amr: ["sms" as AmrValue] }, /amr must be a list of .*pwd, otp, hwk, swk, user, fed, mfa, email; got "sms"/],
      [{ amr: ["toString" as AmrValue] }, /got "toString"/],
    ];
    for (const [options, message] of bad) expect(() => stepUpRequirementOf(options), JSON.stringify(options)).toThrow(message);
    for (const [options] of bad) expect(() => stepUpRequirementOf(options)).toThrow(TypeError);
  });
});
