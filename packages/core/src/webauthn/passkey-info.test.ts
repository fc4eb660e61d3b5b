import { describe, expect, it } from "vitest";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { PasskeyRecord } from "../storage/types.js";
import { maxLabelLength, readLabel, toPasskeyInfo } from "./passkey-info.js";

/** The business code `readLabel` throws for a value, or the label it reads. */
function codeOf(value: unknown): number | string {
  try {
    return readLabel(value);
  } catch (error) {
    if (error instanceof AuthError) return error.code;
    throw error;
  }
}

const record: PasskeyRecord = {
  id: "Y3JlZGVudGlhbC1pZA",
  userId: "user-1",
  publicKey: "pQECAyYgASFYIA",
  counter: 7,
  transports: ["usb", "nfc"],
  label: "YubiKey",
  backupEligible: true,
  backupState: false,
  createdAt: 1_000,
  lastUsedAt: 2_000,
};

describe("readLabel", () => {
  it("WA-6: a label is trimmed and NFC-normalised", () => {
    expect(readLabel("  Laptop\t")).toBe("Laptop");
    const decomposed = "Cafe\u0301 key";
    const label = readLabel(decomposed);
    expect(label).toBe("Caf\u00e9 key");
    expect(label).toBe(label.normalize("NFC"));
    expect(label).toHaveLength(8);
  });

  it("WA-6: the 64-character limit counts characters after NFC, not UTF-16 units or decomposed marks", () => {
    expect(maxLabelLength).toBe(64);
    expect(readLabel("a".repeat(64))).toBe("a".repeat(64));
    expect(codeOf("a".repeat(65))).toBe(ErrorCode.ValidationFailed);
    // 64 astral characters are 128 UTF-16 units.
    const astral = "\u{1F511}".repeat(64);
    expect(astral).toHaveLength(128);
    expect(readLabel(astral)).toBe(astral);
    expect(codeOf("\u{1F511}".repeat(65))).toBe(ErrorCode.ValidationFailed);
    // 64 "e" + combining acute are 128 code points before NFC, 64 characters after.
    expect(readLabel("e\u0301".repeat(64))).toBe("\u00e9".repeat(64));
    // Surrounding white space does not count.
    expect(readLabel(`  ${"b".repeat(64)}  `)).toBe("b".repeat(64));
  });

  it("WA-6: control characters and lone surrogates are refused with 42200", () => {
    for (const bad of ["Lap\u0000top", "Lap\ntop", "Lap\u001btop", "Lap\u007ftop", "Lap\u0085top", "Lap\u009ftop"]) {
      expect(codeOf(bad)).toBe(ErrorCode.ValidationFailed);
    }
    for (const lone of ["\ud800", "Key \udfff", "\udc00\ud800", `${"a".repeat(10)}\ud83d`]) {
      expect(codeOf(lone)).toBe(ErrorCode.ValidationFailed);
    }
    // A well-formed surrogate pair is one character, not a lone surrogate.
    expect(readLabel("Key \ud83d\udd11")).toBe("Key \u{1F511}");
  });

  it("WA-6: text-direction controls, which could make one label read as another, are refused with 42200", () => {
    for (const bad of ["Laptop\u202Epot", "\u202AKey", "Key\u202C", "\u2066Key\u2069", "Key\u2068"]) {
      expect(codeOf(bad), JSON.stringify(bad)).toBe(ErrorCode.ValidationFailed);
    }
    // A zero-width joiner belongs to emoji sequences and stays allowed.
    expect(readLabel("Family \u{1F468}\u200D\u{1F469}")).toBe("Family \u{1F468}\u200D\u{1F469}");
  });

  it("WA-6: bidi marks, zero-width and other invisible characters, line separators and unassigned code points are refused with 42200", () => {
    const invisible = [
      "Lap\u200Etop", // left-to-right mark
      "Lap\u200Ftop", // right-to-left mark
      "Lap\u061Ctop", // Arabic letter mark
      "Lap\u200Btop", // zero-width space
      "Lap\u200Dtop", // zero-width joiner outside an emoji sequence
      "Lap\u2060top", // word joiner
      "Lap\uFEFFtop", // byte-order mark inside the label (trim only takes it off the ends)
      "Lap\u00ADtop", // soft hyphen
      "\u3164", // Hangul filler, a label that looks empty
      "Lap\uFE0Ftop", // variation selector on a letter
      "Lap\u{E0041}top", // tag character
      "one\u2028two", // line separator
      "one\u2029two", // paragraph separator
      "Lap\u0378top", // unassigned
      "Lap\uFFFFtop", // noncharacter
    ];
    for (const bad of invisible) expect(codeOf(bad), JSON.stringify(bad)).toBe(ErrorCode.ValidationFailed);
  });

  it("WA-6: the refusal of an invisible character names its code point, never the label", () => {
    try {
      readLabel("secret\u200Blabel");
      throw new Error("expected a refusal");
    } catch (error) {
      expect(error).toMatchObject({
        code: ErrorCode.ValidationFailed,
        message: "label must be 1 to 64 characters of visible text; U+200B, an invisible character, is not",
      });
      expect((error as AuthError).message).not.toContain("secret");
    }
  });

  it("WA-6: emoji sequences, and joiners inside words of a joining script, stay allowed", () => {
    for (const label of [
      "\u{1F468}\u200D\u{1F469}\u200D\u{1F467} family laptop",
      "\u2764\uFE0F key",
      "\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F} office",
      "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
    ]) {
      expect(readLabel(label)).toBe(label);
    }
  });

  it("WA-6: an empty or white-space label is refused; a missing one is 40001 and a non-string 40002", () => {
    expect(codeOf("   ")).toBe(ErrorCode.ValidationFailed);
    expect(codeOf("\t\n ")).toBe(ErrorCode.ValidationFailed);
    expect(codeOf("\u3000")).toBe(ErrorCode.ValidationFailed);
    expect(codeOf("")).toBe(ErrorCode.MissingParameter);
    expect(codeOf(undefined)).toBe(ErrorCode.MissingParameter);
    expect(codeOf(null)).toBe(ErrorCode.MissingParameter);
    for (const wrongType of [42, true, ["Laptop"], { $ne: "" }, { toString: () => "Laptop" }]) {
      expect(codeOf(wrongType)).toBe(ErrorCode.MalformedParameter);
    }
  });

  it("WA-6: the refusal message names the rule, never the label", () => {
    try {
      readLabel(`secret-${"x".repeat(70)}`);
      throw new Error("expected a refusal");
    } catch (error) {
      expect(error).toBeInstanceOf(AuthError);
      expect((error as AuthError).message).toMatch(/1 to 64 characters/);
      expect((error as AuthError).message).not.toContain("secret-");
    }
  });
});

describe("toPasskeyInfo", () => {
  it("WA-6: the owner's view has exactly the public fields, never the key, the counter or the user id", () => {
    const info = toPasskeyInfo(record);
    expect(info).toEqual({
      id: record.id,
      label: "YubiKey",
      transports: ["usb", "nfc"],
      createdAt: 1_000,
      lastUsedAt: 2_000,
      backupEligible: true,
      backupState: false,
    });
    expect(Object.keys(info).sort()).toEqual(
      ["backupEligible", "backupState", "createdAt", "id", "label", "lastUsedAt", "transports"].sort(),
    );
    expect(JSON.stringify(info)).not.toContain(record.publicKey);
  });

  it("WA-6: transports are copied, so the view and the record do not share a list", () => {
    const source: PasskeyRecord = { ...record, transports: ["internal"] };
    const info = toPasskeyInfo(source);
    expect(info.transports).toEqual(["internal"]);
    expect(info.transports).not.toBe(source.transports);
    info.transports.push("hybrid");
    expect(source.transports).toEqual(["internal"]);
    source.transports.push("usb");
    expect(info.transports).toEqual(["internal", "hybrid"]);
  });

  it("PW-5: a missing label is 40001 naming it", () => {
    try {
      readLabel(undefined);
      throw new Error("accepted");
    } catch (error) {
      expect(error).toMatchObject({ code: ErrorCode.MissingParameter, message: "label is required" });
    }
  });
});
