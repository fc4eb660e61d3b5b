import type { TokenSet } from "../tokens/issue-tokens.js";

/**
 * A login completes, asks for the second factor with a temporary token (40102), or, for a user
 * who must have a second factor and has none, answers an enrolment token that can only enrol one
 * (40105; STUP-4). What every first factor ends in (`completeFirstFactor`): password, directory,
 * passkey, OAuth, sign-up.
 */
export type LoginResult =
  | { status: "authenticated"; tokens: TokenSet }
  | { status: "totp_required"; tempToken: string }
  | { status: "enrolment_required"; tempToken: string };
