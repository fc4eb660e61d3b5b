import { hash, randomFillSync, timingSafeEqual } from "node:crypto";

/**
 * Random bytes from the system's CSPRNG, drawn `poolSize` bytes at a time, as Node's own
 * `randomUUID` does: one call into OpenSSL serves many ids and tokens. Every byte is handed out
 * once, as a fresh copy, and zeroed in the pool when taken; a request of more than a quarter of
 * the pool is served directly.
 */
export function pooledRandomBytes(poolSize = 4096): (size: number) => Uint8Array {
  const pool = new Uint8Array(poolSize);
  let offset = poolSize;
  return (size) => {
    if (size > poolSize / 4) return randomFillSync(new Uint8Array(size));
    if (offset + size > poolSize) {
      randomFillSync(pool);
      offset = 0;
    }
    const bytes = pool.slice(offset, offset + size);
    pool.fill(0, offset, offset + size);
    offset += size;
    return bytes;
  };
}

/** base64url without padding. */
export function base64url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64url");
}

/**
 * SHA-256 of a UTF-8 string, as base64url: how single-use values are stored (RT-1, RC-2).
 * Node's one-shot `hash` (20.12 on), about half the cost of a `createHash` object.
 */
export function sha256(value: string): string {
  return hash("sha256", value, "base64url");
}

/** Compares the UTF-8 bytes of two strings, in time that depends only on their lengths. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
