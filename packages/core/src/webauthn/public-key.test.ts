import { generateKeyPairSync } from "node:crypto";
import { type CoseKeyParts, encodeCbor, encodeCoseKey } from "@portcullis/testing";
import { describe, expect, it } from "vitest";
import { maxRsaModulusBits, minRsaModulusBits, publicKeyProblem } from "./public-key.js";

const offered = [-7, -8, -257];
const part = (value: string | undefined) => new Uint8Array(Buffer.from(value as string, "base64url"));
const problemOf = (parts: CoseKeyParts, algorithms = offered) => publicKeyProblem(encodeCoseKey(parts), algorithms);

/** A modulus of exactly `bits` bits, odd unless said otherwise: node imports any such number as n. */
function modulus(bits: number, odd = true): Uint8Array {
  const bytes = new Uint8Array(Math.ceil(bits / 8));
  bytes[0] = 1 << ((bits - 1) % 8);
  bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) | (odd ? 1 : 0);
  return bytes;
}

const f4 = Uint8Array.of(1, 0, 1);
const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey.export({ format: "jwk" });
const ec = generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey.export({ format: "jwk" });
const ed = generateKeyPairSync("ed25519").publicKey.export({ format: "jwk" });
const goodRsa: CoseKeyParts = { kty: "RSA", n: part(rsa.n), e: part(rsa.e) };
const goodEc: CoseKeyParts = { kty: "EC2", x: part(ec.x), y: part(ec.y) };
const goodEd: CoseKeyParts = { kty: "OKP", x: part(ed.x) };

describe("publicKeyProblem", () => {
  it("WA-2: real ES256, EdDSA and RS256 keys can verify: null", async () => {
    for (const parts of [goodEc, goodEd, goodRsa]) expect(await problemOf(parts), parts.kty).toBeNull();
  });

  it("WA-2: the RSA modulus is 2048 to 8192 bits and odd; a 1-byte modulus is refused", async () => {
    expect([minRsaModulusBits, maxRsaModulusBits]).toEqual([2048, 8192]);
    expect(await problemOf({ kty: "RSA", n: Uint8Array.of(0xc5), e: f4 })).toBe("an RSA modulus of 8 bits, outside 2048 to 8192");
    expect(await problemOf({ kty: "RSA", n: modulus(2047), e: f4 })).toBe("an RSA modulus of 2047 bits, outside 2048 to 8192");
    expect(await problemOf({ kty: "RSA", n: modulus(2048), e: f4 })).toBeNull();
    expect(await problemOf({ kty: "RSA", n: modulus(8192), e: f4 })).toBeNull();
    expect(await problemOf({ kty: "RSA", n: modulus(8193), e: f4 })).toBe("an RSA modulus of 8193 bits, outside 2048 to 8192");
    // Leading zero bytes do not count.
    expect(await problemOf({ kty: "RSA", n: Uint8Array.of(0, ...modulus(2048)), e: f4 })).toBeNull();
    expect(await problemOf({ kty: "RSA", n: modulus(2048, false), e: f4 })).toBe("an RSA modulus must be odd");
    const endsInTwo = modulus(2048, false);
    endsInTwo[endsInTwo.length - 1] = 2;
    expect(await problemOf({ kty: "RSA", n: endsInTwo, e: f4 })).toBe("an RSA modulus must be odd");
    expect(await problemOf({ kty: "RSA", n: new Uint8Array(0), e: f4 })).toBe("an RSA modulus must be odd");
  });

  it("WA-2: the RSA exponent is odd, at least 3 and under 2^256", async () => {
    const n = modulus(2048);
    const refused = "an RSA exponent must be odd, at least 3 and under 2^256";
    for (const e of [Uint8Array.of(1), Uint8Array.of(2), Uint8Array.of(1, 0, 0), new Uint8Array(0), Uint8Array.of(0)]) {
      expect(await problemOf({ kty: "RSA", n, e }), String(e)).toBe(refused);
    }
    expect(await problemOf({ kty: "RSA", n, e: Uint8Array.of(1, ...new Uint8Array(32)) })).toBe(refused);
    expect(await problemOf({ kty: "RSA", n, e: Uint8Array.of(1, ...new Uint8Array(31), 1) })).toBe(refused);
    for (const e of [Uint8Array.of(3), f4, new Uint8Array(32).fill(0xff)]) {
      expect(await problemOf({ kty: "RSA", n, e }), String(e)).toBeNull();
    }
  });

  it("WA-2: RS256 needs kty RSA with n and e as byte strings", async () => {
    const needs = "RS256 needs an RSA key with n and e";
    expect(await problemOf({ kty: "EC2", alg: -257, x: goodRsa.n, y: f4 } as CoseKeyParts)).toBe(needs);
    const raw = (entries: [number, number | Uint8Array][]) => publicKeyProblem(encodeCbor(new Map(entries)), offered);
    // n and e as they should be, under the EC2 key type.
    expect(
      await raw([
        [1, 2],
        [3, -257],
        [-1, modulus(2048)],
        [-2, f4],
      ]),
    ).toBe(needs);
    expect(
      await raw([
        [1, 3],
        [3, -257],
        [-2, f4],
      ]),
    ).toBe(needs);
    expect(
      await raw([
        [1, 3],
        [3, -257],
        [-1, modulus(2048)],
      ]),
    ).toBe(needs);
    expect(
      await raw([
        [1, 3],
        [3, -257],
        [-1, 5],
        [-2, f4],
      ]),
    ).toBe(needs);
  });

  it("WA-2: ES256 needs an EC2 key on P-256 with 32-byte coordinates, on the curve; the point (0, 0) is refused", async () => {
    const needs = "ES256 needs an EC2 key on P-256 with x and y of 32 bytes";
    const { x, y } = goodEc as { x: Uint8Array; y: Uint8Array };
    expect(await problemOf({ kty: "EC2", x: new Uint8Array(32), y: new Uint8Array(32) })).toBe(
      "node:crypto cannot import the EC key (for EC2, a point off the curve)",
    );
    const flipped = Uint8Array.from(y, (byte, index) => (index === 31 ? byte ^ 1 : byte));
    expect(await problemOf({ kty: "EC2", x, y: flipped })).toMatch(/cannot import/);
    expect(await problemOf({ kty: "EC2", crv: 2, x, y })).toBe(needs);
    expect(await problemOf({ kty: "OKP", alg: -7, crv: 1, x })).toBe(needs);
    // A P-256 point on the curve, under the OKP key type.
    const okp = new Map<number, number | Uint8Array>([
      [1, 1],
      [3, -7],
      [-1, 1],
      [-2, x],
      [-3, y],
    ]);
    expect(await publicKeyProblem(encodeCbor(okp), offered)).toBe(needs);
    expect(await problemOf({ kty: "EC2", x: Uint8Array.of(0, ...x), y })).toBe(needs);
    expect(await problemOf({ kty: "EC2", x, y: y.subarray(1) })).toBe(needs);
    expect(await problemOf({ kty: "EC2", x: new Uint8Array(5), y: new Uint8Array(5) })).toBe(needs);
  });

  it("WA-2: EdDSA needs an OKP key on Ed25519 with a 32-byte x; a 5-byte key is refused", async () => {
    const needs = "EdDSA needs an OKP key on Ed25519 with x of 32 bytes";
    const { x } = goodEd as { x: Uint8Array };
    expect(await problemOf({ kty: "OKP", x: Uint8Array.of(1, 2, 3, 4, 5) })).toBe(needs);
    expect(await problemOf({ kty: "OKP", x: Uint8Array.of(...x, 0) })).toBe(needs);
    expect(await problemOf({ kty: "OKP", crv: 4, x })).toBe(needs);
    expect(await problemOf({ kty: "EC2", alg: -8, crv: 6, x, y: x })).toBe(needs);
  });

  it("WA-2: the algorithm must be one offered and one known", async () => {
    expect(await problemOf(goodEc, [-8, -257])).toBe("the public key's algorithm -7 was not offered");
    expect(await problemOf(goodEd, [-7])).toBe("the public key's algorithm -8 was not offered");
    expect(await problemOf(goodRsa, [-7, -8])).toBe("the public key's algorithm -257 was not offered");
    expect(await problemOf({ ...goodEc, alg: -35 } as CoseKeyParts, [-7, -35])).toBe(
      "the public key's algorithm -35 was not offered",
    );
    const noAlgorithm = encodeCbor(
      new Map<number, number | Uint8Array>([
        [1, 1],
        [-1, 6],
        [-2, (goodEd as { x: Uint8Array }).x],
      ]),
    );
    expect(await publicKeyProblem(noAlgorithm, offered)).toBe("the public key's algorithm undefined was not offered");
    const textAlgorithm = encodeCbor(new Map<number, string>([[3, "-7"]]));
    expect(await publicKeyProblem(textAlgorithm, offered)).toBe("the public key's algorithm -7 was not offered");
  });

  it("WA-2: bytes that are not a COSE map are refused, never thrown", async () => {
    expect(await publicKeyProblem(new Uint8Array(0), offered)).toBe("the public key is not CBOR");
    expect(await publicKeyProblem(Uint8Array.of(0xff, 0xff), offered)).toBe("the public key is not CBOR");
    expect(await publicKeyProblem(encodeCbor(5), offered)).toBe("the public key is not a COSE key");
    expect(await publicKeyProblem(encodeCbor([1, 2]), offered)).toBe("the public key is not a COSE key");
  });

  it("WA-2: no answer holds the key", async () => {
    const x = new Uint8Array(32).fill(0xab);
    const answers = [
      await problemOf({ kty: "EC2", x, y: x }),
      await problemOf({ kty: "OKP", x: x.subarray(0, 5) }),
      await problemOf({ kty: "RSA", n: x, e: f4 }),
    ];
    for (const answer of answers) {
      expect(answer).not.toBeNull();
      expect(answer).not.toContain(Buffer.from(x.subarray(0, 5)).toString("base64url"));
      expect(answer).not.toMatch(/abab/i);
    }
  });
});
