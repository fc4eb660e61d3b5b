import { type CBORType, encodeCBOR } from "@levischuck/tiny-cbor";

/**
 * A value {@link encodeCbor} writes: integers (safe integers, or bigints from -2^64 to 2^64 - 1),
 * booleans, text, byte strings, arrays, and maps whose keys are integers or text.
 */
export type CborValue =
  | number
  | bigint
  | boolean
  | string
  | Uint8Array
  | readonly CborValue[]
  | ReadonlyMap<number | string, CborValue>;

const largestArgument = 0xffff_ffff_ffff_ffffn;

/** The same value as tiny-cbor's own types, checked on the way: what it would write differently than asked is refused. */
function checked(value: CborValue): CBORType {
  if (typeof value === "number") {
    // tiny-cbor writes any other number as a float, which no authenticator structure holds.
    if (!Number.isSafeInteger(value)) throw new RangeError(`CBOR integers must be safe integers: ${value}`);
    return value;
  }
  if (typeof value === "bigint") {
    if (value > largestArgument || value < -1n - largestArgument) throw new RangeError(`CBOR integer out of range: ${value}`);
    return value;
  }
  if (typeof value === "boolean" || typeof value === "string" || value instanceof Uint8Array) return value;
  if (Array.isArray(value)) return value.map(checked);
  if (value instanceof Map) {
    const map = new Map<number | string, CBORType>();
    for (const [key, item] of value as ReadonlyMap<unknown, CborValue>) {
      if (typeof key === "number" && !Number.isSafeInteger(key))
        throw new RangeError(`CBOR map keys must be safe integers: ${key}`);
      if (typeof key !== "number" && typeof key !== "string")
        throw new TypeError(`CBOR map keys must be integers or text: ${String(key)}`);
      map.set(key, checked(item));
    }
    return map;
  }
  throw new TypeError(`Not a CBOR value this encoder writes: ${String(value)}`);
}

/**
 * Encodes `value` as CBOR (RFC 8949) with `@levischuck/tiny-cbor`, the encoder of the CBOR
 * library `@simplewebauthn/server` decodes with: the shortest argument for every head, and map
 * entries in insertion order, never sorted, so a test decides the exact bytes (COSE keys list
 * `kty` and `alg` first, as authenticators do). Floats, `null`, tags and indefinite lengths are
 * refused, since no structure an authenticator writes holds them.
 *
 * @throws RangeError for an integer outside what CBOR's heads hold, or a number that is not an integer.
 * @throws TypeError for anything else that is not a {@link CborValue}.
 *
 * @example
 * ```ts
 * encodeCbor(new Map([["fmt", "none"], ["attStmt", new Map()], ["authData", authenticatorData]]));
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc8949#section-3
 */
export function encodeCbor(value: CborValue): Uint8Array {
  return encodeCBOR(checked(value));
}
