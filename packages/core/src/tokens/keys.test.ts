import { generateKeyPairSync } from "node:crypto";
import { type JWK, calculateJwkThumbprint, createLocalJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { addUser, audience, encryptionKey, issuer, makeAuth, outcome, signIn } from "../flows/fixtures.test-support.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { loadTokenKeys } from "./keys.js";

const ecKey = () => generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
const edKey = () => generateKeyPairSync("ed25519").privateKey;
const pem = (key: ReturnType<typeof ecKey>) => key.export({ format: "pem", type: "pkcs8" }).toString();

describe("signing keys", () => {
  for (const [alg, makeKey] of [
    ["ES256", ecKey],
    ["EdDSA", edKey],
  ] as const) {
    it(`AT-1: ${alg} tokens verify through the published JWK Set, and the kid is the RFC 7638 thumbprint`, async () => {
      const harness = makeAuth({ secrets: { signing: { alg, privateKey: pem(makeKey()) }, encryption: encryptionKey } });
      await addUser(harness.auth, "keyed");
      const { accessToken } = await signIn(harness, "keyed");
      const jwks = harness.auth.keys.jwks;
      expect(jwks?.keys).toHaveLength(1);
      const published = jwks?.keys[0] as JWK;
      expect(published).not.toHaveProperty("d");
      expect(published).toMatchObject({ alg, use: "sig", kid: await calculateJwkThumbprint(published) });
      expect(decodeProtectedHeader(accessToken)).toEqual({ alg, kid: published.kid, typ: "at+jwt" });
      const { payload } = await jwtVerify(accessToken, createLocalJWKSet(jwks as { keys: JWK[] }), {
        issuer,
        audience,
        currentDate: new Date(harness.clock.now),
      });
      expect(payload.iss).toBe(issuer);
      await verifyAccessToken(harness.auth, { token: accessToken });
    });
  }

  it("AT-2: a private JWK and an explicit kid are accepted", () => {
    const jwk = ecKey().export({ format: "jwk" }) as JWK;
    const keys = loadTokenKeys({ signing: { alg: "ES256", privateKey: jwk, kid: "2026-11" } });
    expect(keys.signing.kid).toBe("2026-11");
    expect(keys.jwks?.keys.map((key) => key.kid)).toEqual(["2026-11"]);
  });

  it("AT-2: after a rotation, tokens of the previous key still verify and the JWK Set lists both keys", async () => {
    const oldKey = pem(edKey());
    const before = makeAuth({ secrets: { signing: { alg: "EdDSA", privateKey: oldKey }, encryption: encryptionKey } });
    await addUser(before.auth, "rotating");
    const { accessToken } = await signIn(before, "rotating");
    const after = makeAuth({
      storage: before.storage,
      clock: before.clock,
      secrets: {
        signing: { alg: "ES256", privateKey: pem(ecKey()) },
        previousSigning: [{ alg: "EdDSA", privateKey: oldKey }],
        encryption: encryptionKey,
      },
    });
    expect(after.auth.keys.jwks?.keys.map((key) => key.alg)).toEqual(["ES256", "EdDSA"]);
    await verifyAccessToken(after.auth, { token: accessToken });
    const forgotten = makeAuth({
      storage: before.storage,
      clock: before.clock,
      secrets: { signing: { alg: "ES256", privateKey: pem(ecKey()) }, encryption: encryptionKey },
    });
    expect(await outcome(verifyAccessToken(forgotten.auth, { token: accessToken }))).toBe(40101);
  });

  it("AT-2: with an HMAC secret and an asymmetric key in one rotation, the JWK Set publishes only the public key", () => {
    const secret = "h".repeat(32);
    const asymmetric = loadTokenKeys({
      signing: { alg: "EdDSA", privateKey: pem(edKey()) },
      previousSigning: [secret],
    });
    expect(asymmetric.verifying.size).toBe(2);
    expect(asymmetric.jwks).toEqual({ keys: [asymmetric.signing.publicJwk] });
    expect(JSON.stringify(asymmetric.jwks)).not.toContain(Buffer.from(secret).toString("base64url"));
    // An HMAC current key serves no JWK Set at all (docs/http-api.md), even with an asymmetric previous key.
    const hmac = loadTokenKeys({
      signing: secret,
      previousSigning: [{ alg: "ES256", privateKey: pem(ecKey()) }],
    });
    expect(hmac.verifying.size).toBe(2);
    expect(hmac.jwks).toBeNull();
  });

  it("AT-5: an HMAC secret publishes no key set; a key of the wrong curve is refused at startup", () => {
    expect(loadTokenKeys({ signing: "h".repeat(32) }).jwks).toBeNull();
    expect(() => loadTokenKeys({ signing: { alg: "ES256", privateKey: pem(edKey()) } })).toThrow(
      /secrets\.signing must be an EC P-256 key for alg ES256/,
    );
    expect(() => loadTokenKeys({ signing: { alg: "EdDSA", privateKey: "not a key" } })).toThrow(
      /secrets\.signing\.privateKey is not a readable private key/,
    );
  });
});
