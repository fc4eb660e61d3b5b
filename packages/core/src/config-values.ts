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
  if (typeof value !== "number" || !Number.isInteger(value) || value < minimum) {
    fail(`${what} must be a whole number of at least ${minimum}; got ${JSON.stringify(value)}`);
  }
  return value;
}
