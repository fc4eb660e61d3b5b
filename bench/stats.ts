// Medians, spreads and the printed table.

/** The median of some samples and their range. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

/** The median, minimum and maximum of a non-empty list. */
export function spreadOf(values: readonly number[]): Spread {
  if (values.length === 0) throw new RangeError("spreadOf needs at least one value");
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  return { median, min: sorted[0] as number, max: sorted[sorted.length - 1] as number };
}

/** The ratio of each pair of samples taken in the same round: `cases[i] / baselines[i]`. */
export function ratiosByRound(cases: readonly number[], baselines: readonly number[]): number[] {
  if (cases.length !== baselines.length) throw new RangeError("a ratio needs one baseline sample per case sample");
  return cases.map((value, round) => value / (baselines[round] as number));
}

/** One row of the final table: a figure against its baseline, or the reason it was skipped. */
export interface Row {
  figure: string;
  baseline: string;
  ratio?: Spread;
  /** The raw medians, with units: `"12,345 vs 23,456 req/s"`. */
  raw: string;
  skipped?: string;
}

/** A number as the table prints it: thousands separated, `digits` decimals. */
export function formatNumber(value: number, digits = 0): string {
  return value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function formatRatio(ratio: Spread): string {
  const digits = ratio.median >= 10 ? 1 : ratio.median >= 0.1 ? 3 : 4;
  const format = (value: number) => value.toFixed(digits);
  return `${format(ratio.median)} (${format(ratio.min)}–${format(ratio.max)})`;
}

/** The rows as a plain-text table with the columns figure | baseline | ratio median (min–max) | raw medians. */
export function formatTable(rows: readonly Row[]): string {
  const header = ["figure", "baseline", "ratio median (min–max)", "raw medians"];
  const cells = rows.map((row) => [
    row.figure,
    row.baseline,
    row.ratio ? formatRatio(row.ratio) : "skipped",
    row.skipped ?? row.raw,
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((line) => (line[column] as string).length)));
  const line = (values: string[]) =>
    values
      .map((value, column) => value.padEnd(widths[column] as number))
      .join(" | ")
      .trimEnd();
  return [line(header), widths.map((width) => "-".repeat(width)).join("-|-"), ...cells.map(line)].join("\n");
}
