import type { Auth } from "../auth.js";
import { keyedTag } from "../crypto/keyed-tag.js";
import type { UserRecord } from "../storage/types.js";

/**
 * A stamp of the user's password hash: its keyed tag (the first 16 bytes, base64url, of its
 * HMAC-SHA256 under a key derived from the encryption key), of the empty string when the account
 * has no password. A pending login and a reset link keep the stamp of the password they began
 * under, so a password change voids them without raising the token version (TMP-4, SE-4, PR-2);
 * the stamp tells nothing of the hash.
 */
export function passwordStamp(auth: Auth, user: UserRecord): string {
  return keyedTag(auth.secretBox, "portcullis password stamp v1", user.passwordHash ?? "");
}
