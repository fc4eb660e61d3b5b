import { describe, expect, it } from "vitest";
import type { AuthMethod } from "../storage/types.js";
import { amrClaim, authTimeOf, factorsProven } from "./amr.js";

describe("STUP-1, ASVS 10.3.4: the amr claim in RFC 8176 values", () => {
  const table: [methods: AuthMethod[], claim: string[], factors: { first: boolean; second: boolean }][] = [
    [["pwd"], ["pwd"], { first: true, second: false }],
    [["ldap"], ["pwd"], { first: true, second: false }],
    [["pwd", "otp"], ["pwd", "otp", "mfa"], { first: true, second: true }],
    [["pwd", "rc"], ["pwd", "otp", "mfa"], { first: true, second: true }],
    [["ldap", "otp"], ["pwd", "otp", "mfa"], { first: true, second: true }],
    [["hwk"], ["hwk"], { first: true, second: false }],
    [["swk"], ["swk"], { first: true, second: false }],
    [["hwk", "user"], ["hwk", "user", "mfa"], { first: true, second: true }],
    [["swk", "user"], ["swk", "user", "mfa"], { first: true, second: true }],
    [["hwk", "otp"], ["hwk", "otp", "mfa"], { first: true, second: true }],
    [["fed"], ["fed"], { first: true, second: false }],
    [["fed", "otp"], ["fed", "otp", "mfa"], { first: true, second: true }],
    [["fed", "rc"], ["fed", "otp", "mfa"], { first: true, second: true }],
    [["fed", "mfa"], ["fed", "mfa"], { first: true, second: true }],
    [["fed", "pwd", "otp", "mfa"], ["fed", "pwd", "otp", "mfa"], { first: true, second: true }],
    [["fed", "hwk", "mfa", "otp"], ["fed", "hwk", "mfa", "otp"], { first: true, second: true }],
    [["otp"], ["otp"], { first: false, second: true }],
    [["pwd", "pwd", "ldap"], ["pwd"], { first: true, second: false }],
    [["otp", "rc"], ["otp"], { first: false, second: true }],
    [[], [], { first: false, second: false }],
  ];

  it.each(table)("STUP-1, ASVS 10.3.4: %j is amr %j", (methods, claim, factors) => {
    expect(amrClaim(methods)).toEqual(claim);
    expect(factorsProven(methods)).toEqual(factors);
  });

  it("STUP-1, ASVS 10.3.4: a method no release wrote (a store's own, or an object's key) is left out, never guessed at", () => {
    for (const unknown of ["sms", "toString", "constructor"]) {
      expect(amrClaim(["pwd", unknown] as AuthMethod[]), unknown).toEqual(["pwd"]);
    }
    expect(factorsProven(["toString", "sms"])).toEqual({ first: false, second: false });
  });

  it("STUP-5: a provider's asserted second factor (a stored mfa) is a second factor, named once", () => {
    expect(factorsProven(["mfa"])).toEqual({ first: false, second: true });
    expect(amrClaim(["mfa"])).toEqual(["mfa"]);
    expect(amrClaim(["fed", "mfa", "mfa"])).toEqual(["fed", "mfa"]);
  });

  it("PL-4: an email code or link is a first factor only, carried as email: with TOTP after it the session is mfa, alone never", () => {
    expect(factorsProven(["email"])).toEqual({ first: true, second: false });
    expect(amrClaim(["email"])).toEqual(["email"]);
    expect(amrClaim(["email", "otp"])).toEqual(["email", "otp", "mfa"]);
  });

  it("STUP-1, ASVS 10.3.4: a session's authTime, or its createdAt when a store wrote it before sessions had one", () => {
    expect(authTimeOf({ authTime: 2000, createdAt: 1000 })).toBe(2000);
    expect(authTimeOf({ authTime: 0, createdAt: 1000 })).toBe(0);
    expect(authTimeOf({ createdAt: 1000 } as { authTime: number; createdAt: number })).toBe(1000);
    expect(authTimeOf({ authTime: Number.NaN, createdAt: 1000 })).toBe(1000);
  });
});
