import { createHmac, hkdfSync, randomBytes } from "node:crypto";
import type { AuthenticationOverrides, RegistrationOverrides, SoftwareAuthenticator } from "@portcullis/testing";
import type { PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/server";
import { describe, expect, it, vi } from "vitest";
import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { AmrValue } from "../step-up/amr.js";
import { memoryStorage } from "../storage/memory.js";
import type { PasskeyRecord } from "../storage/types.js";
import type { TokenSet } from "../tokens/issue-tokens.js";
import { userHandleOf } from "../webauthn/ceremony.js";
import type { PasskeyConfig } from "../webauthn/passkey-config.js";
import {
  type AuthOverrides,
  type Harness,
  addUser,
  authError,
  enrolTotp,
  generousThrottle,
  goodPassword,
  makeAuth,
  nextCode,
  outcome,
  shownUser,
  signingSecret,
  slowStorage,
  tally,
  wrongCodeAt,
} from "./fixtures.test-support.js";
import { type LoginResult, login } from "./login.js";
import { setUserDisabled } from "./manage-users.js";
import {
  makeAuthenticator,
  makePasskeyAuth,
  origin,
  passkeySignIn,
  registerPasskey,
  rpId,
  userWithPasskey,
} from "./passkeys.test-support.js";
import { verifyAccessToken } from "./verify-access-token.js";
import { verifyTotp } from "./verify-totp.js";
import { webauthnBegin, webauthnFinish } from "./webauthn-login.js";
import { webauthnRegisterBegin, webauthnRegisterFinish } from "./webauthn-register.js";

/** A passkey harness whose account throttle allows the many failures these tests make on purpose. */
function passkeyHarness(passkeysOverrides: Partial<PasskeyConfig> = {}, overrides: AuthOverrides = {}): Harness {
  return makePasskeyAuth({ throttle: generousThrottle, ...overrides }, passkeysOverrides);
}

/** A harness whose storage waits before every call, so that concurrent flows interleave. */
function slowHarness(passkeysOverrides: Partial<PasskeyConfig> = {}): Harness {
  return passkeyHarness(passkeysOverrides, { storage: slowStorage(memoryStorage()) });
}

/** Begins a ceremony (discoverable unless `username`), lets the authenticator answer with `overrides`, and finishes it. */
async function signInWith(
  auth: Auth,
  authenticator: SoftwareAuthenticator,
  overrides: AuthenticationOverrides = {},
  username?: string,
): Promise<LoginResult> {
  const { ceremonyId, options } = await webauthnBegin(auth, { username });
  return webauthnFinish(auth, { ceremonyId, response: authenticator.authenticate(options, overrides) });
}

function tokensOf(result: LoginResult): TokenSet {
  if (result.status !== "authenticated") throw new Error(`expected a session, got ${result.status}`);
  return result.tokens;
}

/** The `amr` of the access token of a completed sign-in, read through the real verification. */
async function amrOf(auth: Auth, result: LoginResult | TokenSet): Promise<readonly AmrValue[]> {
  const tokens = "status" in result ? tokensOf(result) : result;
  return (await verifyAccessToken(auth, { token: tokens.accessToken })).amr;
}

async function storedPasskey(harness: Harness, id: string): Promise<PasskeyRecord> {
  const passkey = await harness.storage.passkeys.findById(id);
  if (!passkey) throw new Error(`no stored passkey ${id}`);
  return passkey;
}

/** Registers a passkey through the real flows like `registerPasskey`, with registration overrides (flags, counter). */
async function registerWith(
  auth: Auth,
  userId: string,
  authenticator: SoftwareAuthenticator,
  overrides: RegistrationOverrides,
): Promise<string> {
  const { ceremonyId, options } = await webauthnRegisterBegin(auth, { userId, label: "Key", password: goodPassword });
  const passkey = await webauthnRegisterFinish(auth, {
    userId,
    ceremonyId,
    response: authenticator.register(options, overrides),
  });
  return passkey.id;
}

/** Gives the authenticator a credential for the RP that the server never saw; returns its id. */
function unregisteredCredential(authenticator: SoftwareAuthenticator, userHandle = "c3RyYW5nZXI"): string {
  return authenticator.register({
    rp: { id: rpId, name: "Example" },
    user: { id: userHandle, name: "stranger", displayName: "stranger" },
    challenge: "AAAAAAAAAAAAAAAAAAAAAA",
    pubKeyCredParams: [],
  }).id;
}

/** A base64url string of `size` random bytes. */
const randomBase64url = (size = 32) => randomBytes(size).toString("base64url");

describe("webauthnFinish", () => {
  it("a user-verified discoverable passkey signs in with amr hwk and user", async () => {
    const harness = makePasskeyAuth();
    const { userId, authenticator } = await userWithPasskey(harness);
    const result = await passkeySignIn(harness.auth, authenticator);
    if (result.status !== "authenticated") throw new Error(result.status);
    const access = await verifyAccessToken(harness.auth, { token: result.tokens.accessToken });
    expect(access).toMatchObject({ userId, amr: ["hwk", "user", "mfa"] });
  });

  it("PW-7: a passkey sign-in mints fresh tokens; the ceremony id never becomes a token", async () => {
    const harness = passkeyHarness();
    const { userId, authenticator } = await userWithPasskey(harness);
    const { ceremonyId, options } = await webauthnBegin(harness.auth, {});
    const tokens = tokensOf(await webauthnFinish(harness.auth, { ceremonyId, response: authenticator.authenticate(options) }));
    const { createdAt } = (await harness.storage.users.findById(userId)) as { createdAt: number };
    expect(tokens.user).toEqual(shownUser({ id: userId, username: "alice", createdAt }));
    expect(tokens.accessToken).not.toContain(ceremonyId);
    expect(await outcome(verifyAccessToken(harness.auth, { token: ceremonyId }))).toBe(ErrorCode.InvalidToken);
  });
});

describe("WA-1: the ceremony and its challenge", () => {
  it("WA-1: the challenge is 32 bytes drawn from the random source, different for every ceremony", async () => {
    const drawn: string[] = [];
    const harness = passkeyHarness(
      {},
      {
        randomBytes: (size: number) => {
          const bytes = new Uint8Array(randomBytes(size));
          drawn.push(Buffer.from(bytes).toString("base64url"));
          return bytes;
        },
      },
    );
    await userWithPasskey(harness);
    const challenges: string[] = [];
    for (const username of [undefined, "alice", "nobody", undefined]) {
      const { options } = await webauthnBegin(harness.auth, { username });
      const bytes = Buffer.from(options.challenge, "base64url");
      expect(bytes).toHaveLength(32);
      expect(bytes.toString("base64url")).toBe(options.challenge);
      expect(drawn).toContain(options.challenge);
      challenges.push(options.challenge);
    }
    expect(new Set(challenges).size).toBe(challenges.length);
  });

  it("WA-1: a replayed response, or a second answer to a finished ceremony, is refused 40100", async () => {
    const harness = passkeyHarness();
    // Counters stay 0, so that the counter check (WA-5) cannot be what refuses the replay.
    const { authenticator } = await userWithPasskey(harness, "alice", makeAuthenticator({ counter: "zero" }));
    const { ceremonyId, options } = await webauthnBegin(harness.auth, {});
    const response = authenticator.authenticate(options);
    tokensOf(await webauthnFinish(harness.auth, { ceremonyId, response }));
    const replay = await authError(webauthnFinish(harness.auth, { ceremonyId, response }));
    expect(replay.code).toBe(ErrorCode.AuthenticationFailed);
    const fresh = authenticator.authenticate(options);
    expect(await outcome(webauthnFinish(harness.auth, { ceremonyId, response: fresh }))).toBe(40100);
    // The same assertion under a new ceremony id is refused too: its challenge is the old one's.
    const next = await webauthnBegin(harness.auth, {});
    expect(await outcome(webauthnFinish(harness.auth, { ceremonyId: next.ceremonyId, response }))).toBe(40100);
  });

  it("WA-1: a ceremony expires after ceremonyTtl, 5 minutes by default", async () => {
    const harness = passkeyHarness();
    const { authenticator } = await userWithPasskey(harness);
    const inTime = await webauthnBegin(harness.auth, {});
    const late = await webauthnBegin(harness.auth, {});
    expect(inTime.options.timeout).toBe(300_000);
    harness.clock.advance(299_999);
    tokensOf(
      await webauthnFinish(harness.auth, {
        ceremonyId: inTime.ceremonyId,
        response: authenticator.authenticate(inTime.options),
      }),
    );
    harness.clock.advance(1);
    const error = await authError(
      webauthnFinish(harness.auth, { ceremonyId: late.ceremonyId, response: authenticator.authenticate(late.options) }),
    );
    expect(error.code).toBe(ErrorCode.AuthenticationFailed);
  });

  it("WA-1: a custom ceremonyTtl sets both the browser timeout and the expiry", async () => {
    const harness = passkeyHarness({ ceremonyTtl: "90s" });
    const { authenticator } = await userWithPasskey(harness);
    const inTime = await webauthnBegin(harness.auth, {});
    const late = await webauthnBegin(harness.auth, {});
    expect(inTime.options.timeout).toBe(90_000);
    harness.clock.advance(89_999);
    tokensOf(
      await webauthnFinish(harness.auth, {
        ceremonyId: inTime.ceremonyId,
        response: authenticator.authenticate(inTime.options),
      }),
    );
    harness.clock.advance(1);
    const response = authenticator.authenticate(late.options);
    expect(await outcome(webauthnFinish(harness.auth, { ceremonyId: late.ceremonyId, response }))).toBe(40100);
  });

  it("WA-1: a ceremony is spent by a failed finish: a correct answer afterwards is refused", async () => {
    const harness = passkeyHarness();
    const { authenticator } = await userWithPasskey(harness);
    const { ceremonyId, options } = await webauthnBegin(harness.auth, {});
    const wrong = authenticator.authenticate(options, { origin: "https://evil.example" });
    expect(await outcome(webauthnFinish(harness.auth, { ceremonyId, response: wrong }))).toBe(40100);
    const right = authenticator.authenticate(options);
    expect(await outcome(webauthnFinish(harness.auth, { ceremonyId, response: right }))).toBe(40100);
    // A malformed response (40002) spends its ceremony as well.
    const second = await webauthnBegin(harness.auth, {});
    expect(await outcome(webauthnFinish(harness.auth, { ceremonyId: second.ceremonyId, response: { id: 1 } }))).toBe(40002);
    const afterMalformed = authenticator.authenticate(second.options);
    expect(await outcome(webauthnFinish(harness.auth, { ceremonyId: second.ceremonyId, response: afterMalformed }))).toBe(40100);
    tokensOf(await passkeySignIn(harness.auth, authenticator));
  });

  it("WA-1: a registration ceremony is refused at login finish and stays usable for registration", async () => {
    const harness = passkeyHarness();
    const { userId, passkey, authenticator } = await userWithPasskey(harness);
    const registration = await webauthnRegisterBegin(harness.auth, { userId, label: "Phone", password: goodPassword });
    // A valid assertion over the registration ceremony's own challenge, by the user's own passkey.
    const request: PublicKeyCredentialRequestOptionsJSON = {
      rpId,
      challenge: registration.options.challenge,
      allowCredentials: [{ id: passkey.id, type: "public-key" }],
    };
    const response = authenticator.authenticate(request);
    const error = await authError(webauthnFinish(harness.auth, { ceremonyId: registration.ceremonyId, response }));
    expect(error.code).toBe(ErrorCode.AuthenticationFailed);
    const phone = await webauthnRegisterFinish(harness.auth, {
      userId,
      ceremonyId: registration.ceremonyId,
      response: makeAuthenticator().register(registration.options),
    });
    expect(phone.label).toBe("Phone");
  });

  it("WA-1: 20 concurrent finishes of one ceremony give exactly one session", async () => {
    const harness = slowHarness();
    const { authenticator } = await userWithPasskey(harness, "alice", makeAuthenticator({ counter: "zero" }));
    const { ceremonyId, options } = await webauthnBegin(harness.auth, {});
    const responses = Array.from({ length: 20 }, () => authenticator.authenticate(options));
    const results = await tally(responses.map((response) => webauthnFinish(harness.auth, { ceremonyId, response })));
    expect(results).toEqual(
      new Map<number | "fulfilled", number>([
        ["fulfilled", 1],
        [40100, 19],
      ]),
    );
    expect(harness.events.filter((event) => event.type === "login.succeeded")).toHaveLength(1);
  });

  it("WA-1: a ceremony begun on one instance finishes on another sharing the storage, once", async () => {
    const first = passkeyHarness();
    const second = passkeyHarness({}, { storage: first.storage, clock: first.clock });
    const { userId, authenticator } = await userWithPasskey(first);
    const { ceremonyId, options } = await webauthnBegin(first.auth, {});
    const response = authenticator.authenticate(options);
    const result = await webauthnFinish(second.auth, { ceremonyId, response });
    expect(tokensOf(result).user.id).toBe(userId);
    expect(await outcome(webauthnFinish(first.auth, { ceremonyId, response }))).toBe(40100);
  });

  it("WA-1: a missing ceremony id (undefined, empty, a number, null) is 40002; an unknown one is 40100", async () => {
    const harness = passkeyHarness();
    const { authenticator } = await userWithPasskey(harness);
    const { options } = await webauthnBegin(harness.auth, {});
    const response = authenticator.authenticate(options);
    for (const ceremonyId of [undefined, "", 42, null]) {
      const error = await authError(webauthnFinish(harness.auth, { ceremonyId: ceremonyId as unknown as string, response }));
      expect(error.code, String(ceremonyId)).toBe(ErrorCode.MalformedParameter);
    }
    expect(await outcome(webauthnFinish(harness.auth, { ceremonyId: randomBase64url(), response }))).toBe(40100);
  });
});

describe("WA-2: type, challenge, origin and rpId hash", () => {
  const refused: { what: string; overrides: AuthenticationOverrides }[] = [
    { what: "the type webauthn.create", overrides: { type: "webauthn.create" } },
    { what: "an empty type", overrides: { type: "" } },
    { what: "another challenge", overrides: { challenge: randomBase64url() } },
    { what: "a foreign origin", overrides: { origin: "https://evil.example" } },
    { what: "an origin under the rpId that is not configured", overrides: { origin: "https://other.example.com" } },
    { what: "the rpId's own origin, not configured", overrides: { origin: "https://example.com" } },
    { what: "the configured host over http", overrides: { origin: "http://app.example.com" } },
    { what: "the configured host on another port", overrides: { origin: "https://app.example.com:8443" } },
    { what: "the configured origin with a trailing slash", overrides: { origin: `${origin}/` } },
    { what: "the rpId hash of another domain", overrides: { rpId: "evil.example" } },
    { what: "the rpId hash of the origin's host instead of the rpId", overrides: { rpId: "app.example.com" } },
  ];

  for (const { what, overrides } of refused) {
    it(`WA-2: an assertion with ${what} is refused 40100`, async () => {
      const harness = passkeyHarness();
      const { authenticator } = await userWithPasskey(harness);
      const error = await authError(signInWith(harness.auth, authenticator, overrides));
      expect(error.code).toBe(ErrorCode.AuthenticationFailed);
      expect(error.message).toBe("The passkey was not accepted");
      // The same passkey without the fault signs in: the fault alone was refused.
      tokensOf(await signInWith(harness.auth, authenticator));
    });
  }

  it("WA-2: the challenge of another live ceremony is refused", async () => {
    const harness = passkeyHarness();
    const { authenticator } = await userWithPasskey(harness);
    const mine = await webauthnBegin(harness.auth, {});
    const other = await webauthnBegin(harness.auth, {});
    const response = authenticator.authenticate(mine.options, { challenge: other.options.challenge });
    expect(await outcome(webauthnFinish(harness.auth, { ceremonyId: mine.ceremonyId, response }))).toBe(40100);
    const own = authenticator.authenticate(other.options);
    tokensOf(await webauthnFinish(harness.auth, { ceremonyId: other.ceremonyId, response: own }));
  });

  it("WA-2: every configured origin is accepted", async () => {
    const harness = passkeyHarness({ origins: [origin, "https://login.example.com"] });
    const { authenticator } = await userWithPasskey(harness);
    tokensOf(await signInWith(harness.auth, authenticator, { origin: "https://login.example.com" }));
    tokensOf(await signInWith(harness.auth, authenticator, { origin }));
  });
});

describe("WA-3: user presence, user verification and backup flags", () => {
  it("WA-3: an assertion without user presence is refused, whatever userVerification says", async () => {
    for (const userVerification of ["required", "preferred"] as const) {
      const harness = passkeyHarness({ userVerification });
      const { authenticator } = await userWithPasskey(harness);
      for (const flags of [{ up: false }, { up: false, uv: false }]) {
        expect(await outcome(signInWith(harness.auth, authenticator, { flags })), userVerification).toBe(40100);
      }
      tokensOf(await signInWith(harness.auth, authenticator));
    }
  });

  it("WA-3: user verification is required by default: an assertion without UV is refused", async () => {
    const harness = passkeyHarness();
    const { authenticator } = await userWithPasskey(harness);
    const { options } = await webauthnBegin(harness.auth, {});
    expect(options.userVerification).toBe("required");
    const error = await authError(signInWith(harness.auth, authenticator, { flags: { uv: false } }));
    expect(error.code).toBe(ErrorCode.AuthenticationFailed);
    expect(harness.events.some((event) => event.type === "login.succeeded")).toBe(false);
  });

  it('WA-3: with userVerification "preferred", a sign-in without UV is accepted with amr hwk only', async () => {
    const harness = passkeyHarness({ userVerification: "preferred" });
    const { userId, authenticator } = await userWithPasskey(harness);
    const { options } = await webauthnBegin(harness.auth, {});
    expect(options.userVerification).toBe("preferred");
    const result = await signInWith(harness.auth, authenticator, { flags: { uv: false } });
    expect(tokensOf(result).user.id).toBe(userId);
    expect(await amrOf(harness.auth, result)).toEqual(["hwk"]);
  });

  it('WA-3: with "preferred", a sign-in without UV asks a TOTP user for the code, which completes it with amr hwk and otp', async () => {
    const harness = passkeyHarness({ userVerification: "preferred" });
    const { userId, authenticator } = await userWithPasskey(harness);
    const { secret } = await enrolTotp(harness.auth, userId);
    const result = await signInWith(harness.auth, authenticator, { flags: { uv: false } });
    expect(result).toEqual({ status: "totp_required", tempToken: expect.any(String) });
    if (result.status !== "totp_required") throw new Error(result.status);
    expect(harness.events.some((event) => event.type === "login.succeeded")).toBe(false);
    expect(await outcome(verifyAccessToken(harness.auth, { token: result.tempToken }))).toBe(ErrorCode.InvalidToken);
    const tokens = await verifyTotp(harness.auth, { tempToken: result.tempToken, code: nextCode(harness, secret) });
    expect(tokens.user).toMatchObject({ id: userId, totpEnabled: true });
    expect(await amrOf(harness.auth, tokens)).toEqual(["hwk", "otp", "mfa"]);
  });

  it("WA-3: a user-verified passkey is a complete sign-in for a TOTP user, amr hwk and user", async () => {
    for (const userVerification of ["required", "preferred"] as const) {
      const harness = passkeyHarness({ userVerification });
      const { userId, authenticator } = await userWithPasskey(harness);
      await enrolTotp(harness.auth, userId);
      const result = await signInWith(harness.auth, authenticator);
      expect(result.status, userVerification).toBe("authenticated");
      expect(await amrOf(harness.auth, result)).toEqual(["hwk", "user", "mfa"]);
    }
  });

  it("WA-3: BE=0 with BS=1 is refused; BE=1 with BS=1 is accepted", async () => {
    const harness = passkeyHarness();
    const { authenticator } = await userWithPasskey(harness);
    const error = await authError(signInWith(harness.auth, authenticator, { flags: { be: false, bs: true } }));
    expect(error.code).toBe(ErrorCode.AuthenticationFailed);
    tokensOf(await signInWith(harness.auth, authenticator, { flags: { be: true, bs: true } }));
  });
});

describe("WA-4: the credential belongs to the user who answers", () => {
  it("WA-4: a passkey of user A answering with user B's handle is refused", async () => {
    const harness = passkeyHarness();
    const alice = await userWithPasskey(harness, "alice");
    const bob = await userWithPasskey(harness, "bob");
    const bobsHandle = userHandleOf(bob.userId);
    expect(await outcome(signInWith(harness.auth, alice.authenticator, { userHandle: bobsHandle }))).toBe(40100);
    expect(await outcome(signInWith(harness.auth, alice.authenticator, { userHandle: bobsHandle }, "alice"))).toBe(40100);
    expect(await outcome(signInWith(harness.auth, alice.authenticator, { userHandle: randomBase64url(16) }))).toBe(40100);
    expect(harness.events.filter((event) => event.type === "login.failed").map((event) => event.userId)).toEqual([
      alice.userId,
      alice.userId,
      alice.userId,
    ]);
    expect(tokensOf(await signInWith(harness.auth, alice.authenticator)).user.id).toBe(alice.userId);
  });

  it("WA-4: a discoverable sign-in without a user handle is refused", async () => {
    const harness = passkeyHarness();
    const { authenticator } = await userWithPasskey(harness);
    expect(await outcome(signInWith(harness.auth, authenticator, { userHandle: null }))).toBe(40100);
    // An empty user handle is no user handle.
    expect(await outcome(signInWith(harness.auth, authenticator, { userHandle: "" }))).toBe(40100);
    // A ceremony begun for a name that is nobody's lists decoys no authenticator holds (EN-4); a
    // client that answers it anyway with a real passkey is held to the same rule.
    const carol = await userWithPasskey(harness, "carol");
    const anyway = { userHandle: null, credentialId: carol.passkey.id };
    expect(await outcome(signInWith(harness.auth, carol.authenticator, anyway, "nobody"))).toBe(40100);
  });

  it("WA-4: a ceremony begun for user B is not answered by user A's passkey", async () => {
    const harness = passkeyHarness();
    const alice = await userWithPasskey(harness, "alice");
    await userWithPasskey(harness, "bob");
    for (const userHandle of [undefined, null]) {
      const { ceremonyId, options } = await webauthnBegin(harness.auth, { username: "bob" });
      const response = alice.authenticator.authenticate(options, { credentialId: alice.passkey.id, userHandle });
      expect(await outcome(webauthnFinish(harness.auth, { ceremonyId, response })), String(userHandle)).toBe(40100);
    }
    tokensOf(await signInWith(harness.auth, alice.authenticator, {}, "alice"));
  });

  it("WA-4: a ceremony begun for a username may omit the user handle, or send an empty one", async () => {
    const harness = passkeyHarness();
    const { userId, authenticator } = await userWithPasskey(harness);
    const result = await signInWith(harness.auth, authenticator, { userHandle: null }, "alice");
    expect(tokensOf(result).user.id).toBe(userId);
    expect(await amrOf(harness.auth, result)).toEqual(["hwk", "user", "mfa"]);
    // @simplewebauthn/browser sends "" for the empty user handle some security keys return.
    expect(tokensOf(await signInWith(harness.auth, authenticator, { userHandle: "" }, "alice")).user.id).toBe(userId);
  });

  it("WA-4: an assertion signed by another key than the credential's is refused", async () => {
    const harness = passkeyHarness();
    const { passkey, authenticator } = await userWithPasskey(harness);
    const otherKey = unregisteredCredential(authenticator);
    const error = await authError(signInWith(harness.auth, authenticator, { credentialId: passkey.id, signWith: otherKey }));
    expect(error.code).toBe(ErrorCode.AuthenticationFailed);
    expect((await storedPasskey(harness, passkey.id)).counter).toBe(0);
    tokensOf(await signInWith(harness.auth, authenticator, { credentialId: passkey.id }));
  });

  it("WA-4: an unknown credential id is refused 40100 and reported with userId null", async () => {
    const harness = passkeyHarness();
    const { userId, passkey, authenticator } = await userWithPasskey(harness);
    const never = unregisteredCredential(authenticator, userHandleOf(userId));
    expect(await outcome(signInWith(harness.auth, authenticator, { credentialId: never }))).toBe(40100);
    // A passkey removed from storage is unknown too, even though its signature is good.
    await harness.storage.passkeys.delete(userId, passkey.id);
    const error = await authError(signInWith(harness.auth, authenticator, { credentialId: passkey.id }));
    expect(error.code).toBe(ErrorCode.AuthenticationFailed);
    const failures = harness.events.filter((event) => event.type === "login.failed");
    expect(failures.map((event) => [event.userId, event.reason])).toEqual([
      [null, "invalid_credentials"],
      [null, "invalid_credentials"],
    ]);
  });
});

describe("WA-5: the signature counter", () => {
  it("WA-5: a counter lower than the stored one is refused, and the stored counter is unchanged", async () => {
    const harness = passkeyHarness();
    const { passkey, authenticator } = await userWithPasskey(harness);
    tokensOf(await signInWith(harness.auth, authenticator, { counter: 10 }));
    const before = await storedPasskey(harness, passkey.id);
    expect(before.counter).toBe(10);
    harness.clock.advance(1_000);
    for (const counter of [5, 0]) {
      expect(await outcome(signInWith(harness.auth, authenticator, { counter })), String(counter)).toBe(40100);
    }
    expect(await storedPasskey(harness, passkey.id)).toEqual(before);
  });

  it("WA-5: a counter equal to the stored non-zero one is refused", async () => {
    const harness = passkeyHarness();
    const { passkey, authenticator } = await userWithPasskey(harness);
    tokensOf(await signInWith(harness.auth, authenticator, { counter: 7 }));
    expect(await outcome(signInWith(harness.auth, authenticator, { counter: 7 }))).toBe(40100);
    expect((await storedPasskey(harness, passkey.id)).counter).toBe(7);
    tokensOf(await signInWith(harness.auth, authenticator, { counter: 8 }));
  });

  it("WA-5: counters that are both 0 are accepted again and again", async () => {
    const harness = passkeyHarness();
    const { passkey, authenticator } = await userWithPasskey(harness, "alice", makeAuthenticator({ counter: "zero" }));
    for (let round = 0; round < 3; round += 1) {
      harness.clock.advance(1_000);
      tokensOf(await signInWith(harness.auth, authenticator));
      const stored = await storedPasskey(harness, passkey.id);
      expect(stored.counter).toBe(0);
      expect(stored.lastUsedAt).toBe(harness.clock.now);
    }
    // Once a counter was seen, 0 no longer passes.
    tokensOf(await signInWith(harness.auth, authenticator, { counter: 1 }));
    expect(await outcome(signInWith(harness.auth, authenticator, { counter: 0 }))).toBe(40100);
  });

  it('WA-5: under "allow-stale" a regression is accepted and the stored counter never goes down', async () => {
    const harness = passkeyHarness({ counterPolicy: "allow-stale" });
    const { passkey, authenticator } = await userWithPasskey(harness);
    tokensOf(await signInWith(harness.auth, authenticator, { counter: 10 }));
    for (const counter of [5, 10, 0]) {
      harness.clock.advance(1_000);
      tokensOf(await signInWith(harness.auth, authenticator, { counter }));
      const stored = await storedPasskey(harness, passkey.id);
      expect(stored.counter, String(counter)).toBe(10);
      expect(stored.lastUsedAt).toBe(harness.clock.now);
    }
    tokensOf(await signInWith(harness.auth, authenticator, { counter: 12 }));
    expect((await storedPasskey(harness, passkey.id)).counter).toBe(12);
  });

  it("WA-5: a sign-in stores the new counter, the use time and the backup state", async () => {
    const harness = passkeyHarness();
    const userId = await addUser(harness.auth, "alice");
    const authenticator = makeAuthenticator();
    const id = await registerWith(harness.auth, userId, authenticator, { flags: { be: true, bs: false } });
    const registered = await storedPasskey(harness, id);
    expect(registered).toMatchObject({ counter: 0, lastUsedAt: null, backupEligible: true, backupState: false });
    const signedInAt = harness.clock.advance(60_000);
    tokensOf(await signInWith(harness.auth, authenticator, { flags: { bs: true } }));
    expect(await storedPasskey(harness, id)).toEqual({ ...registered, counter: 1, lastUsedAt: signedInAt, backupState: true });
    const laterAt = harness.clock.advance(60_000);
    tokensOf(await signInWith(harness.auth, authenticator, { counter: 5 }));
    expect(await storedPasskey(harness, id)).toEqual({ ...registered, counter: 5, lastUsedAt: laterAt, backupState: false });
  });

  it('WA-5: two concurrent sign-ins on two ceremonies with the same counter: one succeeds under "reject"', async () => {
    const harness = slowHarness();
    const { passkey, authenticator } = await userWithPasskey(harness);
    const ceremonies = await Promise.all([webauthnBegin(harness.auth, {}), webauthnBegin(harness.auth, {})]);
    const finishes = ceremonies.map(({ ceremonyId, options }) =>
      webauthnFinish(harness.auth, { ceremonyId, response: authenticator.authenticate(options, { counter: 7 }) }),
    );
    expect(await tally(finishes)).toEqual(
      new Map<number | "fulfilled", number>([
        ["fulfilled", 1],
        [40100, 1],
      ]),
    );
    expect((await storedPasskey(harness, passkey.id)).counter).toBe(7);
  });

  it("WA-5: a sign-in overtaken between reading the counter and storing it is refused, and never lowers the counter", async () => {
    const storage = memoryStorage();
    const harness = passkeyHarness({}, { storage });
    const { passkey, authenticator } = await userWithPasskey(harness);
    const [first, second] = await Promise.all([webauthnBegin(harness.auth, {}), webauthnBegin(harness.auth, {})]);
    // The first sign-in is held after it read the passkey (at reading its account, which comes
    // next) until the second one is done.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const findById = storage.users.findById.bind(storage.users);
    let calls = 0;
    storage.users.findById = async (...args) => {
      calls += 1;
      if (calls === 1) await held;
      return findById(...args);
    };
    const slow = outcome(
      webauthnFinish(harness.auth, {
        ceremonyId: first.ceremonyId,
        response: authenticator.authenticate(first.options, { counter: 7 }),
      }),
    );
    await vi.waitFor(() => expect(calls).toBe(1));
    const fast = authenticator.authenticate(second.options, { counter: 8 });
    tokensOf(await webauthnFinish(harness.auth, { ceremonyId: second.ceremonyId, response: fast }));
    release();
    expect(await slow).toBe(40100);
    expect((await storedPasskey(harness, passkey.id)).counter).toBe(8);
  });

  it('WA-5: under "allow-stale" the same race gives two sessions and the counter stays put', async () => {
    const harness = slowHarness({ counterPolicy: "allow-stale" });
    const { passkey, authenticator } = await userWithPasskey(harness);
    const ceremonies = await Promise.all([webauthnBegin(harness.auth, {}), webauthnBegin(harness.auth, {})]);
    const finishes = ceremonies.map(({ ceremonyId, options }) =>
      webauthnFinish(harness.auth, { ceremonyId, response: authenticator.authenticate(options, { counter: 7 }) }),
    );
    expect(await tally(finishes)).toEqual(new Map<number | "fulfilled", number>([["fulfilled", 2]]));
    expect((await storedPasskey(harness, passkey.id)).counter).toBe(7);
  });
});

describe("EN-4: begin answers alike for every username", () => {
  /** The keys and value types of a begin answer, recursively for the options. */
  function shapeOf(value: unknown): unknown {
    if (Array.isArray(value)) return "array";
    if (value !== null && typeof value === "object") {
      return Object.fromEntries(
        Object.entries(value)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([key, item]) => [key, shapeOf(item)]),
      );
    }
    return typeof value;
  }

  it("EN-4: an unknown username, a user without passkeys and no username get the shape a user with passkeys gets", async () => {
    const harness = passkeyHarness();
    await userWithPasskey(harness, "alice");
    await addUser(harness.auth, "bob");
    const known = await webauthnBegin(harness.auth, { username: "alice" });
    const others = [
      await webauthnBegin(harness.auth, { username: "nobody" }),
      await webauthnBegin(harness.auth, { username: "bob" }),
      await webauthnBegin(harness.auth, {}),
      await webauthnBegin(harness.auth, { username: "" }),
    ];
    for (const other of others) {
      expect(shapeOf(other)).toEqual(shapeOf(known));
      expect(Object.keys(other.options).sort()).toEqual(Object.keys(known.options).sort());
      expect(other.ceremonyId).toHaveLength(known.ceremonyId.length);
      expect(other.options).toMatchObject({ rpId, userVerification: "required", timeout: 300_000 });
    }
  });

  it("EN-4: a known user's options list its passkeys; without a username the list is empty", async () => {
    const harness = passkeyHarness();
    const { userId, passkey } = await userWithPasskey(harness, "alice");
    const second = await registerPasskey(harness.auth, userId, makeAuthenticator(), "Phone");
    await userWithPasskey(harness, "bob");
    for (const username of ["alice", "ALICE"]) {
      const { options } = await webauthnBegin(harness.auth, { username });
      expect(options.allowCredentials?.map((credential) => credential.id).sort()).toEqual([passkey.id, second.id].sort());
      expect(options.allowCredentials?.every((credential) => credential.type === "public-key")).toBe(true);
      expect(options.allowCredentials?.[0]?.transports).toEqual(["internal"]);
    }
    expect((await webauthnBegin(harness.auth, {})).options.allowCredentials).toEqual([]);
  });

  it("EN-4: an unknown username and a user without passkeys get credential ids that look real: derived from the name, the same each time, none of them anyone's", async () => {
    const harness = passkeyHarness();
    await userWithPasskey(harness, "alice");
    await addUser(harness.auth, "bob");
    const listed = async (username: string) => (await webauthnBegin(harness.auth, { username })).options.allowCredentials ?? [];
    const names = [
      "nobody",
      "bob",
      "BOB",
      "x".repeat(129),
      "ali\u200bce",
      ...Array.from({ length: 30 }, (_, index) => `user${index}`),
    ];
    const lengths = new Set<number>();
    const counts = new Set<number>();
    for (const name of names) {
      const decoys = await listed(name);
      expect(decoys.length, name).toBeGreaterThanOrEqual(1);
      expect(decoys.length, name).toBeLessThanOrEqual(2);
      counts.add(decoys.length);
      for (const decoy of decoys) {
        expect(decoy.type).toBe("public-key");
        expect(decoy.id).toMatch(/^[A-Za-z0-9_-]+$/);
        lengths.add(Buffer.from(decoy.id, "base64url").length);
        expect(await harness.storage.passkeys.findById(decoy.id)).toBeNull();
        expect(["internal", "hybrid"]).toEqual(expect.arrayContaining(decoy.transports ?? []));
      }
      expect(await listed(name), name).toEqual(decoys);
    }
    expect(await listed("bob")).toEqual(await listed("Bob"));
    expect(await listed("bob")).not.toEqual(await listed("nobody"));
    expect([...lengths].sort((a, b) => a - b)).toEqual([16, 20, 32]);
    expect([...counts].sort()).toEqual([1, 2]);
  });

  it("EN-4: the decoys are stable across releases: HMAC-SHA256 of label NUL name under the key derived for portcullis passkey decoy v1", async () => {
    const encryption = Buffer.from(Array.from({ length: 32 }, (_, index) => index));
    const harness = passkeyHarness({}, { secrets: { signing: signingSecret, encryption: encryption.toString("hex") } });
    const key = Buffer.from(hkdfSync("sha256", encryption, "portcullis", "portcullis passkey decoy v1", 32));
    const derive = (label: string, name: string) => createHmac("sha256", key).update(`${label}\u0000${name}`, "utf8").digest();
    const expected = (name: string) => {
      const shape = derive("shape", name);
      const count = 1 + ((shape[0] as number) & 1);
      const length = [16, 20, 32][(shape[1] as number) % 3] as number;
      const transports = (shape[2] as number) & 1 ? ["hybrid", "internal"] : ["internal"];
      return Array.from({ length: count }, (_, index) => ({
        id: derive(`id ${index}`, name).subarray(0, length).toString("base64url"),
        type: "public-key",
        transports,
      }));
    };
    const seen = { counts: new Set<number>(), lengths: new Set<number>(), transports: new Set<string>() };
    for (const name of ["nobody", "carol", "dave", "erin", "grace"]) {
      const decoys = expected(name);
      expect((await webauthnBegin(harness.auth, { username: name })).options.allowCredentials, name).toEqual(decoys);
      seen.counts.add(decoys.length);
      for (const decoy of decoys) {
        seen.lengths.add(Buffer.from(decoy.id, "base64url").length);
        seen.transports.add(decoy.transports.join());
      }
    }
    // The names were chosen so that every shape shows up.
    expect(seen).toEqual({
      counts: new Set([1, 2]),
      lengths: new Set([16, 20, 32]),
      transports: new Set(["internal", "hybrid,internal"]),
    });
  });

  it("EN-4: a name that can be nobody's gets decoys of its own, the same in any case", async () => {
    const harness = passkeyHarness();
    const listed = async (username: string) => (await webauthnBegin(harness.auth, { username })).options.allowCredentials;
    const invisible = await listed("ali\u200bce");
    expect(await listed("ALI\u200bCE")).toEqual(invisible);
    expect(await listed("bo\u200bb")).not.toEqual(invisible);
    expect(await listed("x".repeat(129))).not.toEqual(await listed("y".repeat(129)));
  });

  it("PW-5: a username that is not a string is 40002", async () => {
    const harness = passkeyHarness();
    for (const username of [{ $ne: "" }, ["alice"], 42]) {
      const error = await authError(webauthnBegin(harness.auth, { username: username as unknown as string }));
      expect(error.code).toBe(ErrorCode.MalformedParameter);
    }
  });
});

describe("EN-1: a disabled account", () => {
  it("EN-1: a disabled user gets 40300 only after a valid assertion; a bad assertion gets the usual 40100", async () => {
    const harness = passkeyHarness();
    const { userId, authenticator } = await userWithPasskey(harness);
    await setUserDisabled(harness.auth, { userId, disabled: true });
    const bad = await authError(signInWith(harness.auth, authenticator, { origin: "https://evil.example" }));
    const stranger = await authError(
      signInWith(harness.auth, authenticator, { credentialId: unregisteredCredential(authenticator) }),
    );
    expect([bad.code, bad.message]).toEqual([stranger.code, stranger.message]);
    expect(bad.code).toBe(ErrorCode.AuthenticationFailed);
    expect(await outcome(signInWith(harness.auth, authenticator, { flags: { uv: false } }))).toBe(40100);
    const disabled = await authError(signInWith(harness.auth, authenticator));
    expect(disabled.code).toBe(ErrorCode.Forbidden);
    const failures = harness.events.filter((event) => event.type === "login.failed");
    expect(failures.map((event) => event.reason)).toEqual([
      "invalid_credentials",
      "invalid_credentials",
      "invalid_credentials",
      "disabled",
    ]);
    expect(harness.events.some((event) => event.type === "login.succeeded")).toBe(false);
  });
});

describe("RL-4, RL-6: throttling", () => {
  const wrongPassword = "not the password";

  it("RL-6: failed assertions never spend the account's password budget: after 5 of them the right password signs in", async () => {
    const harness = makePasskeyAuth({ throttle: { account: [{ limit: 2, window: "15m" }] } });
    const { authenticator } = await userWithPasskey(harness);
    for (let failure = 0; failure < 5; failure += 1) {
      expect(await outcome(signInWith(harness.auth, authenticator, { origin: "https://evil.example" }, "alice"))).toBe(40100);
    }
    expect(harness.events.filter((event) => event.type === "throttled")).toEqual([]);
    expect((await login(harness.auth, { username: "alice", password: goodPassword })).status).toBe("authenticated");
  });

  it("RL-6: a valid passkey is never refused for password failures: after the account is locked by wrong passwords it signs in", async () => {
    const harness = makePasskeyAuth({
      throttle: {
        account: [
          { limit: 2, window: "15m" },
          { limit: 3, window: "24h" },
        ],
      },
    });
    const { authenticator } = await userWithPasskey(harness);
    for (let failure = 0; failure < 5; failure += 1)
      await outcome(login(harness.auth, { username: "alice", password: wrongPassword }));
    expect(await outcome(login(harness.auth, { username: "alice", password: goodPassword }))).toBe(42900);
    tokensOf(await signInWith(harness.auth, authenticator));
    tokensOf(await signInWith(harness.auth, authenticator, {}, "alice"));
    // Nor does a passkey sign-in clear the account's failures for the password guesser.
    expect(await outcome(login(harness.auth, { username: "alice", password: goodPassword }))).toBe(42900);
  });

  it("RL-6: the TOTP step after a passkey without UV spends that passkey's budget, not the locked account's", async () => {
    const harness = makePasskeyAuth(
      { throttle: { account: [{ limit: 2, window: "15m" }], device: [{ limit: 3, window: "15m" }] } },
      { userVerification: "preferred" },
    );
    const { userId, authenticator } = await userWithPasskey(harness);
    const { secret } = await enrolTotp(harness.auth, userId);
    for (let failure = 0; failure < 3; failure += 1)
      await outcome(login(harness.auth, { username: "alice", password: wrongPassword }));
    const pending = await signInWith(harness.auth, authenticator, { flags: { uv: false } });
    if (pending.status !== "totp_required") throw new Error("expected a TOTP step");
    expect(await outcome(verifyTotp(harness.auth, { tempToken: pending.tempToken, code: "000000" }))).toBe(40103);
    const tokens = await verifyTotp(harness.auth, { tempToken: pending.tempToken, code: nextCode(harness, secret) });
    expect(await amrOf(harness.auth, tokens)).toEqual(["hwk", "otp", "mfa"]);
    // The passkey's own budget is capped: 3 wrong codes over fresh ceremonies, then 42900.
    for (let failure = 0; failure < 3; failure += 1) {
      const again = await signInWith(harness.auth, authenticator, { flags: { uv: false } });
      if (again.status !== "totp_required") throw new Error("expected a TOTP step");
      await outcome(verifyTotp(harness.auth, { tempToken: again.tempToken, code: "000000" }));
    }
    const last = await signInWith(harness.auth, authenticator, { flags: { uv: false } });
    if (last.status !== "totp_required") throw new Error("expected a TOTP step");
    expect(await outcome(verifyTotp(harness.auth, { tempToken: last.tempToken, code: nextCode(harness, secret) }))).toBe(42900);
  });

  it("RL-5: a passkey sign-in from a client with a device token clears that device's failures", async () => {
    const harness = makePasskeyAuth({ throttle: { device: [{ limit: 3, window: "15m" }] } });
    const { authenticator } = await userWithPasskey(harness);
    const deviceToken = tokensOf(await login(harness.auth, { username: "alice", password: goodPassword })).deviceToken;
    const wrongFromDevice = () => outcome(login(harness.auth, { username: "alice", password: wrongPassword, deviceToken }));
    for (let failure = 0; failure < 2; failure += 1) expect(await wrongFromDevice()).toBe(40100);
    const { ceremonyId, options } = await webauthnBegin(harness.auth, {});
    tokensOf(await webauthnFinish(harness.auth, { ceremonyId, response: authenticator.authenticate(options), deviceToken }));
    for (let failure = 0; failure < 2; failure += 1) expect(await wrongFromDevice()).toBe(40100);
    tokensOf(await login(harness.auth, { username: "alice", password: goodPassword, deviceToken }));
  });

  it("RL-5, RL-6: after a passkey without UV, the TOTP step of a client with a device token spends that device's budget, not the passkey's", async () => {
    const harness = makePasskeyAuth({ throttle: { device: [{ limit: 3, window: "15m" }] } }, { userVerification: "preferred" });
    const { userId, authenticator } = await userWithPasskey(harness);
    const { secret } = await enrolTotp(harness.auth, userId);
    const deviceToken = tokensOf(await signInWith(harness.auth, authenticator)).deviceToken;
    const { ceremonyId, options } = await webauthnBegin(harness.auth, {});
    const response = authenticator.authenticate(options, { flags: { uv: false } });
    const pending = await webauthnFinish(harness.auth, { ceremonyId, response, deviceToken });
    if (pending.status !== "totp_required") throw new Error("expected a TOTP step");
    const wrong = wrongCodeAt(secret, harness.clock.now);
    for (let failure = 0; failure < 3; failure += 1) {
      expect(await outcome(verifyTotp(harness.auth, { tempToken: pending.tempToken, code: wrong }))).toBe(40103);
    }
    expect(await outcome(login(harness.auth, { username: "alice", password: goodPassword, deviceToken }))).toBe(42900);
    const elsewhere = await signInWith(harness.auth, authenticator, { flags: { uv: false } });
    if (elsewhere.status !== "totp_required") throw new Error("expected a TOTP step");
    const tokens = await verifyTotp(harness.auth, { tempToken: elsewhere.tempToken, code: nextCode(harness, secret) });
    expect(await amrOf(harness.auth, tokens)).toEqual(["hwk", "otp", "mfa"]);
  });

  it("RL-4: of 20 concurrent bad assertions from one address limited to 5, 5 are evaluated and 15 get 42900", async () => {
    const harness = makePasskeyAuth({ throttle: { ip: [{ limit: 25, window: "15m" }] } });
    const { passkey, authenticator } = await userWithPasskey(harness);
    const otherKey = unregisteredCredential(authenticator);
    const address = "203.0.113.9";
    const ceremonies = await Promise.all(Array.from({ length: 20 }, () => webauthnBegin(harness.auth, { ip: address })));
    const results = await tally(
      ceremonies.map(({ ceremonyId, options }) =>
        webauthnFinish(harness.auth, {
          ceremonyId,
          response: authenticator.authenticate(options, { credentialId: passkey.id, signWith: otherKey }),
          ip: address,
        }),
      ),
    );
    expect(results).toEqual(
      new Map<number | "fulfilled", number>([
        [40100, 5],
        [42900, 15],
      ]),
    );
  });

  it("RL-7: begin takes one attempt from the address's throttle.unauthenticatedWrites: past it, 42900 and no ceremony stored", async () => {
    const harness = makePasskeyAuth({ throttle: { unauthenticatedWrites: [{ limit: 2, window: "1m" }] } });
    const address = "203.0.113.7";
    const stored = vi.spyOn(harness.storage.challenges, "put");
    await webauthnBegin(harness.auth, { ip: address });
    await webauthnBegin(harness.auth, { username: "alice", ip: address });
    expect(await outcome(webauthnBegin(harness.auth, { ip: address }))).toBe(ErrorCode.TooManyAttempts);
    expect(harness.events.at(-1)).toMatchObject({ type: "throttled", scope: "unauthenticatedWrites", ip: address });
    expect(stored).toHaveBeenCalledTimes(2);
    await webauthnBegin(harness.auth, { ip: "203.0.113.8" });
    harness.clock.advance(60_000);
    await webauthnBegin(harness.auth, { ip: address });
  });

  it("RL-4: begin takes one attempt from the client address when ip is given", async () => {
    const harness = makePasskeyAuth({ throttle: { ip: [{ limit: 2, window: "1m" }] } });
    await userWithPasskey(harness);
    const address = "203.0.113.7";
    await webauthnBegin(harness.auth, { ip: address });
    await webauthnBegin(harness.auth, { username: "alice", ip: address });
    const throttled = await authError(webauthnBegin(harness.auth, { ip: address }));
    expect(throttled.code).toBe(ErrorCode.TooManyAttempts);
    expect(throttled.retryAfterSeconds).toBe(60);
    expect(harness.events.find((event) => event.type === "throttled")).toMatchObject({ scope: "ip", ip: address });
    await webauthnBegin(harness.auth, { ip: "203.0.113.8" });
    await webauthnBegin(harness.auth, {});
    harness.clock.advance(60_000);
    await webauthnBegin(harness.auth, { ip: address });
  });
});

describe("HTTP-6: events", () => {
  it("HTTP-6: sign-in events carry the user, amr and address, and never the assertion, challenge or ceremony id", async () => {
    const harness = passkeyHarness();
    const { userId, authenticator } = await userWithPasskey(harness);
    const ip = "198.51.100.4";
    const secrets: string[] = [];
    const attempt = async (overrides: AuthenticationOverrides) => {
      const { ceremonyId, options } = await webauthnBegin(harness.auth, { ip });
      const response = authenticator.authenticate(options, overrides);
      secrets.push(ceremonyId, options.challenge, response.response.signature);
      secrets.push(response.response.clientDataJSON, response.response.authenticatorData);
      return webauthnFinish(harness.auth, { ceremonyId, response, ip });
    };
    const tokens = tokensOf(await attempt({}));
    expect(await outcome(attempt({ origin: "https://evil.example" }))).toBe(40100);
    const succeeded = harness.events.filter((event) => event.type === "login.succeeded");
    expect(succeeded).toEqual([
      { type: "login.succeeded", userId, sessionId: expect.any(String), amr: ["hwk", "user"], at: harness.clock.now, ip },
    ]);
    const failed = harness.events.filter((event) => event.type === "login.failed");
    expect(failed).toEqual([{ type: "login.failed", userId, reason: "invalid_credentials", at: harness.clock.now, ip }]);
    const everything = JSON.stringify(harness.events);
    for (const secret of [...secrets, tokens.accessToken, tokens.refreshToken]) expect(everything).not.toContain(secret);
  });
});

describe("malformed input", () => {
  it("PW-5: a response of the wrong shape is 40002", async () => {
    const harness = passkeyHarness();
    const { authenticator } = await userWithPasskey(harness);
    const { options } = await webauthnBegin(harness.auth, {});
    const valid = authenticator.authenticate(options);
    const malformed: unknown[] = [
      undefined,
      null,
      "response",
      [valid],
      { ...valid, response: undefined },
      { ...valid, rawId: `${valid.id}A` },
      { ...valid, type: "password" },
      { ...valid, response: { ...valid.response, signature: "not base64url!" } },
    ];
    for (const response of malformed) {
      const { ceremonyId } = await webauthnBegin(harness.auth, {});
      const error = await authError(webauthnFinish(harness.auth, { ceremonyId, response }));
      expect(error.code, JSON.stringify(response)).toBe(ErrorCode.MalformedParameter);
    }
  });

  it("WA-2: garbage base64url inside the response is 40100, always an AuthError", async () => {
    const harness = passkeyHarness();
    const { authenticator } = await userWithPasskey(harness);
    const realData = (options: PublicKeyCredentialRequestOptionsJSON) =>
      Buffer.from(authenticator.authenticate(options).response.authenticatorData, "base64url");
    const b64 = (bytes: Uint8Array | string) => Buffer.from(bytes).toString("base64url");
    const garbage: {
      what: string;
      field: "authenticatorData" | "clientDataJSON" | "signature" | "userHandle";
      value: (options: PublicKeyCredentialRequestOptionsJSON) => string;
    }[] = [
      { what: "4 bytes of authenticator data", field: "authenticatorData", value: () => "AAAA" },
      { what: "random authenticator data", field: "authenticatorData", value: () => randomBase64url(37) },
      { what: "one byte short", field: "authenticatorData", value: (options) => b64(realData(options).subarray(0, 36)) },
      { what: "a long run of underscores", field: "authenticatorData", value: () => "_".repeat(4096) },
      {
        what: "the attested-data flag with nothing attested",
        field: "authenticatorData",
        value: (options) => {
          const data = realData(options);
          data[32] = (data[32] ?? 0) | 0x40;
          return b64(data);
        },
      },
      {
        what: "the extension flag with garbage CBOR",
        field: "authenticatorData",
        value: (options) => {
          const data = realData(options);
          data[32] = (data[32] ?? 0) | 0x80;
          return b64(Buffer.concat([data, Buffer.from([0xff, 0xff, 0x1f])]));
        },
      },
      { what: "client data that is not JSON", field: "clientDataJSON", value: () => "AAAA" },
      { what: "client data that is JSON null", field: "clientDataJSON", value: () => b64("null") },
      { what: "client data that is a JSON array", field: "clientDataJSON", value: () => b64("[1,2]") },
      {
        what: "client data with a challenge object",
        field: "clientDataJSON",
        value: () => b64('{"type":"webauthn.get","challenge":{}}'),
      },
      { what: "a 3-byte signature", field: "signature", value: () => "AAAA" },
      { what: "a random signature", field: "signature", value: () => randomBase64url(72) },
      { what: "a user handle of random bytes", field: "userHandle", value: () => randomBase64url(64) },
    ];
    for (const { what, field, value } of garbage) {
      const { ceremonyId, options } = await webauthnBegin(harness.auth, {});
      const response = authenticator.authenticate(options);
      const broken = { ...response, response: { ...response.response, [field]: value(options) } };
      let error: unknown;
      try {
        await webauthnFinish(harness.auth, { ceremonyId, response: broken });
      } catch (caught) {
        error = caught;
      }
      expect(error, what).toBeInstanceOf(AuthError);
      expect((error as AuthError).code, what).toBe(ErrorCode.AuthenticationFailed);
      expect((error as AuthError).message, what).toBe("The passkey was not accepted");
    }
    tokensOf(await signInWith(harness.auth, authenticator));
  });

  it("passkeys not configured: begin and finish answer 40400", async () => {
    const { auth } = makeAuth();
    expect(auth.config.passkeys).toBeNull();
    expect(await outcome(webauthnBegin(auth, {}))).toBe(ErrorCode.NotFound);
    expect(await outcome(webauthnBegin(auth, { username: "alice", ip: "203.0.113.1" }))).toBe(ErrorCode.NotFound);
    expect(await outcome(webauthnFinish(auth, { ceremonyId: "x", response: {} }))).toBe(ErrorCode.NotFound);
    expect(await outcome(webauthnFinish(auth, { ceremonyId: undefined as unknown as string, response: null }))).toBe(
      ErrorCode.NotFound,
    );
  });
});

describe("answers, word for word", () => {
  it("PW-5, WA-1: a non-string username, a spent ceremony, a disabled account and passkeys off each say what they are", async () => {
    const harness = passkeyHarness();
    const { userId, authenticator } = await userWithPasskey(harness);
    expect(await authError(webauthnBegin(harness.auth, { username: 42 as unknown as string }))).toMatchObject({
      code: 40002,
      message: "username must be a string",
    });
    const { ceremonyId, options } = await webauthnBegin(harness.auth, {});
    await webauthnFinish(harness.auth, { ceremonyId, response: authenticator.authenticate(options) });
    expect(
      await authError(webauthnFinish(harness.auth, { ceremonyId, response: authenticator.authenticate(options) })),
    ).toMatchObject({
      code: 40100,
      message: "The ceremony is unknown, expired or already used",
    });
    await setUserDisabled(harness.auth, { userId, disabled: true });
    expect(await authError(passkeySignIn(harness.auth, authenticator))).toMatchObject({
      code: 40300,
      message: "The account is disabled",
    });
    const off = makeAuth();
    expect(await authError(webauthnBegin(off.auth, {}))).toMatchObject({ code: 40400, message: "Passkeys are not enabled" });
  });

  it("PW-5: a device token that is not a string is 40002 naming deviceToken", async () => {
    const harness = passkeyHarness();
    const { authenticator } = await userWithPasskey(harness);
    for (const deviceToken of [42, { $ne: "" }, ["token"]]) {
      const { ceremonyId, options } = await webauthnBegin(harness.auth, {});
      const response = authenticator.authenticate(options);
      expect(
        await authError(webauthnFinish(harness.auth, { ceremonyId, response, deviceToken: deviceToken as unknown as string })),
      ).toMatchObject({ code: 40002, message: "deviceToken must be a string" });
    }
  });

  it("EN-1: a refused assertion keeps the verifier's error as its cause, never in its message", async () => {
    const harness = passkeyHarness();
    const { authenticator } = await userWithPasskey(harness);
    const { ceremonyId, options } = await webauthnBegin(harness.auth, {});
    const error = await authError(
      webauthnFinish(harness.auth, {
        ceremonyId,
        response: authenticator.authenticate(options, { origin: "https://evil.example" }),
      }),
    );
    expect(error.message).toBe("The passkey was not accepted");
    expect(error.cause).toBeInstanceOf(Error);
  });

  it("RL-1: a username that can be nobody's (too long, a NUL, an invisible code point) is never looked up in storage", async () => {
    const harness = passkeyHarness();
    const lookup = vi.spyOn(harness.storage.users, "findByUsernameKey");
    for (const username of ["x".repeat(129), "alice\u0000", "ali\u200bce", " alice"]) {
      const { options } = await webauthnBegin(harness.auth, { username });
      expect(options.allowCredentials?.length).toBeGreaterThan(0);
    }
    expect(lookup).not.toHaveBeenCalled();
  });

  it("WA-4: a passkey whose account is gone from storage is refused like an unknown one", async () => {
    const harness = passkeyHarness();
    const { authenticator } = await userWithPasskey(harness);
    vi.spyOn(harness.storage.users, "findById").mockResolvedValue(null);
    expect(await authError(passkeySignIn(harness.auth, authenticator))).toMatchObject({
      code: 40100,
      message: "The passkey was not accepted",
    });
    expect(harness.events.at(-1)).toMatchObject({ type: "login.failed", userId: null, reason: "invalid_credentials" });
  });
});
