/** A duration: whole seconds, or a string such as `"90s"`, `"15m"`, `"12h"`, `"30d"`. */
export type Duration = number | `${number}${"s" | "m" | "h" | "d"}`;

/** Throws the `TypeError` every configuration mistake is reported with. */
export function fail(message: string): never {
  throw new TypeError(`Portcullis configuration: ${message}`);
}

const unitSeconds = { s: 1, m: 60, h: 3600, d: 86400 } as const;

/** Parses a {@link Duration} into seconds, or throws naming `what` and the accepted forms. */
export function durationSeconds(value: Duration, what: string): number {
  if (typeof value === "number") {
    if (Number.isInteger(value) && value > 0) return value;
  } else if (typeof value === "string") {
    const match = /^([1-9][0-9]{0,8})([smhd])$/.exec(value);
    if (match) return Number(match[1]) * unitSeconds[match[2] as keyof typeof unitSeconds];
  }
  return fail(
    `${what} must be a positive whole number of seconds or a string like "15m", "12h" or "30d"; got ${JSON.stringify(value)}`,
  );
}

/** A whole number of at least `minimum`, `fallback` when absent; otherwise throws naming `what`. */
export function positiveInteger(value: unknown, what: string, fallback: number, minimum = 1): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || (value as number) < minimum) {
    fail(`${what} must be a whole number of at least ${minimum}; got ${JSON.stringify(value)}`);
  }
  return value as number;
}

/** Every key of an options interface, each marked `true`: written with `satisfies` so the list cannot fall behind the type. */
export type OptionNames<T> = Record<keyof T, true>;

/** The edit distance of two names: insertions, deletions and substitutions (a swap of neighbours counts two). */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) (rows[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i] as number[];
    const above = rows[i - 1] as number[];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (above[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      row[j] = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, substitution);
    }
  }
  return (rows[a.length] as number[])[b.length] as number;
}

/** The known name closest to `name`, if one is close enough to be what was meant. */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const sameLetters = known.find((candidate) => candidate.toLowerCase() === lower);
  if (sameLetters) return sameLetters;
  const completed = lower.length >= 4 ? known.find((candidate) => candidate.toLowerCase().startsWith(lower)) : undefined;
  if (completed) return completed;
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance <= Math.max(2, Math.floor(candidate.length / 3)) && (!best || distance < best.distance)) {
      best = { name: candidate, distance };
    }
  }
  return best?.name;
}

/**
 * Refuses an options object holding a key its interface does not have: a typo (`passkey:` for
 * `passkeys:`) would otherwise leave a feature silently off. The message names the closest known
 * option, or lists them. `where` is the path of the object, such as `"passkeys."`, or `""`.
 */
export function refuseUnknownOptions(value: unknown, known: Record<string, true>, where: string): void {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return;
  for (const key of Object.keys(value)) {
    if (Object.hasOwn(known, key)) continue;
    const names = Object.keys(known);
    const suggestion = closestName(key, names);
    fail(
      suggestion === undefined
        ? `${where}${key} is not an option; the options ${where === "" ? "" : `of ${where.slice(0, -1)} `}are ${names.join(", ")}`
        : `${where}${key} is not an option; did you mean ${where}${suggestion}?`,
    );
  }
}

/** True when a URL setting was written without its scheme (`example.com`, `localhost:3000`), which `new URL` misreads or refuses. */
export function lacksScheme(value: unknown): boolean {
  return typeof value === "string" && !value.includes("://");
}
