/** A search filter parsed from its RFC 4515 text, values as the bytes they stand for. */
export type FilterNode =
  | { type: "and" | "or"; filters: FilterNode[] }
  | { type: "not"; filter: FilterNode }
  | { type: "equal" | "greaterOrEqual" | "lessOrEqual" | "approx"; attribute: string; value: Buffer }
  | { type: "present"; attribute: string }
  | { type: "substrings"; attribute: string; initial: Buffer | null; any: Buffer[]; final: Buffer | null }
  | { type: "extensible"; attribute: string | null; rule: string | null; dnAttributes: boolean; value: Buffer };

const attributeDescription = /^[A-Za-z0-9][A-Za-z0-9.;-]*$/;
const matchingRule = /^[A-Za-z0-9][A-Za-z0-9.-]*$/;

/** Why a filter text is not one filter of RFC 4515: never says more than where. */
function malformed(at: number): Error {
  return new Error(`malformed LDAP filter at character ${at}`);
}

/** The bytes an RFC 4515 assertion value stands for: UTF-8 of its characters, `\xx` as one byte. */
function valueBytes(text: string, start: number): Buffer {
  const bytes: number[] = [];
  for (let index = 0; index < text.length; index++) {
    const character = text[index] as string;
    if (character === "\\") {
      const hex = text.slice(index + 1, index + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) throw malformed(start + index);
      bytes.push(Number.parseInt(hex, 16));
      index += 2;
    } else if (character === "(" || character === "\u0000") {
      throw malformed(start + index);
    } else {
      bytes.push(...Buffer.from(character, "utf8"));
    }
  }
  return Buffer.from(bytes);
}

function item(text: string, start: number): FilterNode {
  const extensible = text.indexOf(":=");
  if (extensible !== -1) {
    const parts = text.slice(0, extensible).split(":");
    const attribute = parts.shift() as string;
    const dnAttributes = parts[0]?.toLowerCase() === "dn";
    if (dnAttributes) parts.shift();
    const rule = parts.shift() ?? null;
    if (parts.length > 0 || (attribute === "" && rule === null)) throw malformed(start);
    if (attribute !== "" && !attributeDescription.test(attribute)) throw malformed(start);
    if (rule !== null && !matchingRule.test(rule)) throw malformed(start);
    const value = valueBytes(text.slice(extensible + 2), start + extensible + 2);
    return { type: "extensible", attribute: attribute === "" ? null : attribute, rule, dnAttributes, value };
  }
  const equals = text.indexOf("=");
  if (equals <= 0) throw malformed(start);
  const operator = text[equals - 1] as string;
  const kinds = { "~": "approx", ">": "greaterOrEqual", "<": "lessOrEqual" } as const;
  const kind = kinds[operator as keyof typeof kinds];
  const attribute = text.slice(0, kind === undefined ? equals : equals - 1);
  if (!attributeDescription.test(attribute)) throw malformed(start);
  const raw = text.slice(equals + 1);
  const valueStart = start + equals + 1;
  if (kind !== undefined) {
    if (raw.includes("*")) throw malformed(valueStart);
    return { type: kind, attribute, value: valueBytes(raw, valueStart) };
  }
  if (raw === "*") return { type: "present", attribute };
  if (!raw.includes("*")) return { type: "equal", attribute, value: valueBytes(raw, valueStart) };
  const pieces = raw.split("*");
  const bytes = pieces.map((piece) => valueBytes(piece, valueStart));
  const initial = bytes.shift() as Buffer;
  const final = bytes.pop() as Buffer;
  if (bytes.some((middle) => middle.length === 0)) throw malformed(valueStart);
  return {
    type: "substrings",
    attribute,
    initial: initial.length > 0 ? initial : null,
    any: bytes,
    final: final.length > 0 ? final : null,
  };
}

/** Parses the filter that starts at `start` (an opening parenthesis); returns it and where it ends. */
function parseAt(text: string, start: number): { node: FilterNode; end: number } {
  if (text[start] !== "(") throw malformed(start);
  const operator = text[start + 1];
  if (operator === "&" || operator === "|") {
    const filters: FilterNode[] = [];
    let at = start + 2;
    while (text[at] === "(") {
      const parsed = parseAt(text, at);
      filters.push(parsed.node);
      at = parsed.end;
    }
    if (text[at] !== ")") throw malformed(at);
    return { node: { type: operator === "&" ? "and" : "or", filters }, end: at + 1 };
  }
  if (operator === "!") {
    const parsed = parseAt(text, start + 2);
    if (text[parsed.end] !== ")") throw malformed(parsed.end);
    return { node: { type: "not", filter: parsed.node }, end: parsed.end + 1 };
  }
  const close = text.indexOf(")", start);
  if (close === -1) throw malformed(start);
  return { node: item(text.slice(start + 1, close), start + 1), end: close + 1 };
}

/**
 * Parses an LDAP search filter in its text form (RFC 4515), `\xx` escapes turned into the bytes
 * they stand for. Values can hold no unescaped parenthesis, so an escaped user value stays one value.
 *
 * @throws Error when the text is not exactly one well-formed filter.
 * @see https://www.rfc-editor.org/rfc/rfc4515#section-3
 */
export function parseFilter(text: string): FilterNode {
  const { node, end } = parseAt(text, 0);
  if (end !== text.length) throw malformed(end);
  return node;
}

/** A BER element: tag, definite length, contents. */
function element(tag: number, contents: Buffer): Buffer {
  const length = contents.length;
  if (length < 0x80) return Buffer.concat([Buffer.from([tag, length]), contents]);
  const lengthBytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) lengthBytes.unshift(rest % 256);
  return Buffer.concat([Buffer.from([tag, 0x80 | lengthBytes.length, ...lengthBytes]), contents]);
}

const octets = (tag: number, value: string | Buffer) => element(tag, Buffer.from(value));

const assertionTags = { equal: 0xa3, greaterOrEqual: 0xa5, lessOrEqual: 0xa6, approx: 0xa8 } as const;

/**
 * Encodes a parsed filter as the `Filter` of a SearchRequest (RFC 4511 §4.5.1, BER), values as
 * the exact bytes they stand for.
 *
 * @see https://www.rfc-editor.org/rfc/rfc4511#section-4.5.1
 */
export function encodeFilter(node: FilterNode): Buffer {
  switch (node.type) {
    case "and":
    case "or":
      return element(node.type === "and" ? 0xa0 : 0xa1, Buffer.concat(node.filters.map(encodeFilter)));
    case "not":
      return element(0xa2, encodeFilter(node.filter));
    case "present":
      return octets(0x87, node.attribute);
    case "substrings": {
      const parts = [
        ...(node.initial ? [octets(0x80, node.initial)] : []),
        ...node.any.map((middle) => octets(0x81, middle)),
        ...(node.final ? [octets(0x82, node.final)] : []),
      ];
      return element(0xa4, Buffer.concat([octets(0x04, node.attribute), element(0x30, Buffer.concat(parts))]));
    }
    case "extensible":
      return element(
        0xa9,
        Buffer.concat([
          ...(node.rule === null ? [] : [octets(0x81, node.rule)]),
          ...(node.attribute === null ? [] : [octets(0x82, node.attribute)]),
          octets(0x83, node.value),
          ...(node.dnAttributes ? [element(0x84, Buffer.from([0xff]))] : []),
        ]),
      );
    default:
      return element(assertionTags[node.type], Buffer.concat([octets(0x04, node.attribute), octets(0x04, node.value)]));
  }
}
