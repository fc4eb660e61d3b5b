import { createHash, timingSafeEqual } from "node:crypto";

/** base64url without padding. */
export function base64url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64url");
}

/** SHA-256 of a UTF-8 string, as base64url: how single-use values are stored (RT-1, RC-2). */
export function sha256(value: string): string {
  return createHash("sha256").update(value).digest("base64url");
}

/** Compares the UTF-8 bytes of two strings, in time that depends only on their lengths. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
