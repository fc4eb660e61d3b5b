/**
 * Text a person reads and compares by eye (a passkey label, a username): every code point must
 * show. This module finds the ones that do not, or that change how the text around them reads.
 */

/** Characters that reorder the text around them (Unicode bidirectional controls, UAX #9). */
const textDirectionControl = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;

/** U+2028 and U+2029, which break a line wherever the text is shown. */
const lineOrParagraphSeparator = /[\p{Zl}\p{Zp}]/u;

/** Code points that draw nothing: format characters and the default-ignorable ones (zero-width, fillers, variation selectors, tags). */
const invisible = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/u;
const everyInvisible = new RegExp(invisible.source, "gu");

/**
 * An emoji sequence (UTS #51): a keycap, a subdivision flag (U+1F3F4 and tag characters), or
 * pictographs with their modifier or presentation selector, joined by U+200D. Inside one, the
 * joiner, the selectors and the tags are part of a picture that shows.
 */
const pictograph = String.raw`\p{Extended_Pictographic}(?:\p{Emoji_Modifier}|\uFE0E|\uFE0F)?`;
const emojiSequence = String.raw`[0-9#*]\uFE0F?\u20E3|\u{1F3F4}[\u{E0020}-\u{E007E}]+\u{E007F}|${pictograph}(?:\u200D${pictograph})*`;

/**
 * A zero-width non-joiner or joiner between two characters of one script whose letters join or
 * form conjuncts, where it changes the shapes drawn (Persian "می‌خواهم", Devanagari half forms),
 * so it shows (RFC 5892 appendix A.1 and A.2, the CONTEXTJ rules, allow them in much the same
 * places): Arabic, Syriac and N'Ko, and the Brahmic scripts of India and Sri Lanka.
 */
const visibleJoiner = [
  String.raw`[\p{Script=Arabic}\p{Script=Syriac}\p{Script=Nko}]`,
  String.raw`\p{Script=Devanagari}`,
  String.raw`\p{Script=Bengali}`,
  String.raw`\p{Script=Gurmukhi}`,
  String.raw`\p{Script=Gujarati}`,
  String.raw`\p{Script=Oriya}`,
  String.raw`\p{Script=Tamil}`,
  String.raw`\p{Script=Telugu}`,
  String.raw`\p{Script=Kannada}`,
  String.raw`\p{Script=Malayalam}`,
  String.raw`\p{Script=Sinhala}`,
].map((script) => String.raw`(?<=${script})(?:\u200C|\u200D)(?=${script})`);

/** Where a joiner, a selector or a tag is part of something that shows. */
const shownInContext = new RegExp([emojiSequence, ...visibleJoiner].join("|"), "gu");

/** `U+200B`: the code point as Unicode writes it. */
function codePointName(character: string): string {
  return `U+${(character.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, "0")}`;
}

/** What is wrong with one code point out of context, or null. */
function kindOf(character: string): string | null {
  if (textDirectionControl.test(character)) return "a text-direction control";
  if (lineOrParagraphSeparator.test(character)) return "a line or paragraph separator";
  if (/\p{Cc}/u.test(character)) return "a control character";
  if (/\p{Cs}/u.test(character)) return "a lone surrogate";
  if (/\p{Cn}/u.test(character)) return "an unassigned code point";
  if (invisible.test(character)) return "an invisible character";
  return null;
}

/**
 * Finds the first code point of `text` that does not show or that changes how the text reads,
 * so that two strings which look the same are not accepted as different ones:
 *
 * - text-direction controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069);
 * - line and paragraph separators (U+2028, U+2029) and control characters (C0, DEL, C1);
 * - lone surrogates, and code points unassigned in the Unicode version of the running Node.js
 *   (noncharacters included);
 * - format characters and default-ignorable code points: zero-width space, joiners, soft hyphen,
 *   word joiner, byte-order mark, Hangul fillers, variation selectors, tag characters.
 *
 * Joiners, selectors and tags are allowed where they are part of something that shows: inside
 * an emoji sequence (a ZWJ family, a keycap, a skin tone, the flag of Scotland), and a
 * zero-width joiner or non-joiner between two characters of a script whose letters join
 * (Arabic, Syriac, N'Ko, and the Brahmic scripts of India and Sri Lanka). Everything else a
 * font draws is allowed, white space included; normalise (NFC) and trim before calling this.
 *
 * @returns A description of the first such code point, such as `"U+200B, an invisible
 *   character"`, made to go in an error message (it names the code point, never the text); or
 *   null when every code point shows.
 * @example
 * ```ts
 * invisibleCharacterIn("Laptop"); // null
 * invisibleCharacterIn("Lap\u200Btop"); // "U+200B, an invisible character"
 * ```
 */
export function invisibleCharacterIn(text: string): string | null {
  // What shows in its context (inside an emoji sequence, a joiner within a joining script)
  // becomes U+FFFC, which shows anywhere.
  const shown = text.replace(shownInContext, (sequence) => sequence.replace(everyInvisible, "\uFFFC"));
  for (const character of shown) {
    const kind = kindOf(character);
    if (kind !== null) return `${codePointName(character)}, ${kind}`;
  }
  return null;
}
