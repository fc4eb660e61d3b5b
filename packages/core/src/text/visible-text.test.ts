import { describe, expect, it } from "vitest";
import { invisibleCharacterIn } from "./visible-text.js";

/** `U+200B`, written out here as the messages must name it. */
const nameOf = (character: string) => `U+${(character.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, "0")}`;

describe("invisibleCharacterIn", () => {
  it("text that shows is null: letters of any script, digits, punctuation, spaces, marks, emoji", () => {
    for (const text of [
      "Laptop",
      "Work laptop (2024)",
      "Caf\u00e9 cl\u00e9",
      "e\u0301",
      "\u0645\u0641\u062a\u0627\u062d",
      "\u05de\u05e4\u05ea\u05d7",
      "\u9375",
      "\u0915\u0941\u0902\u091c\u0940",
      "\u0e01\u0e38\u0e0d\u0e41\u0e08",
      "no\u00a0break",
      "ideographic\u3000space",
      "\u{1F511}",
      "\u{F8FF}",
      "",
    ]) {
      expect(invisibleCharacterIn(text), JSON.stringify(text)).toBeNull();
    }
  });

  it("text-direction controls are named as such, wherever they stand", () => {
    const controls = ["\u061C", "\u200E", "\u200F", "\u202A", "\u202B", "\u202C", "\u202D", "\u202E"];
    for (const control of [...controls, "\u2066", "\u2067", "\u2068", "\u2069"]) {
      const name = nameOf(control);
      expect(invisibleCharacterIn(`Lap${control}top`)).toBe(`${name}, a text-direction control`);
      expect(invisibleCharacterIn(control)).toBe(`${name}, a text-direction control`);
    }
    // Neighbours of the controls' ranges are ordinary characters.
    expect(invisibleCharacterIn("\u061B\u2010\u202F")).toBeNull();
    expect(invisibleCharacterIn("\u200D")).toBe("U+200D, an invisible character");
    expect(invisibleCharacterIn("\u2029")).toBe("U+2029, a line or paragraph separator");
    expect(invisibleCharacterIn("\u2065")).toBe("U+2065, an unassigned code point");
    expect(invisibleCharacterIn("\u206A")).toBe("U+206A, an invisible character");
  });

  it("line and paragraph separators and control characters are refused", () => {
    expect(invisibleCharacterIn("one\u2028two")).toBe("U+2028, a line or paragraph separator");
    expect(invisibleCharacterIn("one\u2029two")).toBe("U+2029, a line or paragraph separator");
    expect(invisibleCharacterIn("a\u0000")).toBe("U+0000, a control character");
    expect(invisibleCharacterIn("a\nb")).toBe("U+000A, a control character");
    expect(invisibleCharacterIn("a\tb")).toBe("U+0009, a control character");
    expect(invisibleCharacterIn("a\u007f")).toBe("U+007F, a control character");
    expect(invisibleCharacterIn("a\u0085")).toBe("U+0085, a control character");
    expect(invisibleCharacterIn("a\u009f")).toBe("U+009F, a control character");
  });

  it("lone surrogates and unassigned code points (noncharacters included) are refused", () => {
    expect(invisibleCharacterIn("key \ud800")).toBe("U+D800, a lone surrogate");
    expect(invisibleCharacterIn("\udfff key")).toBe("U+DFFF, a lone surrogate");
    expect(invisibleCharacterIn("\u0378")).toBe("U+0378, an unassigned code point");
    expect(invisibleCharacterIn("a\uFFFF")).toBe("U+FFFF, an unassigned code point");
    expect(invisibleCharacterIn("a\uFDD0")).toBe("U+FDD0, an unassigned code point");
    expect(invisibleCharacterIn("\u{10FFFF}")).toBe("U+10FFFF, an unassigned code point");
    // Unassigned, although Unicode reserves it for pictographs: no emoji sequence lets it pass.
    expect(invisibleCharacterIn("\u{1FFFD}")).toBe("U+1FFFD, an unassigned code point");
    expect(invisibleCharacterIn("\u{1FFFD}\u200D\u{1F525}")).toBe("U+1FFFD, an unassigned code point");
  });

  it("zero-width, format and other default-ignorable code points are refused", () => {
    const invisible = [
      "\u00AD", // soft hyphen
      "\u034F", // combining grapheme joiner
      "\u115F", // Hangul choseong filler
      "\u180E", // Mongolian vowel separator
      "\u200B", // zero-width space
      "\u200C", // zero-width non-joiner
      "\u200D", // zero-width joiner
      "\u2060", // word joiner
      "\u2064", // invisible plus
      "\u3164", // Hangul filler
      "\uFE00", // variation selector 1
      "\uFE0F", // variation selector 16
      "\uFEFF", // byte-order mark
      "\uFFA0", // half-width Hangul filler
      "\uFFF9", // interlinear annotation anchor
      "\u0600", // Arabic number sign, a format character
      "\u{1D173}", // musical symbol begin beam
      "\u{E0001}", // language tag
      "\u{E0041}", // tag letter A
      "\u{E0100}", // variation selector 17
    ];
    for (const character of invisible) {
      const name = nameOf(character);
      expect(invisibleCharacterIn(`ab${character}cd`), name).toBe(`${name}, an invisible character`);
    }
  });

  it("the first offending code point is the one named, whatever its kind", () => {
    expect(invisibleCharacterIn("a\u200Bb\u0007")).toBe("U+200B, an invisible character");
    expect(invisibleCharacterIn("a\u0007b\u200B")).toBe("U+0007, a control character");
    expect(invisibleCharacterIn("a\u202Eb\u2028")).toBe("U+202E, a text-direction control");
    expect(invisibleCharacterIn("\u{1F468}\u200D\u{1F469} \u200B")).toBe("U+200B, an invisible character");
  });

  it("emoji sequences show, with their joiners, selectors, modifiers and tags", () => {
    for (const emoji of [
      "\u{1F468}\u200D\u{1F469}", // man, woman (not RGI, still a picture)
      "\u{1F468}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466}", // family
      "\u{1F3F3}\uFE0F\u200D\u{1F308}", // rainbow flag
      "\u{1F469}\u{1F3FD}\u200D\u{1F4BB}", // woman technologist, medium skin tone
      "\u2764\uFE0F", // red heart
      "\u2764\uFE0E", // heart, text presentation
      "\u{1F44D}\u{1F3FD}", // thumbs up, medium skin tone
      "1\uFE0F\u20E3", // keycap 1
      "#\u20E3", // keycap # without the selector
      "*\uFE0F\u20E3",
      "\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}", // Scotland
      "\u{1F1EB}\u{1F1F7}", // France
    ]) {
      expect(invisibleCharacterIn(`Key ${emoji} 2`), JSON.stringify(emoji)).toBeNull();
    }
  });

  it("joiners, selectors and tags outside an emoji sequence are refused", () => {
    expect(invisibleCharacterIn("\u{1F468}\u200D")).toBe("U+200D, an invisible character");
    expect(invisibleCharacterIn("\u200D\u{1F468}")).toBe("U+200D, an invisible character");
    expect(invisibleCharacterIn("\u{1F468}\u200D\u200D\u{1F469}")).toBe("U+200D, an invisible character");
    expect(invisibleCharacterIn("ali\u200Dce")).toBe("U+200D, an invisible character");
    expect(invisibleCharacterIn("1\u200D2")).toBe("U+200D, an invisible character");
    expect(invisibleCharacterIn("a\uFE0F")).toBe("U+FE0F, an invisible character");
    expect(invisibleCharacterIn("\uFE0F\u2764")).toBe("U+FE0F, an invisible character");
    expect(invisibleCharacterIn("1\uFE0F")).toBe("U+FE0F, an invisible character");
    expect(invisibleCharacterIn("\u2764\uFE0F\uFE0F")).toBe("U+FE0F, an invisible character");
    expect(invisibleCharacterIn("a\u{E0067}\u{E007F}")).toBe("U+E0067, an invisible character");
    // A tag sequence needs the black flag, at least one tag and the cancel tag.
    expect(invisibleCharacterIn("\u{1F3F3}\u{E0067}\u{E007F}")).toBe("U+E0067, an invisible character");
    expect(invisibleCharacterIn("\u{1F3F4}\u{E007F}")).toBe("U+E007F, an invisible character");
    expect(invisibleCharacterIn("\u{1F3F4}\u{E0067}\u{E0062}")).toBe("U+E0067, an invisible character");
    expect(invisibleCharacterIn("\u{1F3F4}\u{E007F}\u{E0067}\u{E007F}")).toBe("U+E007F, an invisible character");
    expect(invisibleCharacterIn("a\u20E3\uFE0F")).toBe("U+FE0F, an invisible character");
    expect(invisibleCharacterIn("a\uFE0F\u20E3")).toBe("U+FE0F, an invisible character");
  });

  it("a zero-width joiner or non-joiner shows between two characters of a joining script, not elsewhere", () => {
    const persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"; // می‌خواهم
    const devanagari = "\u0915\u094d\u200d\u0937"; // क्‍ष
    const samples = [
      persian,
      devanagari,
      "\u0915\u094d\u200c\u0937",
      "\u0710\u200d\u0712", // Syriac
      "\u07ca\u200c\u07cb", // N'Ko
      "\u0995\u09cd\u200d\u09b7", // Bengali
      "\u0a15\u0a4d\u200d\u0a38", // Gurmukhi
      "\u0a95\u0acd\u200d\u0ab7", // Gujarati
      "\u0b15\u0b4d\u200d\u0b37", // Oriya
      "\u0b95\u0bcd\u200d\u0bb7", // Tamil
      "\u0c15\u0c4d\u200d\u0c37", // Telugu
      "\u0c95\u0ccd\u200d\u0cb7", // Kannada
      "\u0d15\u0d4d\u200d\u0d37", // Malayalam
      "\u0d9a\u0dca\u200d\u0dba", // Sinhala
    ];
    for (const text of samples) expect(invisibleCharacterIn(text), JSON.stringify(text)).toBeNull();
    // At either end, across scripts, or between Latin letters it draws nothing.
    expect(invisibleCharacterIn("\u200c\u0645")).toBe("U+200C, an invisible character");
    expect(invisibleCharacterIn("\u0645\u200c")).toBe("U+200C, an invisible character");
    expect(invisibleCharacterIn("\u0645\u200ca")).toBe("U+200C, an invisible character");
    expect(invisibleCharacterIn("a\u200c\u0645")).toBe("U+200C, an invisible character");
    expect(invisibleCharacterIn("\u0915\u200d\u0645")).toBe("U+200D, an invisible character");
    expect(invisibleCharacterIn("\u0d15\u200d\u0c37")).toBe("U+200D, an invisible character");
    expect(invisibleCharacterIn("a\u200cb")).toBe("U+200C, an invisible character");
    // Only the joiners: a zero-width space between Arabic letters is still invisible.
    expect(invisibleCharacterIn("\u0645\u200b\u062e")).toBe("U+200B, an invisible character");
    expect(invisibleCharacterIn("\u0645\u2060\u062e")).toBe("U+2060, an invisible character");
  });

  it("code points are named in upper-case hexadecimal, at least four digits", () => {
    expect(invisibleCharacterIn("\u0001")).toBe("U+0001, a control character");
    expect(invisibleCharacterIn("\u{E01EF}")).toBe("U+E01EF, an invisible character");
    expect(invisibleCharacterIn("\u{10FFFE}")).toBe("U+10FFFE, an unassigned code point");
  });
});
