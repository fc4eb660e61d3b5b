import { randomBytes } from "node:crypto";
import { createAuth, revokeAllSessions } from "@portcullis/core";
import type { KyselyStorage } from "./kysely-storage.js";

/** Where `portcullis sessions revoke-all` writes, and how it asks at a terminal. */
export interface RevokeAllOutput {
  out(line: string): void;
  err(line: string): void;
  /** Asks the operator `question` and answers what they typed; absent when there is no terminal to ask on. */
  ask?(question: string): Promise<string>;
}

/** What the operator is asked before every session ends, when `--yes` was not given. */
export const revokeAllQuestion = 'This ends every session of every user of this database. Type "yes" to go on: ';

/**
 * Whether `portcullis sessions revoke-all` may go on, checked before the database is opened:
 * null when `--yes` was given or the operator typed "yes" at the terminal; otherwise the exit
 * code and the line to print (2 with no terminal to ask on, 1 for any other answer).
 */
export async function revokeAllRefusal(
  confirmed: boolean,
  output: RevokeAllOutput,
): Promise<{ code: number; message: string } | null> {
  if (confirmed) return null;
  if (!output.ask) {
    return {
      code: 2,
      message: "sessions revoke-all ends every session of every user: add --yes to confirm (there is no terminal to ask on)",
    };
  }
  const answer = await output.ask(revokeAllQuestion);
  return answer.trim() === "yes" ? null : { code: 1, message: "not confirmed: no session was revoked" };
}

/**
 * `portcullis sessions revoke-all`, once confirmed: ends every session of every user of `storage`
 * with `revokeAllSessions` (STUP-6) and prints how many. No secret is needed: nothing is signed
 * or opened. Returns the exit code: 0 when done, 1 when the storage failed.
 */
export async function runRevokeAll(storage: KyselyStorage, output: RevokeAllOutput): Promise<number> {
  try {
    const auth = createAuth({
      storage,
      issuer: "https://portcullis-cli.invalid",
      audience: "portcullis-cli",
      secrets: { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("hex") },
      sweepInterval: false,
    });
    const { ended } = await revokeAllSessions(auth);
    output.out(
      `${ended} ${ended === 1 ? "session" : "sessions"} revoked: every refresh token is refused now, every access token at its next check (within tokenStateCacheSeconds on each instance: this command tells no revocation channel)`,
    );
    return 0;
  } catch (error) {
    output.err(`revoke-all failed: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
