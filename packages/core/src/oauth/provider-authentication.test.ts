import { describe, expect, it } from "vitest";
import type { AuthMethod } from "../storage/types.js";
import { resolvedProvider as providerWith } from "./oauth.test-support.js";
import {
  type ProviderAuthentication,
  assertsSecondFactor,
  notStated,
  providerSignIn,
  readProviderAuthentication,
  signedInAfresh,
} from "./provider-authentication.js";

const now = Date.parse("2030-01-01T00:00:00Z");
const nowSeconds = now / 1000;
const stated = (changes: Partial<ProviderAuthentication>): ProviderAuthentication => ({ ...notStated, ...changes });

describe("STUP-5: what an ID token says of the sign-in", () => {
  it("STUP-5, ASVS 6.8.4: acr, amr and auth_time are read as stated; none stated is the minimum: nothing known", () => {
    expect(readProviderAuthentication({ sub: "x" }, now)).toEqual({ authTime: undefined, amr: [], acr: undefined });
    expect(
      readProviderAuthentication({ auth_time: nowSeconds - 3600, amr: ["pwd", "otp"], acr: "urn:example:mfa" }, now),
    ).toEqual({ authTime: nowSeconds - 3600, amr: ["pwd", "otp"], acr: "urn:example:mfa" });
    expect(readProviderAuthentication({ auth_time: nowSeconds + 30, amr: [] }, now).authTime).toBe(nowSeconds + 30);
    expect(readProviderAuthentication({ auth_time: 0 }, now).authTime, "the epoch is a time, if an old one").toBe(0);
  });

  const malformed: [what: string, claims: Record<string, unknown>][] = [
    ["auth_time more than 30 s ahead", { auth_time: nowSeconds + 31 }],
    ["auth_time a string", { auth_time: String(nowSeconds) }],
    ["auth_time not finite", { auth_time: Number.POSITIVE_INFINITY }],
    ["auth_time negative", { auth_time: -1 }],
    ["amr a string", { amr: "pwd" }],
    ["amr holding a number", { amr: ["pwd", 1] }],
    ["amr an object", { amr: { 0: "pwd" } }],
    ["acr a number", { acr: 2 }],
    ["acr a list", { acr: ["urn:example:mfa"] }],
  ];

  it.each(malformed)("STUP-5, ASVS 6.8.4: an ID token whose %s is refused", (_what, claims) => {
    expect(() => readProviderAuthentication(claims, now)).toThrow(/auth_time|amr|acr/);
  });

  it("STUP-5, ASVS 7.6.1: a re-authentication's sign-in is afresh only when auth_time is stated and at most 30 s old", () => {
    expect(signedInAfresh(stated({ authTime: nowSeconds }), now)).toBe(true);
    expect(signedInAfresh(stated({ authTime: nowSeconds - 30 }), now)).toBe(true);
    expect(signedInAfresh(stated({ authTime: nowSeconds + 30 }), now)).toBe(true);
    expect(signedInAfresh(stated({ authTime: nowSeconds - 31 }), now)).toBe(false);
    expect(signedInAfresh(stated({ authTime: nowSeconds - 3600 }), now)).toBe(false);
    expect(signedInAfresh(notStated, now)).toBe(false);
  });
});

describe("STUP-5: which second factor a provider asserts", () => {
  const listed = providerWith({ trustedForSecondFactor: true, secondFactorAcrValues: ["urn:example:mfa", "2"] });
  const table: [amr: string[], acr: string | undefined, asserted: boolean][] = [
    [[], undefined, false],
    [["mfa"], undefined, true],
    [["pwd", "otp"], undefined, true],
    [["pwd", "hwk"], undefined, true],
    [["hwk", "pin"], undefined, true],
    [["swk", "face"], undefined, true],
    [["pwd", "fpt"], undefined, true],
    [["pwd", "sms"], undefined, true],
    [["sc", "pin"], undefined, true],
    [["pwd"], undefined, false],
    [["otp"], undefined, false],
    [["hwk"], undefined, false],
    [["pwd", "kba"], undefined, false],
    [["otp", "sms"], undefined, false],
    [["hwk", "swk"], undefined, false],
    [["pwd", "user"], undefined, false],
    [["pwd", "mca"], undefined, false],
    [["pwd", "rba"], undefined, false],
    [["pwd", "geo"], undefined, false],
    [["pwd", "rsa"], undefined, false],
    [["pwd", "toString"], undefined, false],
    [["fed", "pwd"], undefined, false],
    [[], "urn:example:mfa", true],
    [[], "2", true],
    [["pwd"], "urn:example:mfa", true],
    [[], "urn:example:MFA", false],
    [[], "1", false],
  ];

  it.each(table)("STUP-5, ASVS 6.8.4: amr %j with acr %j asserts a second factor: %s", (amr, acr, asserted) => {
    expect(assertsSecondFactor(listed, stated({ amr, acr }))).toBe(asserted);
  });

  it("STUP-5: an acr counts only when the provider lists it", () => {
    expect(assertsSecondFactor(providerWith({ trustedForSecondFactor: true }), stated({ acr: "urn:example:mfa" }))).toBe(false);
  });
});

describe("STUP-5: what a provider's sign-in proves for the session", () => {
  const untrusted = providerWith();
  const trusted = providerWith({ trustedForSecondFactor: true, secondFactorAcrValues: ["urn:example:mfa"] });
  const unsafe = providerWith({ trustedForSecondFactor: true, unsafeTrustForSecondFactorWithoutAssertion: true });
  const table: [name: string, provider: typeof trusted, amr: string[], acr: string | undefined, methods: AuthMethod[]][] = [
    ["untrusted, nothing asserted", untrusted, [], undefined, ["fed"]],
    ["untrusted, two factors asserted", untrusted, ["pwd", "otp"], undefined, ["fed"]],
    ["untrusted, mfa asserted", untrusted, ["mfa"], undefined, ["fed"]],
    ["trusted, nothing asserted", trusted, [], undefined, ["fed"]],
    ["trusted, one factor", trusted, ["pwd"], undefined, ["fed"]],
    ["trusted, one factor twice", trusted, ["otp", "sms"], undefined, ["fed"]],
    ["trusted, pwd and otp", trusted, ["pwd", "otp"], undefined, ["fed", "pwd", "otp", "mfa"]],
    ["trusted, mfa alone", trusted, ["mfa"], undefined, ["fed", "mfa"]],
    ["trusted, repeated values", trusted, ["pwd", "otp", "pwd", "mfa", "otp"], undefined, ["fed", "pwd", "otp", "mfa"]],
    ["trusted, a key and its PIN", trusted, ["hwk", "pin"], undefined, ["fed", "hwk", "mfa"]],
    ["trusted, a synced key and a face", trusted, ["swk", "face"], undefined, ["fed", "swk", "mfa"]],
    ["trusted, values Portcullis has no name for", trusted, ["sms", "pin"], undefined, ["fed", "mfa"]],
    ["trusted, a listed acr", trusted, [], "urn:example:mfa", ["fed", "mfa"]],
    ["trusted, a listed acr with pwd", trusted, ["pwd"], "urn:example:mfa", ["fed", "pwd", "mfa"]],
    ["trusted, an unlisted acr", trusted, ["pwd"], "urn:example:pwd", ["fed"]],
    ["unsafe, nothing asserted", unsafe, [], undefined, ["fed", "mfa"]],
    ["unsafe, one factor", unsafe, ["pwd"], undefined, ["fed", "pwd", "mfa"]],
    ["unsafe, two factors", unsafe, ["pwd", "otp"], undefined, ["fed", "pwd", "otp", "mfa"]],
  ];

  it.each(table)("STUP-5, ASVS 6.8.4: %s", (_name, provider, amr, acr, methods) => {
    const signIn = providerSignIn(provider, stated({ amr, acr }), now);
    expect(signIn.methods).toEqual(methods);
    expect(signIn.multiFactor).toBe(methods.includes("mfa"));
  });

  it("STUP-5, ASVS 7.6.1: the sign-in's time is the provider's auth_time, in milliseconds, never after now; unstated, none (the sign-in's own)", () => {
    expect(providerSignIn(untrusted, stated({ authTime: nowSeconds - 3600 }), now).authTime).toBe(now - 3_600_000);
    expect(providerSignIn(trusted, stated({ authTime: nowSeconds + 20 }), now).authTime).toBe(now);
    expect(providerSignIn(trusted, stated({ authTime: 0 }), now).authTime).toBe(0);
    expect(providerSignIn(trusted, notStated, now).authTime).toBeUndefined();
  });
});
