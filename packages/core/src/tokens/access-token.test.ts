import { createHmac, type createPrivateKey, generateKeyPairSync, sign } from "node:crypto";
import { errors } from "jose";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { makeAuth, makeClock, signingSecret } from "../flows/fixtures.test-support.js";
import { type AccessTokenClaims, signAccessToken, verifyAccessTokenClaims } from "./access-token.js";

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

/** A compact JWS with an HMAC signature, built by hand so that any header can be tried. */
function hmacToken(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  key: string | Uint8Array,
  hash = "sha256",
): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${createHmac(hash, key).update(input).digest("base64url")}`;
}

/** A compact JWS signed with an Ed25519 private key, built by hand. */
function edToken(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  privateKey: ReturnType<typeof createPrivateKey>,
): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${sign(null, Buffer.from(input), privateKey).toString("base64url")}`;
}

function claimsAt(auth: Auth, overrides: Partial<AccessTokenClaims> = {}): AccessTokenClaims {
  const iat = Math.floor(auth.now() / 1000);
  return {
    iss: auth.config.issuer,
    aud: auth.config.audience,
    sub: "user-1",
    iat,
    exp: iat + 900,
    jti: "jti-1",
    sid: "session-1",
    tv: 0,
    roles: ["reader"],
    amr: ["pwd"],
    ...overrides,
  };
}

const expectationsOf = (auth: Auth) => ({
  keys: auth.keys,
  issuer: auth.config.issuer,
  audience: auth.config.audience,
  now: auth.now(),
  clockToleranceSeconds: auth.config.clockToleranceSeconds,
});

async function verdict(auth: Auth, token: string): Promise<"accepted" | number> {
  try {
    await verifyAccessTokenClaims(token, expectationsOf(auth));
    return "accepted";
  } catch (error) {
    if (error instanceof AuthError) return error.code;
    throw error;
  }
}

const edKeys = () => {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return { privateKey, publicKey, pem: privateKey.export({ format: "pem", type: "pkcs8" }).toString() };
};

describe("access tokens", () => {
  const { auth } = makeAuth();
  const secret = signingSecret;
  const kid = auth.keys.signing.kid;
  const header = { alg: "HS256", typ: "at+jwt", kid };

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("a token signed by the library verifies, with its claims", async () => {
    const token = await signAccessToken(auth.keys, claimsAt(auth));
    expect(await verifyAccessTokenClaims(token, expectationsOf(auth))).toEqual(claimsAt(auth));
    expect(JSON.parse(Buffer.from(token.split(".")[0] as string, "base64url").toString())).toEqual(header);
    expect(await verdict(auth, hmacToken(header, claimsAt(auth), secret))).toBe("accepted");
  });

  describe("AT-1: the algorithm is pinned", () => {
    it("AT-1: alg none is refused, however it is written", async () => {
      for (const alg of ["none", "None", "NONE"]) {
        const token = `${b64({ ...header, alg })}.${b64(claimsAt(auth))}.`;
        expect(await verdict(auth, token), alg).toBe(40101);
      }
    });

    it("AT-1: another HMAC algorithm with the right secret is refused", async () => {
      // A fresh auth, so its key's verifier is first made (and its algorithm pinned) in this test.
      const { auth: fresh } = makeAuth();
      expect(await verdict(fresh, hmacToken({ ...header, alg: "HS512" }, claimsAt(fresh), secret, "sha512"))).toBe(40101);
      expect(await verdict(fresh, hmacToken({ ...header, alg: "HS384" }, claimsAt(fresh), secret, "sha384"))).toBe(40101);
      expect(await verdict(fresh, hmacToken(header, claimsAt(fresh), secret))).toBe("accepted");
    });

    it("AT-1: HS256 signed with the public key of an asymmetric configuration is refused (algorithm confusion)", async () => {
      const keys = edKeys();
      const { auth: edAuth } = makeAuth({
        secrets: { signing: { alg: "EdDSA", privateKey: keys.pem }, encryption: "00".repeat(32) },
      });
      const edKid = edAuth.keys.signing.kid;
      const genuine = await signAccessToken(edAuth.keys, claimsAt(edAuth));
      expect(await verdict(edAuth, genuine)).toBe("accepted");
      const publicPem = keys.publicKey.export({ format: "pem", type: "spki" }).toString();
      const publicDer = keys.publicKey.export({ format: "der", type: "spki" });
      const rawX = Buffer.from(keys.publicKey.export({ format: "jwk" }).x as string, "base64url");
      const jwkText = JSON.stringify(edAuth.keys.signing.publicJwk);
      for (const hmacKey of [publicPem, publicDer, rawX, jwkText]) {
        const forged = hmacToken({ alg: "HS256", typ: "at+jwt", kid: edKid }, claimsAt(edAuth), hmacKey);
        expect(await verdict(edAuth, forged)).toBe(40101);
      }
    });

    it("AT-1: an unknown crit header is refused, even with a valid signature", async () => {
      const critical = { ...header, crit: ["urn:example:policy"], "urn:example:policy": "strict" };
      expect(await verdict(auth, hmacToken(critical, claimsAt(auth), secret))).toBe(40101);
      expect(await verdict(auth, hmacToken({ ...header, crit: ["exp"] }, claimsAt(auth), secret))).toBe(40101);
      // b64 is the one extension jose itself understands: refused all the same, as is an empty list.
      expect(await verdict(auth, hmacToken({ ...header, crit: ["b64"], b64: true }, claimsAt(auth), secret))).toBe(40101);
      expect(await verdict(auth, hmacToken({ ...header, crit: [] }, claimsAt(auth), secret))).toBe(40101);
    });

    it("AT-1: a token whose alg is not the one of the key its kid names is refused, even signed by another configured key", async () => {
      const ed = edKeys();
      const ec = generateKeyPairSync("ec", { namedCurve: "P-256" });
      const { auth: mixed } = makeAuth({
        secrets: {
          signing: { alg: "EdDSA", privateKey: ed.pem },
          previousSigning: [{ alg: "ES256", publicKey: ec.publicKey.export({ format: "jwk" }), kid: "ec" }, secret],
          encryption: "00".repeat(32),
        },
      });
      const edKid = mixed.keys.signing.kid;
      const claims = claimsAt(mixed);
      const esToken = (head: Record<string, unknown>) => {
        const input = `${b64(head)}.${b64(claims)}`;
        const signature = sign("sha256", Buffer.from(input), { key: ec.privateKey, dsaEncoding: "ieee-p1363" });
        return `${input}.${signature.toString("base64url")}`;
      };
      expect(await verdict(mixed, edToken({ alg: "EdDSA", typ: "at+jwt", kid: edKid }, claims, ed.privateKey))).toBe("accepted");
      expect(await verdict(mixed, esToken({ alg: "ES256", typ: "at+jwt", kid: "ec" }))).toBe("accepted");
      expect(await verdict(mixed, hmacToken({ ...header, kid }, claims, secret))).toBe("accepted");
      const mismatched = [
        edToken({ alg: "EdDSA", typ: "at+jwt", kid: "ec" }, claims, ed.privateKey),
        edToken({ alg: "EdDSA", typ: "at+jwt", kid }, claims, ed.privateKey),
        esToken({ alg: "ES256", typ: "at+jwt", kid: edKid }),
        esToken({ alg: "ES256", typ: "at+jwt", kid }),
        hmacToken({ ...header, kid: edKid }, claims, secret),
        hmacToken({ ...header, kid: "ec" }, claims, secret),
      ];
      for (const token of mismatched) expect(await verdict(mixed, token), token.split(".")[0]).toBe(40101);
    });

    it("AT-1: a refused signature is 40101 with jose's error kept as cause, and no token in the message", async () => {
      const token = hmacToken(header, claimsAt(auth), `${secret}x`);
      const error = await verifyAccessTokenClaims(token, expectationsOf(auth)).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(AuthError);
      expect((error as AuthError).code).toBe(40101);
      expect((error as AuthError).cause).toBeInstanceOf(errors.JWSSignatureVerificationFailed);
      expect(((error as AuthError).cause as errors.JOSEError).code).toBe("ERR_JWS_SIGNATURE_VERIFICATION_FAILED");
      for (const part of token.split(".")) expect((error as AuthError).message).not.toContain(part);
    });

    it("AT-1: a token whose signature does not match is refused", async () => {
      const token = await signAccessToken(auth.keys, claimsAt(auth));
      const [head, , signature] = token.split(".");
      expect(await verdict(auth, `${head}.${b64(claimsAt(auth, { roles: ["admin"] }))}.${signature}`)).toBe(40101);
      expect(await verdict(auth, hmacToken(header, claimsAt(auth), `${secret}x`))).toBe(40101);
      expect(await verdict(auth, "not.a.jwt")).toBe(40101);
      expect(await verdict(auth, "")).toBe(40101);
    });
  });

  describe("AT-2: kid selects among configured keys only", () => {
    it("AT-2: an unknown or missing kid is refused, without any fetch", async () => {
      const fetchSpy = vi.spyOn(globalThis, "fetch");
      expect(await verdict(auth, hmacToken({ ...header, kid: "other" }, claimsAt(auth), secret))).toBe(40101);
      expect(await verdict(auth, hmacToken({ alg: "HS256", typ: "at+jwt" }, claimsAt(auth), secret))).toBe(40101);
      for (const notAString of [[kid], { kid }, 7, null]) {
        const token = hmacToken({ ...header, kid: notAString }, claimsAt(auth), secret);
        expect(await verdict(auth, token), JSON.stringify(notAString)).toBe(40101);
      }
      const jku = {
        alg: "HS256",
        typ: "at+jwt",
        kid: "evil",
        jku: "https://evil.example/jwks.json",
        x5u: "https://evil.example/cert",
      };
      expect(await verdict(auth, hmacToken(jku, claimsAt(auth), secret))).toBe(40101);
      expect(fetchSpy).not.toHaveBeenCalled();
    });

    it("AT-2: a key embedded in the header (jwk, x5c) never verifies a token", async () => {
      const attacker = edKeys();
      const attackerJwk = attacker.publicKey.export({ format: "jwk" });
      const victim = edKeys();
      const { auth: edAuth } = makeAuth({
        secrets: { signing: { alg: "EdDSA", privateKey: victim.pem }, encryption: "00".repeat(32) },
      });
      const edKid = edAuth.keys.signing.kid;
      for (const kidHeader of [edKid, "attacker"]) {
        const embedded = { alg: "EdDSA", typ: "at+jwt", kid: kidHeader, jwk: attackerJwk, x5c: ["MIIB"] };
        expect(await verdict(edAuth, edToken(embedded, claimsAt(edAuth), attacker.privateKey)), kidHeader).toBe(40101);
      }
      const genuine = { alg: "EdDSA", typ: "at+jwt", kid: edKid, jwk: attackerJwk };
      expect(await verdict(edAuth, edToken(genuine, claimsAt(edAuth), victim.privateKey))).toBe("accepted");
    });

    it("AT-2: jku and x5u on a token signed with a configured key are ignored, never fetched", async () => {
      const fetchSpy = vi.spyOn(globalThis, "fetch");
      const withUrls = { ...header, jku: "https://evil.example/jwks.json", x5u: "https://evil.example/cert.pem" };
      expect(await verdict(auth, hmacToken(withUrls, claimsAt(auth), secret))).toBe("accepted");
      expect(fetchSpy).not.toHaveBeenCalled();
    });

    it("AT-2: after a rotation, tokens of the previous keys verify by their kid; others do not", async () => {
      const oldEd = edKeys();
      const { auth: before } = makeAuth();
      const { auth: edBefore } = makeAuth({
        secrets: { signing: { alg: "EdDSA", privateKey: oldEd.pem }, encryption: "00".repeat(32) },
      });
      const { auth: after } = makeAuth({
        secrets: {
          signing: "the-new-signing-secret-after-rotation-000000",
          previousSigning: [
            secret,
            { alg: "EdDSA", publicKey: oldEd.publicKey.export({ format: "pem", type: "spki" }).toString() },
          ],
          encryption: "00".repeat(32),
        },
      });
      const { auth: forgetful } = makeAuth({
        secrets: { signing: "the-new-signing-secret-after-rotation-000000", encryption: "00".repeat(32) },
      });
      const oldHmac = await signAccessToken(before.keys, claimsAt(before));
      const oldAsymmetric = await signAccessToken(edBefore.keys, claimsAt(edBefore));
      const current = await signAccessToken(after.keys, claimsAt(after));
      expect(after.keys.signing.kid).not.toBe(before.keys.signing.kid);
      expect(await verdict(after, oldHmac)).toBe("accepted");
      expect(await verdict(after, oldAsymmetric)).toBe("accepted");
      expect(await verdict(after, current)).toBe("accepted");
      expect(await verdict(forgetful, oldHmac)).toBe(40101);
      expect(await verdict(forgetful, oldAsymmetric)).toBe(40101);
      expect(await verdict(before, current)).toBe(40101);
      const swappedKid = hmacToken({ ...header, kid: after.keys.signing.kid }, claimsAt(after), secret);
      expect(await verdict(after, swappedKid)).toBe(40101);
    });
  });

  describe("AT-3: expiry", () => {
    it("AT-3: a token without exp is refused", async () => {
      const { exp: _, ...withoutExp } = claimsAt(auth);
      expect(await verdict(auth, hmacToken(header, withoutExp, secret))).toBe(40101);
      expect(await verdict(auth, hmacToken(header, { ...withoutExp, exp: "later" }, secret))).toBe(40101);
    });

    it("AT-3: exp is checked with the default 5-second tolerance", async () => {
      const now = Math.floor(auth.now() / 1000);
      expect(await verdict(auth, hmacToken(header, claimsAt(auth, { exp: now - 4 }), secret))).toBe("accepted");
      expect(await verdict(auth, hmacToken(header, claimsAt(auth, { exp: now - 6 }), secret))).toBe(40101);
      expect(await verdict(auth, hmacToken(header, claimsAt(auth, { exp: now - 61 }), secret))).toBe(40101);
    });

    it("AT-3: with the largest tolerance, 60 s, a token 61 s past exp is refused", async () => {
      const { auth: tolerant } = makeAuth({ clockToleranceSeconds: 60 });
      const now = Math.floor(tolerant.now() / 1000);
      expect(await verdict(tolerant, hmacToken(header, claimsAt(tolerant, { exp: now - 59 }), secret))).toBe("accepted");
      expect(await verdict(tolerant, hmacToken(header, claimsAt(tolerant, { exp: now - 61 }), secret))).toBe(40101);
    });

    it("AT-3: nbf is checked with the tolerance", async () => {
      const now = Math.floor(auth.now() / 1000);
      const tolerance = auth.config.clockToleranceSeconds;
      expect(await verdict(auth, hmacToken(header, { ...claimsAt(auth), nbf: now + 4 }, secret))).toBe("accepted");
      expect(await verdict(auth, hmacToken(header, { ...claimsAt(auth), nbf: now + tolerance }, secret))).toBe("accepted");
      expect(await verdict(auth, hmacToken(header, { ...claimsAt(auth), nbf: now + tolerance + 1 }, secret))).toBe(40101);
      expect(await verdict(auth, hmacToken(header, { ...claimsAt(auth), nbf: now + 6 }, secret))).toBe(40101);
    });

    it("AT-3: exp and nbf are judged by the auth's clock (config.now), not the machine's", async () => {
      // A fresh auth, so its key's verifier is made in this test: a day ahead of the machine's clock.
      const { auth: ahead } = makeAuth({ clock: makeClock(Date.now() + 86_400_000) });
      const now = Math.floor(ahead.now() / 1000);
      expect(await verdict(ahead, hmacToken(header, { ...claimsAt(ahead), nbf: now - 1 }, secret))).toBe("accepted");
      const { auth: behind } = makeAuth({ clock: makeClock(Date.now() - 86_400_000) });
      expect(await verdict(behind, hmacToken(header, claimsAt(behind), secret))).toBe("accepted");
    });
  });

  describe("AT-4: iss, aud and typ", () => {
    it("AT-4: a wrong issuer is refused", async () => {
      for (const iss of [
        "https://evil.example",
        "https://api.example.com/",
        "https://API.example.com",
        "http://api.example.com",
      ]) {
        expect(await verdict(auth, hmacToken(header, claimsAt(auth, { iss }), secret)), iss).toBe(40101);
      }
      const { iss: _, ...withoutIss } = claimsAt(auth);
      expect(await verdict(auth, hmacToken(header, withoutIss, secret))).toBe(40101);
    });

    it("AT-4: a wrong audience is refused", async () => {
      for (const aud of ["other-api", "example-api ", "Example-API"]) {
        expect(await verdict(auth, hmacToken(header, claimsAt(auth, { aud }), secret)), aud).toBe(40101);
      }
      expect(await verdict(auth, hmacToken(header, { ...claimsAt(auth), aud: ["other-api"] }, secret))).toBe(40101);
      for (const aud of [["example-api", "other-api"], ["other-api", "example-api"], ["example-api"], [], 7, null]) {
        const token = hmacToken(header, { ...claimsAt(auth), aud }, secret);
        expect(await verdict(auth, token), JSON.stringify(aud)).toBe(40101);
      }
      const { aud: _, ...withoutAud } = claimsAt(auth);
      expect(await verdict(auth, hmacToken(header, withoutAud, secret))).toBe(40101);
    });

    it("AT-4: a typ other than at+jwt is refused", async () => {
      for (const typ of ["JWT", "jwt", "id+jwt", "at+jwt2", "", "AT+JWT", "application/at+jwt"]) {
        expect(await verdict(auth, hmacToken({ ...header, typ }, claimsAt(auth), secret)), typ).toBe(40101);
      }
      const { typ: _, ...withoutTyp } = header;
      expect(await verdict(auth, hmacToken(withoutTyp, claimsAt(auth), secret))).toBe(40101);
    });

    it("AT-4: a signed payload that is no JSON object is 40101, never an error of another kind", async () => {
      // The last is a whole set of claims whose jti holds a byte that is no UTF-8: refused, not read as U+FFFD.
      const notUtf8 = JSON.stringify(claimsAt(auth, { jti: "\u00ff" }));
      for (const payload of ["null", "7", '"text"', "[]", "{", "\u00ff", notUtf8]) {
        const input = `${b64(header)}.${Buffer.from(payload, "latin1").toString("base64url")}`;
        const token = `${input}.${createHmac("sha256", secret).update(input).digest("base64url")}`;
        expect(await verdict(auth, token), payload).toBe(40101);
      }
    });

    it("AT-4: the claims the library relies on must be present and well typed", async () => {
      const base = claimsAt(auth) as unknown as Record<string, unknown>;
      for (const claim of ["sub", "sid", "tv", "jti", "iat"]) {
        const { [claim]: _, ...without } = base;
        expect(await verdict(auth, hmacToken(header, without, secret)), claim).toBe(40101);
      }
      for (const [claim, value] of [
        ["tv", "0"],
        ["tv", 1.5],
        ["roles", "admin"],
        ["roles", [1]],
        ["roles", ["reader", 1]],
        ["amr", "pwd"],
        ["amr", [1]],
        ["amr", ["pwd", 1]],
        ["sid", 7],
        ["sub", 7],
        ["jti", 7],
        ["auth_time", "1700000000"],
        ["auth_time", null],
        ["auth_time", true],
      ] as const) {
        expect(
          await verdict(auth, hmacToken(header, { ...base, [claim]: value }, secret)),
          `${claim}=${JSON.stringify(value)}`,
        ).toBe(40101);
      }
    });
  });
});
