import type { TokenSet } from "../tokens/issue-tokens.js";

/**
 * A login either completes, or asks for the second factor with a temporary token. What every
 * first factor ends in (`completeFirstFactor`): password, directory, passkey, OAuth.
 */
export type LoginResult = { status: "authenticated"; tokens: TokenSet } | { status: "totp_required"; tempToken: string };
