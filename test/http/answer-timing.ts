/**
 * Timing of public answers that must not tell accounts apart (PR-1, PL-3), by EN-2's method: from
 * a Node process of its own, as a client on another machine sees them (a client in the server's
 * process would also wait for the work the server does after answering), medians compared.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect } from "vitest";

/** What {@link timeAnswersFromAnotherProcess} sends: the body of the known account, and the body of an unknown one, `%s` replaced by a label of its own. */
export interface TimedBodies {
  url: string;
  samples: number;
  known: Record<string, string>;
  unknown: Record<string, string>;
}

/**
 * Posts `known` and `unknown` bodies to `url` from a Node process of its own: ten warm-up pairs
 * (the unknown body labelled `warm-up-<n>`), then `samples` pairs (labelled `nobody-<n>`), each kind
 * first every other round, so a burst of load on a shared machine weighs on both alike. Answers
 * the milliseconds of each, and every distinct answer body seen.
 */
export async function timeAnswersFromAnotherProcess({
  url,
  samples,
  known,
  unknown,
}: TimedBodies): Promise<{ known: number[]; unknown: number[]; bodies: string[] }> {
  const client = `
    const { TIMED_URL: url, SAMPLES, KNOWN_BODY, UNKNOWN_BODY } = process.env;
    const bodies = new Set();
    const time = async (body) => {
      const started = performance.now();
      const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
      const text = await response.text();
      const elapsed = performance.now() - started;
      bodies.add(text);
      return elapsed;
    };
    const unknown = (label) => UNKNOWN_BODY.replaceAll("%s", label);
    for (let round = 0; round < 10; round += 1) { await time(unknown("warm-up-" + round)); await time(KNOWN_BODY); }
    const knownTimes = [];
    const unknownTimes = [];
    for (let sample = 0; sample < Number(SAMPLES); sample += 1) {
      if (sample % 2 === 0) { unknownTimes.push(await time(unknown("nobody-" + sample))); knownTimes.push(await time(KNOWN_BODY)); }
      else { knownTimes.push(await time(KNOWN_BODY)); unknownTimes.push(await time(unknown("nobody-" + sample))); }
    }
    process.stdout.write(JSON.stringify({ known: knownTimes, unknown: unknownTimes, bodies: [...bodies] }));
  `;
  const env = {
    ...process.env,
    TIMED_URL: url,
    SAMPLES: String(samples),
    KNOWN_BODY: JSON.stringify(known),
    UNKNOWN_BODY: JSON.stringify(unknown),
  };
  const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", client], { env });
  return JSON.parse(stdout);
}

/** The median of some times. */
export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/**
 * EN-2's bound: the known account's median within 0.5 to 2 times the unknown one's, in at least
 * one of `attempts` measurements (3). A burst of load on a busy machine can skew one measurement
 * of answers a few milliseconds long; an answer that tells accounts apart does so every time, and
 * the failure shows every measurement's medians.
 */
export async function expectSameTime(
  measure: () => Promise<{ known: number[]; unknown: number[] }>,
  attempts = 3,
): Promise<void> {
  const seen: string[] = [];
  for (let attempt = 1; attempt <= attempts; attempt += 1) {
    const { known, unknown } = await measure();
    const ratio = median(known) / median(unknown);
    if (ratio > 0.5 && ratio < 2) return;
    seen.push(`known ${median(known).toFixed(2)} ms, unknown ${median(unknown).toFixed(2)} ms`);
  }
  expect.fail(`the medians are not within 0.5 to 2 of each other in any of ${attempts} measurements: ${seen.join("; ")}`);
}
