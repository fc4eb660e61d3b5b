import type { DirectoryPolicy, RoleMapping } from "./policy.js";

/**
 * A DN in a form two spellings of the same name share (RFC 4514): attribute types and values
 * lower-cased, spaces around `=`, `,` and `+` dropped, escapes (`\,`, `\2C`) decoded, and the
 * parts of a multi-valued RDN sorted. Not a parser for hostile input: it never throws, and a
 * malformed DN simply normalises to something no group matches.
 */
export function normalizeDn(dn: string): string {
  const rdns: string[][] = [[]];
  let part = "";
  const endPart = () => {
    (rdns.at(-1) as string[]).push(normalizeAva(part));
    part = "";
  };
  for (let index = 0; index < dn.length; index += 1) {
    const character = dn[index] as string;
    if (character === "\\" && index + 1 < dn.length) {
      part += character + (dn[index + 1] as string);
      index += 1;
    } else if (character === ",") {
      endPart();
      rdns.push([]);
    } else if (character === "+") {
      endPart();
    } else {
      part += character;
    }
  }
  endPart();
  return JSON.stringify(rdns.map((rdn) => rdn.sort()));
}

/** One `type=value` of a DN, with its type and value normalised. */
function normalizeAva(ava: string): string {
  const equals = ava.indexOf("=");
  if (equals === -1) return ava.trim().toLowerCase();
  return `${ava.slice(0, equals).trim().toLowerCase()}=${unescapeValue(ava.slice(equals + 1))}`;
}

/** Decodes `\XX` hex pairs (as UTF-8) and `\c` escapes, trims unescaped outer spaces, lower-cases. */
function unescapeValue(value: string): string {
  const bytes: number[] = [];
  let trailingSpaces = 0;
  let started = false;
  for (let index = 0; index < value.length; index += 1) {
    const character = value[index] as string;
    const hex = value.slice(index + 1, index + 3);
    if (character === "\\" && /^[0-9a-fA-F]{2}$/.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      index += 2;
      trailingSpaces = 0;
    } else if (character === "\\" && index + 1 < value.length) {
      bytes.push(...Buffer.from(value[index + 1] as string));
      index += 1;
      trailingSpaces = 0;
    } else if (character === " " && !started) {
      continue;
    } else {
      bytes.push(...Buffer.from(character));
      trailingSpaces = character === " " ? trailingSpaces + 1 : 0;
    }
    started = true;
  }
  return Buffer.from(bytes.slice(0, bytes.length - trailingSpaces))
    .toString("utf8")
    .toLowerCase();
}

/** The roles a directory user gets, and the rule that gave them; null when the user is denied. */
export interface DirectoryRoles {
  /** The mapping that matched (the lowest priority number among the user's groups), or null for the fallback role. */
  matchedRule: RoleMapping | null;
  roles: string[];
}

/**
 * Maps a user's groups to roles (LDAP-5): of the mappings whose group the user is in, the one
 * with the lowest priority number (the first listed among equals) gives its role; in no mapped
 * group, the fallback role; with no fallback role, null: the user is denied.
 */
export function rolesForGroups(
  policy: Pick<DirectoryPolicy, "mappings" | "fallbackRole">,
  groups: string[],
): DirectoryRoles | null {
  const memberOf = new Set(groups.map(normalizeDn));
  let matched: RoleMapping | null = null;
  for (const rule of policy.mappings) {
    if (memberOf.has(normalizeDn(rule.group)) && (matched === null || rule.priority < matched.priority)) matched = rule;
  }
  if (matched) return { matchedRule: matched, roles: [matched.role] };
  return policy.fallbackRole === null ? null : { matchedRule: null, roles: [policy.fallbackRole] };
}
