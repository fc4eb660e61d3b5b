import type { Auth } from "../auth.js";
import { base64url, sha256 } from "./random.js";

/** A random identifier of 128 bits, base64url: user, session and token ids. */
export function randomId(auth: Auth): string {
  return base64url(auth.randomBytes(16));
}

/** A fresh opaque token of 256 random bits (RT-1), and the SHA-256 under which it is stored. */
export function opaqueToken(auth: Auth): { value: string; hash: string } {
  const value = base64url(auth.randomBytes(32));
  return { value, hash: sha256(value) };
}
