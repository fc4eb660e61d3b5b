// Rotating the access-token signing key with overlap (STUP-6), as docs/flows/tokens.md's procedure
// does it: the next key verifies (and is published) before it signs; once it signs, the old key
// verifies until the last token it signed has expired, which is the access lifetime plus the
// clock tolerance after it stopped signing; then it is removed and its tokens are refused without
// any fetch. A key that leaked is removed at once instead, with revokeAllSessions beside it.
import { generateKeyPairSync } from "node:crypto";
import { decodeProtectedHeader } from "jose";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AuthConfig } from "../config.js";
import {
  type Clock,
  type Harness,
  addUser,
  encryptionKey,
  makeAuth,
  makeClock,
  outcome,
  signIn,
} from "../flows/fixtures.test-support.js";
import { refresh } from "../flows/refresh.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { revokeAllSessions } from "../incident/revoke-all-sessions.js";
import { memoryStorage } from "../storage/memory.js";
import type { Storage } from "../storage/types.js";
import { loadTokenKeys } from "./keys.js";
import type { SigningSecrets } from "./token-config.js";

const refused = 40101;
const edKey = () => generateKeyPairSync("ed25519");
const pkcs8 = (key: ReturnType<typeof edKey>) => key.privateKey.export({ format: "pem", type: "pkcs8" }).toString();
const spki = (key: ReturnType<typeof edKey>) => key.publicKey.export({ format: "pem", type: "spki" }).toString();

/** An instance of the service on the shared storage and clock, with these signing keys. */
function instance(storage: Storage, clock: Clock, keys: SigningSecrets, config: Partial<AuthConfig> = {}): Harness {
  return makeAuth({ storage, clock, secrets: { ...keys, encryption: encryptionKey }, ...config });
}

const check = (harness: Harness, token: string) => outcome(verifyAccessToken(harness.auth, { token }));
const kidOf = (token: string) => decodeProtectedHeader(token).kid;

afterEach(() => {
  vi.restoreAllMocks();
});

describe("rotating the signing key (STUP-6)", () => {
  it("STUP-6, ASVS 9.1.3: next key published first, then signing; the old key's tokens verify until the access lifetime plus the clock tolerance; removed, they are refused without a fetch", async () => {
    const fetchSpy = vi.spyOn(globalThis, "fetch");
    const storage = memoryStorage();
    const clock = makeClock();
    const [old, next] = [edKey(), edKey()];
    const oldKey = { alg: "EdDSA" as const, privateKey: pkcs8(old), kid: "2026-01" };
    const nextKey = { alg: "EdDSA" as const, privateKey: pkcs8(next), kid: "2026-07" };
    const before = instance(storage, clock, { signing: oldKey });
    await addUser(before.auth, "erin");
    const early = await signIn(before, "erin");

    // 1. The next key verifies and is published everywhere before any instance signs with it.
    const published = instance(storage, clock, { signing: oldKey, previousSigning: [nextKey] });
    expect(published.auth.keys.jwks?.keys.map((key) => [key.kid, key.alg, key.use])).toEqual([
      ["2026-01", "EdDSA", "sig"],
      ["2026-07", "EdDSA", "sig"],
    ]);
    expect(JSON.stringify(published.auth.keys.jwks)).not.toContain('"d"');
    const stillOld = await signIn(published, "erin");
    expect(kidOf(stillOld.accessToken)).toBe("2026-01");

    // 2. The swap: the next key signs, the old one verifies (its public key is enough, with its kid).
    const lastOldToken = await signIn(published, "erin");
    const swapped = instance(storage, clock, {
      signing: nextKey,
      previousSigning: [{ alg: "EdDSA", publicKey: spki(old), kid: "2026-01" }],
    });
    const fresh = await signIn(swapped, "erin");
    expect(kidOf(fresh.accessToken)).toBe("2026-07");
    for (const tokens of [early, lastOldToken, fresh]) expect(await check(swapped, tokens.accessToken)).toBe("fulfilled");
    // A token of the old key verifies on an instance not yet swapped, and the other way round.
    expect(await check(published, fresh.accessToken)).toBe("fulfilled");

    // 3. The last token the old key signed lives the access lifetime (15 min) plus the clock tolerance (5 s).
    clock.advance(15 * 60_000 + 4_000);
    expect(await check(swapped, lastOldToken.accessToken)).toBe("fulfilled");
    clock.advance(1_000);
    expect(await check(swapped, lastOldToken.accessToken)).toBe(refused);

    // 4. Removed: any token of the old key is refused, whatever its exp, and nothing is fetched.
    const after = instance(storage, clock, { signing: nextKey });
    const longLived = await instance(storage, clock, { signing: oldKey }, { ttl: { access: "24h" } }).auth.keys.signing.sign({
      ...(await verifyAccessToken(swapped.auth, { token: (await signIn(swapped, "erin")).accessToken })).claims,
      exp: Math.floor(clock.now / 1000) + 3600,
    });
    expect(kidOf(longLived)).toBe("2026-01");
    expect(await check(after, longLived)).toBe(refused);
    expect(await check(after, (await signIn(after, "erin")).accessToken)).toBe("fulfilled");
    expect(after.auth.keys.jwks?.keys.map((key) => key.kid)).toEqual(["2026-07"]);
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it("STUP-6: HS256 secrets rotate the same way: the previous secret verifies, and once removed its tokens are refused", async () => {
    const storage = memoryStorage();
    const clock = makeClock();
    const [oldSecret, nextSecret] = ["old-secret-of-at-least-32-bytes-0001", "next-secret-of-at-least-32-bytes-002"];
    const before = instance(storage, clock, { signing: oldSecret });
    await addUser(before.auth, "frank");
    const token = (await signIn(before, "frank")).accessToken;
    const swapped = instance(storage, clock, { signing: nextSecret, previousSigning: [oldSecret] });
    expect(swapped.auth.keys.jwks).toBeNull();
    expect(kidOf((await signIn(swapped, "frank")).accessToken)).toBe(swapped.auth.keys.signing.kid);
    expect(await check(swapped, token)).toBe("fulfilled");
    expect(await check(instance(storage, clock, { signing: nextSecret }), token)).toBe(refused);
  });

  it("STUP-6, ASVS 7.4.5: a leaked key is removed at once, with no overlap: its tokens are refused, refresh tokens (opaque, never signed) mint tokens of the new key; revokeAllSessions ends those too", async () => {
    const storage = memoryStorage();
    const clock = makeClock();
    const leaked = instance(storage, clock, { signing: "l".repeat(32) });
    await addUser(leaked.auth, "grace");
    const tokens = await signIn(leaked, "grace");
    const replaced = instance(storage, clock, { signing: "r".repeat(32) });
    expect(await check(replaced, tokens.accessToken)).toBe(refused);
    const refreshed = await refresh(replaced.auth, { refreshToken: tokens.refreshToken });
    expect(kidOf(refreshed.accessToken)).toBe(replaced.auth.keys.signing.kid);
    expect(await check(replaced, refreshed.accessToken)).toBe("fulfilled");
    await revokeAllSessions(replaced.auth);
    expect(await check(replaced, refreshed.accessToken)).toBe(refused);
    expect(await outcome(refresh(replaced.auth, { refreshToken: refreshed.refreshToken }))).toBe(refused);
  });

  it("STUP-6, AT-2: a previous key with the signing key's kid is refused at startup, naming both entries", () => {
    const key = edKey();
    const other = edKey();
    const signing = { alg: "EdDSA" as const, privateKey: pkcs8(key), kid: "2026-01" };
    expect(() => loadTokenKeys({ signing, previousSigning: [{ alg: "EdDSA", publicKey: spki(other), kid: "2026-01" }] })).toThrow(
      'two signing keys share the kid "2026-01": secrets.signing and secrets.previousSigning[0]',
    );
    // The same key listed again, without its kid: the thumbprint repeats.
    const { kid: _, ...unnamed } = signing;
    expect(() =>
      loadTokenKeys({ signing: unnamed, previousSigning: ["h".repeat(32), { alg: "EdDSA", publicKey: spki(key) }] }),
    ).toThrow(/two signing keys share the kid "[\w-]{43}": secrets\.signing and secrets\.previousSigning\[1\]/);
    expect(() => loadTokenKeys({ signing: "h".repeat(32), previousSigning: ["s".repeat(32), "s".repeat(32)] })).toThrow(
      /two signing keys share the kid "hs-[\w-]{16}": secrets\.previousSigning\[0\] and secrets\.previousSigning\[1\]/,
    );
  });
});
