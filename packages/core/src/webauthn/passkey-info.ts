import { readVisibleText } from "../flows/input.js";
import type { PasskeyRecord } from "../storage/types.js";

/** A passkey as its owner sees it: never the public key or the counter. Times are epoch milliseconds. */
export interface PasskeyInfo {
  /** The credential id, base64url. */
  id: string;
  label: string;
  /** How the browser reaches the authenticator: `internal`, `usb`, `nfc`, `ble`, `hybrid`. */
  transports: string[];
  createdAt: number;
  lastUsedAt: number | null;
  /** Whether the passkey may be synced to other devices. */
  backupEligible: boolean;
  /** Whether it was synced (backed up) at its last use. */
  backupState: boolean;
}

/** The owner's view of a stored passkey. */
export function toPasskeyInfo(passkey: PasskeyRecord): PasskeyInfo {
  const { id, label, transports, createdAt, lastUsedAt, backupEligible, backupState } = passkey;
  return { id, label, transports: [...transports], createdAt, lastUsedAt, backupEligible, backupState };
}

/** The longest label, in characters. */
export const maxLabelLength = 64;

/**
 * Reads a passkey label: trimmed and NFC-normalised, 1 to 64 characters, every one of which
 * shows ({@link invisibleCharacterIn}): no control characters, text-direction controls (U+202A–U+202E,
 * U+2066–U+2069, U+200E, U+200F, U+061C), zero-width or other default-ignorable characters,
 * line or paragraph separators, or unassigned code points, any of which could make one label read
 * as another. Emoji sequences stay allowed.
 *
 * @throws {AuthError} 40001 missing, 40002 not a string, 42200 empty, too long or with a character that does not show.
 */
export function readLabel(value: unknown): string {
  return readVisibleText(value, "label", maxLabelLength);
}
