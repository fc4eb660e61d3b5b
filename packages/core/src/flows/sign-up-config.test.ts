import { describe, expect, it } from "vitest";
import { resolveSignUpConfig } from "./sign-up-config.js";

const badRoles = /^Portcullis configuration: signUp.defaultRoles must be a list of names of 1 to 64 characters/;

describe("resolveSignUpConfig", () => {
  it("SU-1: sign-up is off unless enabled is true: without signUp, with {}, with only defaultRoles", () => {
    expect(resolveSignUpConfig(undefined, "admin")).toEqual({ enabled: false, defaultRoles: [] });
    expect(resolveSignUpConfig({}, "admin")).toEqual({ enabled: false, defaultRoles: [] });
    expect(resolveSignUpConfig({ defaultRoles: ["member"] }, "admin")).toEqual({ enabled: false, defaultRoles: ["member"] });
    expect(resolveSignUpConfig({ enabled: true }, "admin")).toEqual({ enabled: true, defaultRoles: [] });
  });

  it("SU-1: a default role is a string of 1 to 64 characters; anything with a length is not one", () => {
    const longest = "r".repeat(64);
    expect(resolveSignUpConfig({ enabled: true, defaultRoles: [longest, "a"] }, "admin").defaultRoles).toEqual([longest, "a"]);
    for (const role of ["", "r".repeat(65), ["member"], { length: 6 }, 5, null]) {
      expect(() => resolveSignUpConfig({ defaultRoles: [role as string] }, "admin"), JSON.stringify(role)).toThrow(badRoles);
    }
  });

  it("AD-2: at most 50 default roles, as any account may hold: one more is refused when the service starts", () => {
    const fifty = Array.from({ length: 50 }, (_, index) => `role-${index}`);
    expect(resolveSignUpConfig({ defaultRoles: [...fifty, "role-0"] }, "admin").defaultRoles).toEqual(fifty);
    expect(() => resolveSignUpConfig({ defaultRoles: [...fifty, "role-50"] }, "admin")).toThrow(
      /^Portcullis configuration: signUp.defaultRoles must be at most 50 names; got 51/,
    );
  });
});
