import { describe, expect, it } from "vitest";
import { makeAuth } from "../flows/fixtures.test-support.js";
import { resolveSecondFactorConfig } from "./required-factor-config.js";

/** The message `createAuth` refuses a `secondFactor` setting with. */
function refusal(secondFactor: unknown): string {
  try {
    makeAuth({ secondFactor: secondFactor as never });
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    return (error as TypeError).message;
  }
  throw new Error(`accepted ${JSON.stringify(secondFactor)}`);
}

describe("the secondFactor options", () => {
  it("STUP-4, ASVS 6.3.3: left out, nothing is required; the enrolment token lasts 10 minutes and takes 10 attempts", () => {
    expect(makeAuth().auth.config.secondFactor).toEqual({ required: null, enrolmentTtlSeconds: 600, enrolmentAttempts: 10 });
    expect(resolveSecondFactorConfig({})).toEqual({ required: null, enrolmentTtlSeconds: 600, enrolmentAttempts: 10 });
  });

  it('STUP-4, ASVS 6.3.3: "always", a list of roles and a function are kept as given; the lifetime and attempts are read', () => {
    const decide = () => true;
    expect(resolveSecondFactorConfig({ required: "always" }).required).toBe("always");
    expect(resolveSecondFactorConfig({ required: { roles: ["admin", "admin", "ops"] } }).required).toEqual({
      roles: ["admin", "ops"],
    });
    expect(resolveSecondFactorConfig({ required: decide }).required).toBe(decide);
    expect(resolveSecondFactorConfig({ enrolmentTtl: "1h", enrolmentAttempts: 1 })).toMatchObject({
      enrolmentTtlSeconds: 3600,
      enrolmentAttempts: 1,
    });
    expect(resolveSecondFactorConfig({ enrolmentTtl: 60, enrolmentAttempts: 100 })).toMatchObject({
      enrolmentTtlSeconds: 60,
      enrolmentAttempts: 100,
    });
  });

  it("STUP-4, ASVS 6.3.3: createAuth refuses every malformed setting at start-up, naming it", () => {
    const cases: [unknown, string][] = [
      ["always", 'secondFactor must be an object such as { required: "always" }; got "always"'],
      [[], 'secondFactor must be an object such as { required: "always" }; got []'],
      [null, 'secondFactor must be an object such as { required: "always" }; got null'],
      [{ require: "always" }, "secondFactor.require is not an option; did you mean secondFactor.required?"],
      [
        { required: "never" },
        'secondFactor.required must be "always", { roles: [...] } or a function (user) => boolean; got "never"',
      ],
      [{ required: true }, 'secondFactor.required must be "always", { roles: [...] } or a function (user) => boolean; got true'],
      [{ required: null }, 'secondFactor.required must be "always", { roles: [...] } or a function (user) => boolean; got null'],
      [
        { required: ["admin"] },
        'secondFactor.required must be "always", { roles: [...] } or a function (user) => boolean; got ["admin"]',
      ],
      [
        { required: { roles: [] } },
        "secondFactor.required.roles must name at least one role; leave secondFactor.required out to require none",
      ],
      [{ required: { roles: "admin" } }, "secondFactor.required.roles must be a list of names of 1 to 64 characters"],
      [{ required: { roles: [""] } }, "secondFactor.required.roles must be a list of names of 1 to 64 characters"],
      [
        { required: { role: ["admin"] } },
        "secondFactor.required.role is not an option; did you mean secondFactor.required.roles?",
      ],
      [{ enrolmentTtl: "0m" }, "secondFactor.enrolmentTtl must be a positive whole number of seconds"],
      [{ enrolmentTtl: 59 }, "secondFactor.enrolmentTtl must be from 1 minute to 1 hour; got 59 seconds"],
      [{ enrolmentTtl: "61m" }, "secondFactor.enrolmentTtl must be from 1 minute to 1 hour; got 3660 seconds"],
      [{ enrolmentAttempts: 0 }, "secondFactor.enrolmentAttempts must be a whole number of at least 1; got 0"],
      [{ enrolmentAttempts: 2.5 }, "secondFactor.enrolmentAttempts must be a whole number of at least 1; got 2.5"],
      [{ enrolmentAttempts: 101 }, "secondFactor.enrolmentAttempts must be at most 100; got 101"],
    ];
    for (const [setting, message] of cases) expect(refusal(setting)).toContain(message);
  });
});
