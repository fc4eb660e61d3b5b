import { createHmac } from "node:crypto";
import type { SecretBox } from "./secret-box.js";

const derivedKeys = new WeakMap<SecretBox, Map<string, Buffer>>();

/**
 * The HMAC-SHA256 of `text` (UTF-8) under a key derived for `purpose` from the current encryption
 * key (derived once per secret box and purpose). A key rotation changes every digest made before it.
 */
export function keyedDigest(secretBox: SecretBox, purpose: string, text: string): Buffer {
  let keys = derivedKeys.get(secretBox);
  if (!keys) {
    keys = new Map();
    derivedKeys.set(secretBox, keys);
  }
  let key = keys.get(purpose);
  if (!key) {
    key = secretBox.deriveKey(purpose);
    keys.set(purpose, key);
  }
  return createHmac("sha256", key).update(text).digest();
}

/**
 * A 128-bit tag of `text`: the first 16 bytes, base64url, of its {@link keyedDigest} for `purpose`.
 * For values the library hands out and must know again as its own, such as a listing's cursor; a
 * key rotation voids the tags made before it.
 */
export function keyedTag(secretBox: SecretBox, purpose: string, text: string): string {
  return keyedDigest(secretBox, purpose, text).subarray(0, 16).toString("base64url");
}
