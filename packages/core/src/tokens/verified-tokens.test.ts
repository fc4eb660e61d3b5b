import { describe, expect, it } from "vitest";
import { addUser, makeAuth, outcome, signIn } from "../flows/fixtures.test-support.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { createVerifiedTokenCache } from "./verified-tokens.js";

describe("createVerifiedTokenCache", () => {
  it("serves only the exact token text it kept: another token ending in the same signature finds nothing", () => {
    const cache = createVerifiedTokenCache<string>(10);
    cache.remember("header.payload.signature", "kept", 2_000, 1_000);
    expect(cache.get("header.payload.signature", 1_500)).toBe("kept");
    for (const other of [
      "header.other.signature",
      "other.payload.signature",
      ".signature",
      "signature",
      "header.payload.signature ",
    ]) {
      expect(cache.get(other, 1_500)).toBeUndefined();
    }
    expect(cache.size).toBe(1);
    expect(cache.get("header.payload.signature", 1_500)).toBe("kept");
  });

  it("a token that shares another's signature and is verified too replaces it; each is served only as itself", () => {
    const cache = createVerifiedTokenCache<string>(10);
    cache.remember("a.b.sig", "first", 2_000, 1_000);
    cache.remember("c.d.sig", "second", 2_000, 1_000);
    expect(cache.get("c.d.sig", 1_000)).toBe("second");
    expect(cache.get("a.b.sig", 1_000)).toBeUndefined();
  });

  it("AT-3: an entry is served before its exp only, then dropped; one kept at or past its exp is not kept", () => {
    const cache = createVerifiedTokenCache<string>(10);
    cache.remember("a.b.sig", "kept", 2_000, 1_000);
    cache.remember("a.b.late", "late", 2_000, 2_000);
    expect(cache.size).toBe(1);
    expect(cache.get("a.b.sig", 1_999)).toBe("kept");
    expect(cache.get("a.b.sig", 2_000)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it("an expired entry is not dropped by a lookup of another token ending in its signature", () => {
    const cache = createVerifiedTokenCache<string>(10);
    cache.remember("a.b.sig", "kept", 2_000, 1_000);
    expect(cache.get("x.y.sig", 3_000)).toBeUndefined();
    expect(cache.size).toBe(1);
  });
});

describe("verifyAccessToken and the verified-token cache", () => {
  it("AT-1: a token with a cached token's signature but another payload is refused, not served from the cache", async () => {
    const harness = makeAuth();
    await addUser(harness.auth, "signature-reuse", undefined, ["reader"]);
    const tokens = await signIn(harness, "signature-reuse");
    const cached = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
    const [header, payload, signature] = tokens.accessToken.split(".") as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString());
    const forged = Buffer.from(JSON.stringify({ ...claims, roles: ["admin"] })).toString("base64url");
    expect(await outcome(verifyAccessToken(harness.auth, { token: `${header}.${forged}.${signature}` }))).toBe(40101);
    expect(await verifyAccessToken(harness.auth, { token: tokens.accessToken })).toBe(cached);
    expect(harness.auth.verifiedTokens.size).toBe(1);
  });
});
