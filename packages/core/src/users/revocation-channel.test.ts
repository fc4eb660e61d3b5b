import { describe, expect, it } from "vitest";
import { type Revocation, decodeRevocation, encodeRevocation, maxRevocationMessageLength } from "./revocation-channel.js";

/** The text of a message: version 1 and `fields`. */
const message = (fields: Record<string, unknown>) => JSON.stringify({ v: 1, ...fields });

describe("decodeRevocation", () => {
  it("reads back each kind of revocation encodeRevocation writes", () => {
    const revocations: Revocation[] = [
      { kind: "session", sessionId: "s-1" },
      { kind: "user_sessions", userId: "u-1", keptSessionId: null },
      { kind: "user_sessions", userId: "u-1", keptSessionId: "s-2" },
      { kind: "token_version", userId: "u-1" },
      { kind: "all" },
    ];
    for (const revocation of revocations) expect(decodeRevocation(encodeRevocation(revocation))).toEqual(revocation);
  });

  it(`reads a message of exactly ${maxRevocationMessageLength} characters and ignores one a character longer`, () => {
    const text = encodeRevocation({ kind: "session", sessionId: "s-1" });
    const longest = text + " ".repeat(maxRevocationMessageLength - text.length);
    expect(longest).toHaveLength(maxRevocationMessageLength);
    expect(decodeRevocation(longest)).toEqual({ kind: "session", sessionId: "s-1" });
    expect(decodeRevocation(`${longest} `)).toBeNull();
  });

  it("an id is a non-empty string: an empty or mistyped session id, user id or kept session id makes no revocation", () => {
    for (const fields of [
      { kind: "session", sessionId: "" },
      { kind: "session", sessionId: 7 },
      { kind: "session" },
      { kind: "user_sessions", userId: "", keptSessionId: null },
      { kind: "user_sessions", userId: "u-1", keptSessionId: "" },
      { kind: "user_sessions", userId: "u-1" },
      { kind: "user_sessions", userId: "u-1", keptSessionId: 7 },
      { kind: "token_version", userId: "" },
      { kind: "token_version", userId: ["u-1"] },
    ]) {
      expect(decodeRevocation(message(fields)), JSON.stringify(fields)).toBeNull();
    }
  });

  it("anything but a version-1 object is no revocation, and nothing makes it throw", () => {
    for (const text of ["", "not json", "null", "true", "7", '"all"', "[]", '[{"v":1,"kind":"all"}]', '{"kind":"all"}']) {
      expect(decodeRevocation(text), text).toBeNull();
    }
    expect(decodeRevocation(JSON.stringify({ v: 2, kind: "all" }))).toBeNull();
    expect(decodeRevocation(JSON.stringify({ v: "1", kind: "all" }))).toBeNull();
    expect(decodeRevocation(message({ kind: "everything" }))).toBeNull();
    for (const value of [undefined, null, 42, { v: 1, kind: "all" }]) expect(decodeRevocation(value)).toBeNull();
  });
});
