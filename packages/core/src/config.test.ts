import { type KeyObject, generateKeyPairSync } from "node:crypto";
import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { createAuth } from "./auth.js";
import type { AuthConfig } from "./config.js";
import { encryptionKey, signingSecret } from "./flows/fixtures.test-support.js";
import { memoryStorage } from "./storage/memory.js";

const valid = (): AuthConfig => ({
  storage: memoryStorage(),
  issuer: "https://api.example.com",
  audience: "example-api",
  secrets: { signing: signingSecret, encryption: encryptionKey },
});

/** Builds an auth from the valid configuration with `patch` spread over it, expecting a TypeError. */
function configError(patch: Record<string, unknown>): TypeError {
  try {
    createAuth({ ...valid(), ...patch } as AuthConfig);
  } catch (error) {
    if (error instanceof TypeError) return error;
    throw error;
  }
  throw new Error("expected createAuth to refuse the configuration");
}

/** The secrets of the valid configuration with `patch` spread over them. */
const secrets = (patch: Record<string, unknown>) => ({
  secrets: { signing: signingSecret, encryption: encryptionKey, ...patch },
});

describe("createAuth configuration", () => {
  it("a valid configuration resolves with the documented defaults", () => {
    const auth = createAuth(valid());
    expect(auth.config.ttl).toEqual({ access: 900, refresh: 30 * 86400, refreshIdle: 7 * 86400, temporary: 300 });
    expect(auth.config.clockToleranceSeconds).toBe(5);
    expect(auth.config.tokenStateCacheSeconds).toBe(0);
    expect(auth.config.password.hashing).toEqual({ memoryCost: 19456, timeCost: 2, parallelism: 1 });
    expect(auth.config.password.minLength).toBe(8);
    expect(auth.config.password.maxBytes).toBe(1024);
    expect(auth.config.totp).toEqual({
      window: 1,
      label: "api.example.com",
      maxAttemptsPerToken: 5,
      recoveryCodesAtSetup: false,
    });
    expect(auth.config.passwordChangeAlias).toBe(false);
    expect(auth.config.throttle.account).toEqual([
      { limit: 5, windowMs: 15 * 60_000 },
      { limit: 20, windowMs: 24 * 3_600_000 },
    ]);
  });

  it("the admin role defaults to admin; another must be a role name of 1 to 64 characters", () => {
    expect(createAuth(valid()).config.adminRole).toBe("admin");
    expect(createAuth({ ...valid(), adminRole: "o".repeat(64) }).config.adminRole).toBe("o".repeat(64));
    for (const adminRole of ["", "o".repeat(65), 5]) {
      expect(() => createAuth({ ...valid(), adminRole: adminRole as string }), String(adminRole)).toThrow(
        /^Portcullis configuration: adminRole must be a role name of 1 to 64 characters; got /,
      );
    }
  });

  it("directory must be a directory client; without one, none", async () => {
    expect(createAuth(valid()).directory).toBeNull();
    const directory = {
      authenticate: async () => ({ status: "no_entry" as const }),
      lookup: async () => null,
      check: async () => ({ ok: true as const }),
      close: async () => {},
    };
    // Given one, auth.directory is it behind directoryLimits (boundedDirectory): it answers as the one given.
    expect(await createAuth({ ...valid(), directory }).directory?.authenticate({} as never, "a", "b")).toEqual({
      status: "no_entry",
    });
    for (const wrong of [null, {}, "ldap://x", { ...directory, close: undefined }, { ...directory, lookup: 1 }]) {
      expect(() => createAuth({ ...valid(), directory: wrong as never }), JSON.stringify(wrong)).toThrow(
        "Portcullis configuration: directory must be a directory client such as ldapDirectory() from @portcullis/ldap",
      );
    }
  });

  it("AT-5: the access lifetime defaults to 15 minutes", () => {
    expect(createAuth(valid()).config.ttl.access).toBe(900);
  });

  it("AT-5: an HMAC secret under 256 bits is refused with a message naming secrets.signing", () => {
    const error = configError(secrets({ signing: "s".repeat(31) }));
    expect(error.message).toMatch(/secrets\.signing/);
    expect(error.message).toMatch(/at least 32 bytes/);
    expect(error.message).toMatch(/got 31 bytes/);
    expect(() => createAuth({ ...valid(), secrets: { signing: "s".repeat(32), encryption: encryptionKey } })).not.toThrow();
  });

  it("AT-5: a short secret among the previous signing keys is refused too", () => {
    const error = configError(secrets({ previousSigning: ["p".repeat(16)] }));
    expect(error.message).toMatch(/secrets\.previousSigning\[0\]/);
  });

  it("AT-5: an asymmetric key of the wrong curve is refused", () => {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "secp384r1" });
    const error = configError(
      secrets({ signing: { alg: "ES256", privateKey: privateKey.export({ format: "pem", type: "pkcs8" }).toString() } }),
    );
    expect(error.message).toMatch(/secrets\.signing/);
    expect(error.message).toMatch(/P-256/);
  });

  it("a missing or malformed issuer is refused, naming issuer", () => {
    expect(configError({ issuer: undefined }).message).toMatch(/issuer is required/);
    expect(configError({ issuer: "" }).message).toMatch(/issuer is required/);
    expect(configError({ issuer: "api.example.com" }).message).toMatch(
      /issuer must start with its scheme, such as "https:\/\/api\.example\.com"/,
    );
  });

  it("a missing audience is refused, naming audience", () => {
    expect(configError({ audience: undefined }).message).toMatch(/audience is required/);
    expect(configError({ audience: ["a", "b"] }).message).toMatch(/audience/);
  });

  it("missing storage or secrets are refused, naming them", () => {
    expect(configError({ storage: undefined }).message).toMatch(/storage is required/);
    expect(configError({ secrets: undefined }).message).toMatch(/secrets is required/);
  });

  it("TOTP-6: a bad encryption key is refused, naming secrets.encryption", () => {
    for (const encryption of ["too-short", "00".repeat(31), "zz".repeat(32), ""]) {
      const error = configError(secrets({ encryption }));
      expect(error.message).toMatch(/secrets\.encryption/);
    }
    expect(configError(secrets({ encryption: undefined })).message).toMatch(/secrets\.encryption is required/);
    const ring = configError(secrets({ encryption: { current: "k3", keys: { k1: encryptionKey } } }));
    expect(ring.message).toMatch(/secrets\.encryption/);
  });

  it("a malformed lifetime is refused, naming the setting and the accepted forms", () => {
    for (const access of ["15 minutes", -1, 0, 1.5, "0m", "15M", "", "15", "-15m", "x15m", "15m ", ["15m"]]) {
      const error = configError({ ttl: { access } });
      expect(error.message).toMatch(/ttl\.access must be a positive whole number of seconds or a string like "15m"/);
      expect(error.message).toContain(JSON.stringify(access));
    }
    expect(configError({ ttl: { refreshIdle: "7 days" } }).message).toMatch(/ttl\.refreshIdle/);
    expect(configError({ ttl: { temporary: -5 } }).message).toMatch(/ttl\.temporary/);
    expect(
      createAuth({ ...valid(), ttl: { access: "90s", refresh: "12h", refreshIdle: "1h", temporary: 120 } }).config.ttl,
    ).toEqual({
      access: 90,
      refresh: 43200,
      refreshIdle: 3600,
      temporary: 120,
    });
  });

  it("an access lifetime not shorter than the refresh lifetime is refused", () => {
    expect(configError({ ttl: { access: "1h", refresh: "1h" } }).message).toMatch(
      /ttl\.access must be shorter than ttl\.refresh/,
    );
    expect(configError({ ttl: { access: "2h", refresh: "1h" } }).message).toMatch(/ttl\.access/);
    expect(configError({ ttl: { access: "25h" } }).message).toMatch(/ttl\.access must be at most 24h/);
  });

  it("the lifetimes' bounds are inclusive: an access token of 24h and a temporary token of 1h are accepted, a second more refused; the session lives 30 days by default", () => {
    expect(createAuth({ ...valid(), ttl: { access: "24h" } }).config.ttl).toMatchObject({ access: 86_400, refresh: 2_592_000 });
    expect(configError({ ttl: { access: "86401s" } }).message).toBe(
      "Portcullis configuration: ttl.access must be at most 24h; got 86401 seconds",
    );
    expect(createAuth({ ...valid(), ttl: { temporary: "1h" } }).config.ttl.temporary).toBe(3600);
    expect(configError({ ttl: { temporary: "3601s" } }).message).toBe(
      "Portcullis configuration: ttl.temporary must be at most 1h; got 3601 seconds",
    );
  });

  it("TV-2: a token-state cache not shorter than the access lifetime is refused", () => {
    expect(configError({ tokenStateCacheSeconds: 900 }).message).toMatch(
      /tokenStateCacheSeconds must be shorter than ttl\.access/,
    );
    expect(configError({ tokenStateCacheSeconds: -1 }).message).toMatch(/tokenStateCacheSeconds/);
    expect(createAuth({ ...valid(), tokenStateCacheSeconds: 899 }).config.tokenStateCacheSeconds).toBe(899);
  });

  it("verifiedTokenCacheSize: 10000 by default, 0 allowed, anything but a whole number from 0 refused", () => {
    expect(createAuth(valid()).config.verifiedTokenCacheSize).toBe(10_000);
    expect(createAuth({ ...valid(), verifiedTokenCacheSize: 0 }).config.verifiedTokenCacheSize).toBe(0);
    for (const wrong of [-1, 1.5, "100", Number.NaN]) {
      expect(configError({ verifiedTokenCacheSize: wrong as never }).message).toMatch(
        /verifiedTokenCacheSize must be a whole number/,
      );
    }
  });

  it("AT-3: a clock tolerance over 60 seconds is refused", () => {
    expect(configError({ clockToleranceSeconds: 61 }).message).toMatch(/clockToleranceSeconds must be at most 60/);
    expect(configError({ clockToleranceSeconds: -1 }).message).toMatch(/clockToleranceSeconds/);
    expect(configError({ clockToleranceSeconds: 2.5 }).message).toMatch(/clockToleranceSeconds/);
    expect(createAuth({ ...valid(), clockToleranceSeconds: 60 }).config.clockToleranceSeconds).toBe(60);
  });

  it("PW-1: argon2 parameters weaker than OWASP's are refused, naming password.hashing", () => {
    for (const hashing of [{ memoryCost: 19455 }, { timeCost: 1 }, { parallelism: 0 }, { memoryCost: 4096, timeCost: 3 }]) {
      const error = configError({ password: { hashing } });
      expect(error.message).toMatch(/password\.hashing/);
      expect(error.message).toMatch(/19456/);
    }
    expect(createAuth({ ...valid(), password: { hashing: { memoryCost: 65536, timeCost: 3 } } }).config.password.hashing).toEqual(
      {
        memoryCost: 65536,
        timeCost: 3,
        parallelism: 1,
      },
    );
  });

  it("PW-1: argon2 parameters that are not whole numbers are refused, not passed on to argon2", () => {
    for (const hashing of [
      { memoryCost: Number.NaN },
      { timeCost: "3" },
      { parallelism: 1.5 },
      { memoryCost: Number.POSITIVE_INFINITY },
    ]) {
      const error = configError({ password: { hashing } });
      expect(error.message).toMatch(/password\.hashing/);
    }
  });

  it("PW-1: an argon2 parameter given as undefined keeps its default, so hashes are not re-made at every login", async () => {
    const hashing = { memoryCost: undefined, timeCost: undefined, parallelism: undefined };
    const auth = createAuth({ ...valid(), password: { hashing } });
    expect(auth.config.password.hashing).toEqual({ memoryCost: 19456, timeCost: 2, parallelism: 1 });
    expect(auth.passwords.needsRehash(await auth.passwords.hash("a long passphrase"))).toBe(false);
  });

  it("PW-3, PW-4: the minimum length and the byte cap are checked", () => {
    expect(configError({ password: { minLength: 6 } }).message).toMatch(/password\.minLength/);
    expect(configError({ password: { maxBytes: 32 } }).message).toMatch(/password\.maxBytes/);
    expect(configError({ password: { maxConcurrentHashes: 0 } }).message).toMatch(/password\.maxConcurrentHashes/);
  });

  it("password.maxConcurrentHashes defaults to the usable cores less one, from 1 to 4, and takes any whole number from 1", () => {
    const expected = Math.min(4, Math.max(1, availableParallelism() - 1));
    expect(createAuth(valid()).config.password.maxConcurrentHashes).toBe(expected);
    expect(createAuth({ ...valid(), password: { maxConcurrentHashes: 9 } }).config.password.maxConcurrentHashes).toBe(9);
  });

  it("PW-4: imported hashes have a queue of their own: password.maxConcurrentImportedHashes defaults to 1 and password.maxQueuedImportedHashes to 16, each checked", () => {
    const { password } = createAuth(valid()).config;
    expect([password.maxConcurrentImportedHashes, password.maxQueuedImportedHashes]).toEqual([1, 16]);
    const set = createAuth({ ...valid(), password: { maxConcurrentImportedHashes: 3, maxQueuedImportedHashes: 0 } }).config;
    expect([set.password.maxConcurrentImportedHashes, set.password.maxQueuedImportedHashes]).toEqual([3, 0]);
    expect(configError({ password: { maxConcurrentImportedHashes: 0 } }).message).toMatch(
      /password\.maxConcurrentImportedHashes/,
    );
    expect(configError({ password: { maxQueuedImportedHashes: -1 } }).message).toMatch(/password\.maxQueuedImportedHashes/);
  });

  it("RL-3: a trusted proxy entry that is not an address or CIDR range is refused, naming http.trustedProxies", () => {
    for (const entry of ["proxy.internal", "10.0.0.0/33", "::/129", "10.0.0.0/x", "10.0.0.0/-1", "300.1.1.1", ""]) {
      const error = configError({ http: { trustedProxies: [entry] } });
      expect(error.message).toMatch(/http\.trustedProxies/);
      expect(error.message).toContain(JSON.stringify(entry));
    }
    expect(() =>
      createAuth({ ...valid(), http: { trustedProxies: ["10.0.0.0/8", "192.0.2.1", "2001:db8::/32", "::1"] } }),
    ).not.toThrow();
  });

  it("RL-1: a throttle tier must have a positive limit and a valid window", () => {
    expect(configError({ throttle: { account: [] } }).message).toMatch(/throttle\.account/);
    expect(configError({ throttle: { account: [{ limit: 0, window: "15m" }] } }).message).toMatch(
      /throttle\.account\[0\]\.limit/,
    );
    expect(configError({ throttle: { ip: [{ limit: 5, window: "soon" }] } }).message).toMatch(/throttle\.ip\[0\]\.window/);
  });

  it("RL-1, RL-5, RL-7: a missing tier and a bad device tier, device token lifetime or write tier are refused, naming that option", () => {
    const tier = { limit: 5, window: "15m" };
    for (const missing of [null, undefined, { window: "15m" }]) {
      expect(configError({ throttle: { account: [tier, missing] } }).message).toBe(
        "Portcullis configuration: throttle.account[1].limit is required: a whole number of at least 1",
      );
    }
    expect(configError({ throttle: { device: [{ limit: 0, window: "15m" }] } }).message).toContain(
      "throttle.device[0].limit must be",
    );
    expect(configError({ throttle: { deviceTokenLifetime: "forever" } }).message).toContain(
      "throttle.deviceTokenLifetime must be",
    );
    expect(configError({ throttle: { unauthenticatedWrites: [{ limit: 5, window: 0 }] } }).message).toContain(
      "throttle.unauthenticatedWrites[0].window must be",
    );
  });

  it("TOTP-5: the recent sign-in window defaults to 5 minutes, may be false, and is at most an hour", () => {
    expect(createAuth(valid()).config.reauthentication).toEqual({
      recentSignInSeconds: 300,
      unsafeAllowTotpEnrolmentWithoutProof: false,
      unsafeAllowPasswordChangeWithoutSecondFactor: false,
    });
    expect(createAuth({ ...valid(), reauthentication: { recentSignIn: false } }).config.reauthentication).toEqual({
      recentSignInSeconds: 0,
      unsafeAllowTotpEnrolmentWithoutProof: false,
      unsafeAllowPasswordChangeWithoutSecondFactor: false,
    });
    expect(createAuth({ ...valid(), reauthentication: { recentSignIn: "1h" } }).config.reauthentication).toEqual({
      recentSignInSeconds: 3600,
      unsafeAllowTotpEnrolmentWithoutProof: false,
      unsafeAllowPasswordChangeWithoutSecondFactor: false,
    });
    for (const recentSignIn of ["61m", "2h", 0, -5, "soon", true]) {
      expect(configError({ reauthentication: { recentSignIn } }).message, String(recentSignIn)).toMatch(
        /reauthentication\.recentSignIn/,
      );
    }
  });

  it("TOTP-3: the TOTP window is 0 or 1", () => {
    expect(configError({ totp: { window: 2 } }).message).toMatch(/totp\.window/);
    expect(createAuth({ ...valid(), totp: { window: 0 } }).config.totp.window).toBe(0);
  });

  it("the base path and status mode are checked", () => {
    expect(configError({ http: { basePath: "api/v1" } }).message).toMatch(/http\.basePath/);
    expect(configError({ http: { statusMode: "always-500" } }).message).toMatch(/http\.statusMode/);
  });

  it("http.openApi defaults to false, and must be true or false", () => {
    expect(createAuth(valid()).config.openApi).toBe(false);
    expect(createAuth({ ...valid(), http: { openApi: true } }).config.openApi).toBe(true);
    for (const openApi of ["true", 1, {}]) {
      expect(configError({ http: { openApi } }).message, String(openApi)).toBe(
        `Portcullis configuration: http.openApi must be true or false; got ${JSON.stringify(openApi)}`,
      );
    }
  });

  it("AT-5: a key that does not fit its alg is refused, naming the setting and the key it needs", () => {
    const pkcs8 = (key: KeyObject) => key.export({ format: "pem", type: "pkcs8" }).toString();
    const spki = (key: KeyObject) => key.export({ format: "pem", type: "spki" }).toString();
    const ec = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const ed = generateKeyPairSync("ed25519");
    expect(configError(secrets({ signing: { alg: "EdDSA", privateKey: pkcs8(ec.privateKey) } })).message).toMatch(
      /secrets\.signing must be an Ed25519 key for alg EdDSA/,
    );
    expect(configError(secrets({ signing: { alg: "ES256", privateKey: pkcs8(ed.privateKey) } })).message).toMatch(
      /secrets\.signing must be an EC P-256 key for alg ES256/,
    );
    const previous = configError(secrets({ previousSigning: [{ alg: "EdDSA", publicKey: spki(ec.publicKey) }] }));
    expect(previous.message).toMatch(/secrets\.previousSigning\[0\] must be an Ed25519 key for alg EdDSA/);
  });

  it("an asymmetric key with an alg other than EdDSA or ES256 is refused, naming the accepted values", () => {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const pem = privateKey.export({ format: "pem", type: "pkcs8" }).toString();
    for (const alg of ["ES384", "RS256", "HS256", undefined]) {
      expect(configError(secrets({ signing: { alg, privateKey: pem } })).message, String(alg)).toMatch(
        /secrets\.signing\.alg must be "EdDSA" or "ES256"/,
      );
    }
    const publicPem = publicKey.export({ format: "pem", type: "spki" }).toString();
    expect(configError(secrets({ previousSigning: [{ alg: "ES384", publicKey: publicPem }] })).message).toMatch(
      /secrets\.previousSigning\[0\]\.alg must be "EdDSA" or "ES256"/,
    );
  });

  it("a missing signing key, or an asymmetric one without privateKey, is refused, naming the accepted forms", () => {
    for (const signing of [undefined, null, 42, { alg: "EdDSA" }, { alg: "ES256", publicKey: "-----BEGIN PUBLIC KEY-----" }]) {
      const error = configError(secrets({ signing }));
      expect(error.message, JSON.stringify(signing)).toMatch(
        /secrets\.signing is required: an HS256 secret of at least 32 bytes, or \{ alg: "EdDSA" \| "ES256", privateKey \}/,
      );
    }
  });

  it("a previous public key that cannot be read is refused, naming the entry and the kind of key expected", () => {
    const error = configError(secrets({ previousSigning: [signingSecret.repeat(2), { alg: "EdDSA", publicKey: "not a key" }] }));
    expect(error.message).toMatch(/secrets\.previousSigning\[1\] is not a readable public key \(PEM or JWK\)/);
  });

  it("AT-2: two signing keys with one kid are refused, naming the kid", () => {
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    const signing = { alg: "EdDSA", privateKey: privateKey.export({ format: "pem", type: "pkcs8" }).toString(), kid: "2026-01" };
    const other = generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey.export({ format: "jwk" });
    const twice = configError(secrets({ signing, previousSigning: [{ alg: "ES256", publicKey: other, kid: "2026-01" }] }));
    expect(twice.message).toMatch(/two signing keys share the kid "2026-01"/);
    // The same key again without a kid: its RFC 7638 thumbprint, or the HMAC secret's kid, repeats.
    const { kid: _, ...unnamed } = signing;
    const thumbprint = configError(
      secrets({ signing: unnamed, previousSigning: [{ alg: "EdDSA", publicKey: publicKey.export({ format: "jwk" }) }] }),
    );
    expect(thumbprint.message).toMatch(/two signing keys share the kid "[\w-]{43}"/);
    expect(configError(secrets({ previousSigning: [signingSecret] })).message).toMatch(/two signing keys share the kid "hs-/);
  });

  it("a previous signing key that is neither a secret nor a key object is refused, naming the entry", () => {
    for (const entry of [null, 42, true]) {
      expect(configError(secrets({ previousSigning: [signingSecret.replace("a", "b"), entry] })).message).toMatch(
        /secrets\.previousSigning\[1\] must be an HS256 secret/,
      );
    }
  });

  it("TOTP-6: an encryption keyring without an object of keys naming the current one is refused, naming secrets.encryption", () => {
    for (const encryption of [null, { current: "k1" }, { current: "k1", keys: null }, { current: "k1", keys: encryptionKey }]) {
      expect(configError(secrets({ encryption })).message, JSON.stringify(encryption)).toMatch(/secrets\.encryption is required/);
    }
  });

  it("TOTP-6: an encryption key with anything around its 64 hex or 43 base64 characters is refused, a key file's trailing newline too", () => {
    const hex = Buffer.from(encryptionKey, "base64url").toString("hex");
    for (const encryption of [`${hex}\n`, ` ${hex}`, `${hex}0`, `${encryptionKey}\n`, ` ${encryptionKey}`, `${encryptionKey}A`]) {
      expect(configError(secrets({ encryption })).message, JSON.stringify(encryption)).toMatch(
        /secrets\.encryption must be 32 random bytes .*, not a passphrase/,
      );
    }
  });

  it("TOTP-6: an encryption key that is not a string is refused, naming its key id: a Buffer read from a key file, a number, a list", () => {
    const hex = Buffer.from(encryptionKey, "base64url").toString("hex");
    for (const key of [Buffer.from(encryptionKey), Buffer.from(hex), 42, [hex]]) {
      const encryption = { current: "k1", keys: { k1: encryptionKey, "2026-01": key } };
      expect(configError(secrets({ encryption })).message, String(key)).toMatch(
        /secrets\.encryption\.keys\["2026-01"\] must be 32 random bytes/,
      );
    }
  });
});
