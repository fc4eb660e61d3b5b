import { describe, expect, it } from "vitest";
import type { AuthMethod } from "../storage/types.js";
import { type ReauthenticationFacts, decideReauthentication, missingProofMessage } from "./policy.js";

type Row = [
  name: string,
  secondFactor: boolean,
  recent: AuthMethod[] | null,
  offered: AuthMethod[],
  decision: { outcome: "prove" } | { outcome: "missing"; first: boolean; second: boolean },
];

const prove = { outcome: "prove" } as const;
const missing = (first: boolean, second: boolean) => ({ outcome: "missing", first, second }) as const;

describe("STUP-3, ASVS 7.5.1, 6.4.3: a sensitive change needs every factor the account has", () => {
  const table: Row[] = [
    // An account without a second factor: the first factor, from the request or a recent sign-in.
    ["no second factor: the password", false, null, ["pwd"], prove],
    ["no second factor: a recent password sign-in", false, ["pwd"], [], prove],
    ["no second factor: a recent directory sign-in (ldap)", false, ["ldap"], [], prove],
    ["no second factor: a recent passkey sign-in without user verification", false, ["hwk"], [], prove],
    ["no second factor: a recent synced passkey", false, ["swk"], [], prove],
    ["no second factor: a recent provider sign-in", false, ["fed"], [], prove],
    ["no second factor: nothing at all", false, null, [], missing(true, false)],
    ["no second factor: an old sign-in is no proof", false, null, [], missing(true, false)],
    // An account with a second factor: both, each from the request or the recent sign-in.
    ["second factor: the password alone is refused (a phished password)", true, null, ["pwd"], missing(false, true)],
    ["second factor: a code alone is refused (a stolen session's)", true, null, ["otp"], missing(true, false)],
    ["second factor: the password and a code", true, null, ["pwd", "otp"], prove],
    ["second factor: a recent sign-in with both", true, ["pwd", "otp"], [], prove],
    ["second factor: a recent sign-in with a recovery code", true, ["pwd", "rc"], [], prove],
    ["second factor: a recent user-verified passkey is both", true, ["hwk", "user"], [], prove],
    ["second factor: a recent synced user-verified passkey is both", true, ["swk", "user"], [], prove],
    ["second factor: a recent passkey without user verification, then a code", true, ["hwk", "otp"], [], prove],
    ["second factor: a recent passkey without user verification alone is refused", true, ["hwk"], [], missing(false, true)],
    ["second factor: a recent sign-in whose amr lacks otp (TOTP enabled after it)", true, ["pwd"], [], missing(false, true)],
    ["second factor: ... with the password again still lacks otp", true, ["pwd"], ["pwd"], missing(false, true)],
    ["second factor: ... and a code in the request completes it", true, ["pwd"], ["otp"], prove],
    ["second factor: a recent provider sign-in alone is refused", true, ["fed"], [], missing(false, true)],
    ["second factor: a recent provider sign-in with a code", true, ["fed", "otp"], [], prove],
    ["second factor: nothing at all", true, null, [], missing(true, true)],
    ["second factor: an old two-factor sign-in is no proof", true, null, [], missing(true, true)],
  ];

  it.each(table)("STUP-3, ASVS 7.5.1: %s", (_name, secondFactor, recent, offered, decision) => {
    const facts: ReauthenticationFacts = { secondFactor, recent, offered };
    expect(decideReauthentication(facts)).toEqual(decision);
  });

  it("STUP-3, ASVS 7.5.1: what is missing is said as what to send", () => {
    expect(missingProofMessage({ outcome: "missing", first: true, second: false })).toBe(
      "Confirm it is you: send the current password, or re-authenticate first",
    );
    expect(missingProofMessage({ outcome: "missing", first: false, second: true })).toBe(
      "This account has a second factor: send a current TOTP code as well, or re-authenticate first",
    );
    expect(missingProofMessage({ outcome: "missing", first: true, second: true })).toBe(
      "Confirm it is you: send the current password and a current TOTP code, or re-authenticate first",
    );
  });
});
