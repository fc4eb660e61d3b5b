import { describe, expect, it } from "vitest";
import { credentialRequirementOf, requireMachineAllowed } from "./credential-requirement.js";
import type { ApiKeyContext } from "./verify-api-key.js";

describe("credentialRequirementOf (requireAuth's scopes and credentials)", () => {
  it("refuses bad options at start-up with a TypeError, once per options object", () => {
    for (const options of [
      { scopes: "reports:read" },
      { scopes: ["has space"] },
      { scopes: [""] },
      { credentials: "session" },
      { credentials: "access_token", scopes: ["a"] },
      { credentials: "api_key", maxAge: "5m" },
      { credentials: "api_key", org: true },
      { credentials: "api_key", secondFactor: true },
      { credentials: "api_key", amr: ["pwd"] },
    ]) {
      expect(() => credentialRequirementOf(options as never), JSON.stringify(options)).toThrow(TypeError);
    }
    expect(credentialRequirementOf({})).toBeNull();
    expect(credentialRequirementOf({ credentials: "access_token" })).toBeNull();
    expect(credentialRequirementOf({ credentials: "api_key", secondFactor: false })).toEqual({
      accessTokens: false,
      apiKeys: true,
      serviceAccounts: false,
      scopes: [],
    });
    const options = { scopes: ["reports:read"] };
    expect(credentialRequirementOf(options)).toBe(credentialRequirementOf(options));
  });

  it("AK-2: a key passes with every scope asked and no sign-in asked; otherwise 40300", () => {
    const key: ApiKeyContext = {
      kind: "api_key",
      keyId: "k",
      userId: "u",
      roles: [],
      scopes: ["a", "b"],
      orgId: null,
      tokenVersion: 0,
    };
    const requirement = credentialRequirementOf({ scopes: ["a", "b"] });
    if (requirement === null) throw new Error("expected a requirement");
    expect(() => requireMachineAllowed(key, requirement, false)).not.toThrow();
    expect(() => requireMachineAllowed(key, requirement, true)).toThrow(expect.objectContaining({ code: 40300 }));
    const more = credentialRequirementOf({ scopes: ["a", "c"] });
    if (more === null) throw new Error("expected a requirement");
    expect(() => requireMachineAllowed(key, more, false)).toThrow(expect.objectContaining({ code: 40300 }));
  });
});
