/**
 * Compares two strings code point by code point, the order of their UTF-8 bytes: what
 * PostgreSQL's `"C"` collation, MariaDB's `utf8mb4_nopad_bin` and Redis's `ZRANGE … BYLEX` sort
 * by. JavaScript's `<` compares UTF-16 code units instead, which puts a character beyond U+FFFF
 * (a surrogate pair) before U+E000–U+FFFF. {@link UserStore.list} pages in this order.
 *
 * @returns a negative number when `a` sorts first, a positive one when `b` does, 0 when equal.
 *
 * @example
 * ```ts
 * ["\u{1F600}", "\uFF21"].sort(compareCodePoints); // ["\uFF21", "\u{1F600}"]: U+FF21 < U+1F600
 * ```
 */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index += 1) {
    const left = a.charCodeAt(index);
    const right = b.charCodeAt(index);
    if (left !== right) return inCodePointOrder(left) - inCodePointOrder(right);
  }
  return a.length - b.length;
}

/** A UTF-16 code unit moved so that surrogates (code points above U+FFFF) sort after U+E000–U+FFFF. */
function inCodePointOrder(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  return unit >= 0xe000 ? unit - 0x800 : unit;
}

const maxCodePoint = 0x10ffff;

/**
 * The least string that sorts after every string starting with `prefix`, in
 * {@link compareCodePoints} order: `prefix` with its last code point raised by one (past the
 * surrogates), after dropping trailing U+10FFFF. So a prefix search is the range
 * `prefix <= key < upper`, which an index on the key answers; null when there is no upper
 * bound (an empty prefix, or one made only of U+10FFFF).
 *
 * @example
 * ```ts
 * prefixUpperBound("ab%"); // "ab&"
 * prefixUpperBound("a\u{10FFFF}"); // "b"
 * ```
 */
export function prefixUpperBound(prefix: string): string | null {
  const codePoints = Array.from(prefix, (character) => character.codePointAt(0) as number);
  while (codePoints.length > 0 && codePoints.at(-1) === maxCodePoint) codePoints.pop();
  const last = codePoints.pop();
  if (last === undefined) return null;
  codePoints.push(last === 0xd7ff ? 0xe000 : last + 1);
  return String.fromCodePoint(...codePoints);
}
