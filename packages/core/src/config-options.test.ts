import { describe, expect, it } from "vitest";
import { createAuth } from "./auth.js";
import type { AuthConfig } from "./config.js";
import { closestName } from "./config-values.js";
import { encryptionKey, signingSecret } from "./flows/fixtures.test-support.js";
import { memoryStorage } from "./storage/memory.js";

const valid = (): AuthConfig => ({
  storage: memoryStorage(),
  issuer: "https://api.example.com",
  audience: "example-api",
  secrets: { signing: signingSecret, encryption: encryptionKey },
  sweepInterval: false,
});

const passkeys = { rpId: "example.com", rpName: "Example", origins: ["https://app.example.com"] };
const provider = { issuer: "https://id.example.com", clientId: "c", redirectUri: "https://app.example.com/cb" };

/** The message `createAuth` refuses a configuration with, changed by `patch`. */
function refusal(patch: Record<string, unknown>): string {
  try {
    createAuth({ ...valid(), ...patch } as AuthConfig);
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    return (error as TypeError).message;
  }
  throw new Error(`accepted ${JSON.stringify(Object.keys(patch))}`);
}

describe("createAuth refuses options it does not know", () => {
  it("names the closest known option at the top level and at every level below", () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ passkey: passkeys }, "passkey is not an option; did you mean passkeys?"],
      [{ Issuer: "https://api.example.com" }, "Issuer is not an option; did you mean issuer?"],
      [{ onInternalErorr: () => {} }, "onInternalErorr is not an option; did you mean onInternalError?"],
      [{ ttl: { acess: "5m" } }, "ttl.acess is not an option; did you mean ttl.access?"],
      [{ password: { minLenght: 12 } }, "password.minLenght is not an option; did you mean password.minLength?"],
      [
        { password: { hashing: { memory: 65536 } } },
        "password.hashing.memory is not an option; did you mean password.hashing.memoryCost?",
      ],
      [{ totp: { windw: 1 } }, "totp.windw is not an option; did you mean totp.window?"],
      [
        { passkeys: { ...passkeys, origin: ["https://app.example.com"] } },
        "passkeys.origin is not an option; did you mean passkeys.origins?",
      ],
      [
        { oauth: { providers: { corp: provider }, unsafeAllowHttpLoopback: true } },
        "oauth.unsafeAllowHttpLoopback is not an option; did you mean oauth.unsafeAllowHttpLoopbackProviders?",
      ],
      [
        { oauth: { providers: { corp: { ...provider, clientID: "c" } } } },
        "oauth.providers.corp.clientID is not an option; did you mean oauth.providers.corp.clientId?",
      ],
      [
        { oauth: { providers: { corp: { ...provider, claims: { user: "login" } } } } },
        "oauth.providers.corp.claims.user is not an option",
      ],
      [
        { oauth: { providers: { corp: { ...provider, provisioning: { roles: ["x"] } } } } },
        "oauth.providers.corp.provisioning.roles is not an option",
      ],
      [
        { directoryLimits: { maxConcurent: 2 } },
        "directoryLimits.maxConcurent is not an option; did you mean directoryLimits.maxConcurrent?",
      ],
      [
        { reauthentication: { recentSignin: "5m" } },
        "reauthentication.recentSignin is not an option; did you mean reauthentication.recentSignIn?",
      ],
      [{ signUp: { enable: true } }, "signUp.enable is not an option; did you mean signUp.enabled?"],
      [{ throttle: { acount: [] } }, "throttle.acount is not an option; did you mean throttle.account?"],
      [
        { throttle: { account: [{ limit: 5, windows: "15m" }] } },
        "throttle.account[0].windows is not an option; did you mean throttle.account[0].window?",
      ],
      [{ http: { basepath: "/api" } }, "http.basepath is not an option; did you mean http.basePath?"],
      [
        { sessions: { keepFullAddresses: true } },
        "sessions.keepFullAddresses is not an option; did you mean sessions.keepFullAddress?",
      ],
      [{ secrets: { signing: signingSecret, encryption: encryptionKey, previous: [] } }, "secrets.previous is not an option"],
      [
        { secrets: { signing: signingSecret, encryption: { current: "a", key: { a: encryptionKey } } } },
        "secrets.encryption.key is not an option; did you mean secrets.encryption.keys?",
      ],
    ];
    for (const [patch, message] of cases)
      expect(refusal(patch), JSON.stringify(patch)).toContain(`Portcullis configuration: ${message}`);
  });

  it("lists the options when nothing known is close", () => {
    expect(refusal({ sessions: { zzz: true } })).toBe(
      "Portcullis configuration: sessions.zzz is not an option; the options of sessions are keepFullAddress, maxPerUser",
    );
    expect(refusal({ database: "postgres://" })).toMatch(
      /^Portcullis configuration: database is not an option; the options are storage, issuer, /,
    );
  });

  it("accepts every option it documents, set to undefined", () => {
    expect(() =>
      createAuth({ ...valid(), passkeys: undefined, oauth: undefined, debug: undefined, onInternalError: undefined }),
    ).not.toThrow();
  });
});

describe("createAuth refuses other mistakes a newcomer makes", () => {
  it("one value for both the signing and the encryption secret", () => {
    const sameKey = encryptionKey;
    expect(refusal({ secrets: { signing: sameKey, encryption: sameKey } })).toContain(
      "secrets.signing and secrets.encryption must be different secrets",
    );
    expect(refusal({ secrets: { signing: signingSecret, previousSigning: [sameKey], encryption: sameKey } })).toContain(
      "must be different secrets",
    );
    expect(
      refusal({
        secrets: { signing: sameKey, encryption: { current: "b", keys: { a: sameKey, b: encryptionKey.replace(/^./, "A") } } },
      }),
    ).toContain("must be different secrets");
  });

  it("TOTP-6: a plain-text encryption key is refused naming the user's own setting, not an internal key id, and never echoed", () => {
    const message = refusal({ secrets: { signing: signingSecret, encryption: "my encryption passphrase" } });
    expect(message).toContain("secrets.encryption must be 32 random bytes");
    expect(message).not.toContain("k1");
    expect(message).not.toContain("my encryption passphrase");
  });

  it("an origin or issuer without its scheme says so", () => {
    expect(refusal({ passkeys: { ...passkeys, origins: ["app.example.com"] } })).toContain(
      'passkeys.origins[0] must start with its scheme, "https://" (or "http://" for localhost): "https://app.example.com"',
    );
    expect(refusal({ passkeys: { rpId: "localhost", rpName: "x", origins: ["localhost:3000"] } })).toContain(
      "passkeys.origins[0] must start with its scheme",
    );
    expect(refusal({ issuer: "localhost:3000" })).toContain(
      'issuer must start with its scheme, such as "https://localhost:3000"',
    );
  });

  it("an origin that is not a string is not taken for one without its scheme", () => {
    expect(refusal({ passkeys: { ...passkeys, origins: [["app.example.com"]] } })).toBe(
      'Portcullis configuration: passkeys.origins[0] must be an origin such as "https://example.com"; got ["app.example.com"]',
    );
  });

  it("debug must be a boolean", () => {
    expect(refusal({ debug: "yes" })).toBe('Portcullis configuration: debug must be true or false; got "yes"');
  });
});

describe("closestName", () => {
  it("finds a different case, a missing or extra letter, and a swap; nothing for an unrelated name", () => {
    expect(closestName("basepath", ["basePath", "statusMode"])).toBe("basePath");
    expect(closestName("passkey", ["password", "passkeys"])).toBe("passkeys");
    expect(closestName("rpdI", ["rpId", "rpName"])).toBe("rpId");
    expect(closestName("zzz", ["keepFullAddress"])).toBeUndefined();
  });

  it("completes a beginning of four letters or more, whatever its case; a shorter one is too little to go on", () => {
    expect(closestName("pass", ["rpId", "passkeys"])).toBe("passkeys");
    expect(closestName("ONINTERNAL", ["issuer", "onInternalError"])).toBe("onInternalError");
    expect(closestName("pas", ["passkeys"])).toBeUndefined();
  });

  it("prefers the name with the same letters over one it begins", () => {
    expect(closestName("Password", ["passwordPolicy", "password"])).toBe("password");
  });

  it("takes the closest of the names within reach, and the first listed of two equally close", () => {
    expect(closestName("mxLength", ["maxLength", "minLength"])).toBe("maxLength");
    expect(closestName("mxLength", ["minLength", "maxLength"])).toBe("maxLength");
    expect(closestName("mLength", ["minLength", "maxLength"])).toBe("minLength");
    expect(closestName("mLength", ["maxLength", "minLength"])).toBe("maxLength");
  });

  it("reaches a third of a long name's letters, and no further", () => {
    expect(closestName("inLeng", ["minLength"])).toBe("minLength");
    expect(closestName("nLeng", ["minLength"])).toBeUndefined();
  });
});
