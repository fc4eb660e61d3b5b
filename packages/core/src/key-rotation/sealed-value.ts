import type { EncryptedSecret } from "../storage/types.js";

/** What a value sealed at rest is, as a resealing report counts it. */
export type SealedKind = "totpSecret" | "pendingTotpSecret" | "directoryBindPassword";

/**
 * One value sealed at rest, as its area reads it for resealing (KR-1): the sealed form, the
 * associated data it was sealed with, and the compare-and-set write that puts a new sealed form in
 * its place only while the stored one is still this one (KR-2).
 */
export interface SealedValue {
  kind: SealedKind;
  /** Whose value it is (a user id, or the setting's key): for the operator, never secret. */
  owner: string;
  secret: EncryptedSecret;
  associatedData: string;
  /** Writes `next` in place of {@link secret} if it is still stored; answers whether it wrote. */
  replace(next: EncryptedSecret): Promise<boolean>;
  /** The value as stored now (after a {@link replace} that did not write), or null when it is gone. */
  reread(): Promise<SealedValue | null>;
}
