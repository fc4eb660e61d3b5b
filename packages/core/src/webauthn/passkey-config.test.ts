import { describe, expect, it } from "vitest";
import { createAuth } from "../auth.js";
import { audience, encryptionKey, issuer, signingSecret } from "../flows/fixtures.test-support.js";
import { memoryStorage } from "../storage/memory.js";
import { type PasskeyConfig, resolvePasskeyConfig } from "./passkey-config.js";

const good: PasskeyConfig = { rpId: "example.com", rpName: "Example", origins: ["https://example.com"] };

/** The message of the TypeError `resolvePasskeyConfig` throws; fails when it accepts or throws anything else. */
function refusal(config: unknown): string {
  try {
    resolvePasskeyConfig(config as PasskeyConfig);
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    return (error as TypeError).message;
  }
  throw new Error(`accepted ${JSON.stringify(config)}`);
}

const authWith = (passkeys: PasskeyConfig | undefined) =>
  createAuth({
    issuer,
    audience,
    secrets: { signing: signingSecret, encryption: encryptionKey },
    storage: memoryStorage(),
    passkeys,
  });

describe("resolvePasskeyConfig", () => {
  it("no passkeys configured gives null", () => {
    expect(resolvePasskeyConfig(undefined)).toBeNull();
  });

  it("WA-1, WA-3, WA-5, RL-7: the defaults are user verification required, counter reject, ceremonies of 5 minutes, 10 registrations per user per ceremony", () => {
    expect(resolvePasskeyConfig(good)).toEqual({
      rpId: "example.com",
      rpName: "Example",
      origins: ["https://example.com"],
      userVerification: "required",
      counterPolicy: "reject",
      ceremonyTtlSeconds: 300,
      registrationCeremonyLimit: 10,
      reauthenticationWindowSeconds: undefined,
      offerAfterSignIn: true,
      offerDeclinedForSeconds: 90 * 86_400,
    });
  });

  it("WA-2: accepts an rpId that is the origin's host, a parent domain of it, or localhost over http", () => {
    const accepted: PasskeyConfig[] = [
      good,
      { ...good, origins: ["https://login.example.com"] },
      { ...good, origins: ["https://example.com", "https://a.b.example.com", "https://example.com:8443"] },
      { ...good, rpId: "login.example.com", origins: ["https://login.example.com"] },
      { ...good, rpId: "localhost", origins: ["http://localhost:3000"] },
      { ...good, rpId: "localhost", origins: ["http://localhost", "https://localhost:8443"] },
      { ...good, rpId: "xn--bcher-kva.example", origins: ["https://xn--bcher-kva.example"] },
    ];
    for (const config of accepted) {
      expect(resolvePasskeyConfig(config)?.origins, JSON.stringify(config)).toEqual(config.origins);
    }
  });

  it("keeps the settings it is given", () => {
    const resolved = resolvePasskeyConfig({
      ...good,
      userVerification: "preferred",
      counterPolicy: "allow-stale",
      ceremonyTtl: "10m",
      registrationCeremonyLimit: 1,
      reauthenticationWindow: "1h",
    });
    expect(resolved).toMatchObject({
      userVerification: "preferred",
      counterPolicy: "allow-stale",
      ceremonyTtlSeconds: 600,
      registrationCeremonyLimit: 1,
      reauthenticationWindowSeconds: 3600,
    });
    expect(resolvePasskeyConfig({ ...good, ceremonyTtl: 45 })?.ceremonyTtlSeconds).toBe(45);
  });

  it("WA-6: reauthenticationWindow false asks every time (0)", () => {
    expect(resolvePasskeyConfig({ ...good, reauthenticationWindow: false })?.reauthenticationWindowSeconds).toBe(0);
  });

  it("WA-2: refuses an origin over http unless its host is localhost", () => {
    for (const origin of ["http://example.com", "http://login.example.com", "http://localhost.example.com"]) {
      expect(refusal({ ...good, origins: [origin] }), origin).toMatch(
        /^Portcullis configuration: passkeys\.origins\[0\] .*https/,
      );
    }
    expect(refusal({ ...good, rpId: "localhost", origins: ["ftp://localhost"] })).toContain("passkeys.origins[0]");
  });

  it("WA-2: refuses an origin with a path, a trailing slash, a query, credentials, a default port or upper case", () => {
    const origins = [
      "https://example.com/",
      "https://example.com/login",
      "https://example.com?next=/",
      "https://example.com#top",
      "https://user:pass@example.com",
      "https://example.com:443",
      "https://Example.com",
      " https://example.com",
    ];
    for (const origin of origins) {
      expect(refusal({ ...good, origins: [origin] }), origin).toContain("passkeys.origins[0] must be an origin alone");
    }
  });

  it("WA-2: refuses an origin that is not a URL at all", () => {
    for (const origin of ["example.com", "", 42, null, { href: "https://example.com" }]) {
      expect(refusal({ ...good, origins: [origin] }), String(origin)).toContain("passkeys.origins[0]");
    }
    expect(refusal({ ...good, origins: ["https://example.com", "nope"] })).toContain("passkeys.origins[1]");
  });

  it("WA-2: refuses an rpId that is not the origin's host or a parent domain, on the dot boundary", () => {
    const cases: [rpId: string, origin: string][] = [
      ["example.com", "https://evil-example.com"],
      ["example.com", "https://notexample.com"],
      ["example.com", "https://example.com.evil.com"],
      ["example.com", "https://example.org"],
      ["login.example.com", "https://example.com"],
      ["login.example.com", "https://other.example.com"],
      ["localhost", "https://localhost.evil.com"],
      ["localhost", "https://evillocalhost"],
    ];
    for (const [rpId, origin] of cases) {
      const message = refusal({ ...good, rpId, origins: [origin] });
      expect(message, `${rpId} ${origin}`).toContain(`passkeys.rpId "${rpId}" must be the host of origins[0]`);
    }
    // One good origin does not excuse a bad one.
    expect(refusal({ ...good, origins: ["https://example.com", "https://evil-example.com"] })).toContain("origins[1]");
  });

  it("WA-2: refuses an rpId that is an IP address, a single label, upper case, a URL or not a domain name", () => {
    const rpIds: unknown[] = [
      "127.0.0.1",
      "10.0.0.1",
      "::1",
      "[::1]",
      "com",
      "example",
      "Example.com",
      "EXAMPLE.COM",
      "https://example.com",
      "example.com/",
      "example.com:443",
      "example.com.",
      ".example.com",
      "-example.com",
      "exa_mple.com",
      "ex ample.com",
      "",
      undefined,
      42,
    ];
    for (const rpId of rpIds) {
      const origins = typeof rpId === "string" && /^[a-z0-9.]+$/.test(rpId) ? [`https://${rpId}`] : good.origins;
      expect(refusal({ ...good, rpId, origins }), String(rpId)).toMatch(/^Portcullis configuration: passkeys\.rpId must be/);
    }
  });

  it("WA-2: refuses empty or missing origins", () => {
    for (const origins of [[], undefined, "https://example.com", null]) {
      expect(refusal({ ...good, origins }), JSON.stringify(origins)).toContain("passkeys.origins must list");
    }
  });

  it("refuses a missing or blank rpName", () => {
    for (const rpName of [undefined, "", "   ", 42]) {
      expect(refusal({ ...good, rpName }), String(rpName)).toContain("passkeys.rpName");
    }
  });

  it("WA-3, WA-5: refuses a userVerification or counterPolicy it does not know", () => {
    for (const userVerification of ["discouraged", "Required", "", true]) {
      expect(refusal({ ...good, userVerification }), String(userVerification)).toContain("passkeys.userVerification");
    }
    for (const counterPolicy of ["allow", "Reject", "", false]) {
      expect(refusal({ ...good, counterPolicy }), String(counterPolicy)).toContain("passkeys.counterPolicy");
    }
  });

  it("WA-1: refuses a ceremonyTtl over 10 minutes, or not a duration", () => {
    for (const ceremonyTtl of ["11m", 601, "1h", "1d"]) {
      expect(refusal({ ...good, ceremonyTtl }), String(ceremonyTtl)).toContain("passkeys.ceremonyTtl must be at most 10m");
    }
    for (const ceremonyTtl of [0, -1, 1.5, "5 minutes", ""]) {
      expect(refusal({ ...good, ceremonyTtl }), String(ceremonyTtl)).toContain("passkeys.ceremonyTtl");
    }
  });

  it("RL-7: refuses a registrationCeremonyLimit that is not a whole number of at least 1", () => {
    for (const registrationCeremonyLimit of [0, -1, 1.5, "10", Number.NaN, null]) {
      expect(refusal({ ...good, registrationCeremonyLimit }), String(registrationCeremonyLimit)).toContain(
        "passkeys.registrationCeremonyLimit must be a whole number of at least 1",
      );
    }
  });

  it("WA-6: refuses a reauthenticationWindow over 1 hour, or not a duration", () => {
    for (const reauthenticationWindow of ["61m", 3601, "2h"]) {
      expect(refusal({ ...good, reauthenticationWindow }), String(reauthenticationWindow)).toContain(
        "passkeys.reauthenticationWindow must be at most 1h",
      );
    }
    for (const reauthenticationWindow of [true, 0, "soon"]) {
      expect(refusal({ ...good, reauthenticationWindow }), String(reauthenticationWindow)).toContain(
        "passkeys.reauthenticationWindow",
      );
    }
  });

  it("refuses a configuration that is not an object", () => {
    for (const config of [null, "example.com", 42]) {
      expect(refusal(config), String(config)).toContain("passkeys must be { rpId, rpName, origins }");
    }
  });
});

describe("createAuth with passkeys", () => {
  it("passkeys undefined gives config.passkeys null", () => {
    expect(authWith(undefined).config.passkeys).toBeNull();
  });

  it("a good passkeys setting is resolved into config.passkeys", () => {
    expect(authWith(good).config.passkeys).toEqual(resolvePasskeyConfig(good));
  });

  it("a bad passkeys setting stops createAuth with a TypeError naming the setting", () => {
    expect(() => authWith({ ...good, rpId: "com" })).toThrow(TypeError);
    expect(() => authWith({ ...good, origins: ["https://evil-example.com"] })).toThrow(/passkeys\.rpId/);
  });
});
