import type { Auth } from "../auth.js";
import type { SealedValue } from "../key-rotation/sealed-value.js";
import type { EncryptedSecret, TotpRecord } from "../storage/types.js";
import { matchTotpStep } from "./totp.js";

const associatedData = (userId: string) => `portcullis:totp:${userId}`;

/** Encrypts a TOTP secret for storage, bound to its user (TOTP-6). */
export function sealTotpSecret(auth: Auth, userId: string, secret: Uint8Array): EncryptedSecret {
  return auth.secretBox.seal(secret, associatedData(userId));
}

/** Opens a stored TOTP secret with the key that sealed it; the caller zeroes the bytes after use. */
export function openTotpSecret(auth: Auth, secret: EncryptedSecret, userId: string): Buffer {
  return auth.secretBox.open(secret, associatedData(userId));
}

/**
 * The user's factor as a {@link SealedValue} to reseal (KR-1): written back with
 * `totp.replaceSecret`, so a factor removed or set up again meanwhile is left as it is (KR-2).
 */
export function sealedTotpSecret(auth: Auth, record: TotpRecord): SealedValue {
  return {
    kind: record.enabled ? "totpSecret" : "pendingTotpSecret",
    owner: record.userId,
    secret: record.secret,
    associatedData: associatedData(record.userId),
    replace: (next) => auth.storage.totp.replaceSecret(record.userId, record.secret, next),
    async reread() {
      const now = await auth.storage.totp.get(record.userId);
      return now === null ? null : sealedTotpSecret(auth, now);
    },
  };
}

/**
 * The time step whose code `code` is, within the window (TOTP-3), if it is later than the last
 * step the factor accepted (TOTP-4); otherwise null. Spends nothing: the caller spends the step
 * with `totp.advanceStep`, a compare-and-set.
 */
export async function unusedTotpStep(auth: Auth, record: TotpRecord, code: string): Promise<number | null> {
  const now = auth.now();
  const secret = auth.secretBox.open(record.secret, associatedData(record.userId));
  const step = await matchTotpStep(secret, code, now, auth.config.totp.window);
  secret.fill(0);
  return step !== null && step > record.lastUsedStep ? step : null;
}

/**
 * Checks a TOTP code against a user's factor and spends its time step with a compare-and-set,
 * so a code is accepted once, also by two concurrent requests (TOTP-4). True only for the
 * one caller that spent the step.
 */
export async function acceptTotpCode(auth: Auth, record: TotpRecord, code: string): Promise<boolean> {
  const step = await unusedTotpStep(auth, record, code);
  return step !== null && auth.storage.totp.advanceStep(record.userId, step);
}
