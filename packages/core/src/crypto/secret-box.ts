import { createCipheriv, createDecipheriv, hkdfSync } from "node:crypto";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { EncryptedSecret } from "../storage/types.js";

/** The encryption keys for secrets at rest: the current one seals, any of them opens. */
export interface EncryptionKeyring {
  current: string;
  /** Key id → 32-byte key as 64 hex characters or base64/base64url. */
  keys: Record<string, string>;
}

const nonceBytes = 12;
const tagBytes = 16;

/** Seals and opens secrets at rest with AES-256-GCM (TOTP-6). */
export interface SecretBox {
  /** The id of the key that seals: `current` of the keyring (`"k1"` for a single key). */
  readonly currentKeyId: string;
  /** Encrypts with the current key, a fresh random nonce, and `associatedData` bound in. */
  seal(plaintext: Uint8Array, associatedData: string): EncryptedSecret;
  /** Decrypts; throws {@link AuthError} 50000 if the key is unknown or anything was altered. */
  open(secret: EncryptedSecret, associatedData: string): Buffer;
  /** A 32-byte key for another purpose, derived from the current key with HKDF-SHA256. */
  deriveKey(purpose: string): Buffer;
  /** {@link deriveKey} from every key of the ring, the current one first: to know again what an earlier key made. */
  deriveKeys(purpose: string): Buffer[];
}

/**
 * Reads a configured key: exactly 64 hex characters, or exactly 43 base64 or base64url
 * characters (one `=` of padding allowed); either form is 32 bytes.
 */
function decodeKey(value: unknown, setting: string): Buffer {
  if (typeof value === "string") {
    if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, "hex");
    if (/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) return Buffer.from(value, "base64url");
  }
  throw new TypeError(
    `Portcullis configuration: ${setting} must be 32 random bytes written as 64 hex characters or base64 (43 characters), not a passphrase; generate one with: node -p "require('crypto').randomBytes(32).toString('base64url')"`,
  );
}

/** Builds a {@link SecretBox} from configuration; the key never comes from storage. */
export function createSecretBox(
  config: string | EncryptionKeyring | undefined,
  randomBytes: (size: number) => Uint8Array,
): SecretBox {
  const ring = typeof config === "string" ? { current: "k1", keys: { k1: config } } : config;
  if (!ring?.keys || typeof ring.keys !== "object" || !(ring.current in ring.keys)) {
    throw new TypeError(
      "Portcullis configuration: secrets.encryption is required: a 32-byte key (64 hex or 43 base64 characters), or { current, keys } naming one of its keys as current",
    );
  }
  const settingOf = (id: string) =>
    typeof config === "string" ? "secrets.encryption" : `secrets.encryption.keys[${JSON.stringify(id)}]`;
  const keys = new Map(Object.entries(ring.keys).map(([id, value]) => [id, decodeKey(value, settingOf(id))]));
  const broken = (cause?: unknown) => new AuthError(ErrorCode.Internal, "A stored secret could not be decrypted", { cause });

  const derive = (key: Buffer, purpose: string) => Buffer.from(hkdfSync("sha256", key, "portcullis", purpose, 32));
  return {
    currentKeyId: ring.current,
    deriveKey(purpose) {
      return derive(keys.get(ring.current) as Buffer, purpose);
    },
    deriveKeys(purpose) {
      const others = [...keys].filter(([id]) => id !== ring.current).map(([, key]) => derive(key, purpose));
      return [derive(keys.get(ring.current) as Buffer, purpose), ...others];
    },
    seal(plaintext, associatedData) {
      const key = keys.get(ring.current) as Buffer;
      const nonce = randomBytes(nonceBytes);
      const cipher = createCipheriv("aes-256-gcm", key, nonce);
      cipher.setAAD(Buffer.from(associatedData));
      const body = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
      return { keyId: ring.current, sealed: Buffer.concat([nonce, body]).toString("base64url") };
    },
    open(secret, associatedData) {
      const key = keys.get(secret.keyId);
      if (!key) throw broken();
      const raw = Buffer.from(secret.sealed, "base64url");
      if (raw.length < nonceBytes + tagBytes) throw broken();
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, nonceBytes));
        decipher.setAAD(Buffer.from(associatedData));
        decipher.setAuthTag(raw.subarray(raw.length - tagBytes));
        return Buffer.concat([decipher.update(raw.subarray(nonceBytes, raw.length - tagBytes)), decipher.final()]);
      } catch (error) {
        throw broken(error);
      }
    },
  };
}
