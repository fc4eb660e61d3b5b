import { describe, expect, it } from "vitest";
import type { AuthConfig } from "../config.js";
import { keyedDigest } from "../crypto/keyed-tag.js";
import { ErrorCode } from "../errors/codes.js";
import { authError, generousThrottle, makeAuth, outcome, slowStorage } from "../flows/fixtures.test-support.js";
import { makeAuthenticator, passkeys, userWithPasskey } from "../flows/passkeys.test-support.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { webauthnBegin, webauthnFinish } from "../flows/webauthn-login.js";
import { webauthnRegisterBegin, webauthnRegisterFinish } from "../flows/webauthn-register.js";
import { reauthenticateWithPasskeyBegin, reauthenticateWithPasskeyFinish } from "../step-up/reauthenticate-session.js";
import { memoryStorage } from "../storage/memory.js";
import type { Storage } from "../storage/types.js";
import {
  autofillCeremonyPrefix,
  beginAutofillCeremony,
  isAutofillCeremonyId,
  spendAutofillCeremony,
} from "./autofill-ceremony.js";

const ttlMs = 5 * 60_000;

/** A passkey harness on memory storage (or `storage`), whose sizes the tests read. */
function autofillHarness(overrides: { storage?: Storage; throttle?: AuthConfig["throttle"] } = {}) {
  const storage = overrides.storage ?? memoryStorage();
  return makeAuth({ storage, passkeys, throttle: { ...generousThrottle, ...overrides.throttle } });
}

/** The ceremony id of `payload`: the prefix and its base64url. */
const idOf = (payload: Buffer) => `${autofillCeremonyPrefix}${payload.toString("base64url")}`;

/** The payload a ceremony id carries. */
const payloadOf = (ceremonyId: string) => Buffer.from(ceremonyId.slice(autofillCeremonyPrefix.length), "base64url");

/** A payload expiring at `expiresAt`, with 16 bytes of zeros after it. */
function payloadExpiringAt(expiresAt: number): Buffer {
  const payload = Buffer.alloc(24);
  payload.writeBigUInt64BE(BigInt(expiresAt), 0);
  return payload;
}

describe("beginAutofillCeremony", () => {
  it("PL-11: an autofill begin stores nothing and takes no attempt: the challenge store and the counters are unchanged after 50, with the client address's budget at 2", async () => {
    const storage = memoryStorage();
    const harness = autofillHarness({ storage, throttle: { ip: [{ limit: 2, window: "15m" }] } });
    const { auth } = harness;
    await userWithPasskey(harness);
    const before = storage.sizes();
    for (let i = 0; i < 50; i += 1) await webauthnBegin(auth, { mediation: "conditional", ip: "203.0.113.9" });
    expect(storage.sizes()).toEqual(before);
    // The address's budget is whole: an ordinary begin still goes through twice.
    await webauthnBegin(auth, { ip: "203.0.113.9" });
    await webauthnBegin(auth, { ip: "203.0.113.9" });
    expect(await outcome(webauthnBegin(auth, { ip: "203.0.113.9" }))).toBe(ErrorCode.TooManyAttempts);
  });

  it("PL-11: the id carries the expiry (now + ceremonyTtl, big-endian ms) and 16 random bytes; the challenge is their keyed digest (32 bytes); the options are discoverable, user verification as configured, timing out with the ceremony", async () => {
    const drawn: Uint8Array[] = [];
    const harness = makeAuth({
      passkeys: { ...passkeys, userVerification: "preferred", ceremonyTtl: "2m" },
      randomBytes: (size: number) => {
        const bytes = new Uint8Array(size).fill(drawn.length + 1);
        drawn.push(bytes);
        return bytes;
      },
    });
    const { ceremonyId, options } = await beginAutofillCeremony(harness.auth);
    expect(ceremonyId).toMatch(/^cm\.[A-Za-z0-9_-]{32}$/);
    const payload = payloadOf(ceremonyId);
    expect(Number(payload.readBigUInt64BE(0))).toBe(harness.clock.now + 120_000);
    expect(payload.subarray(8)).toEqual(Buffer.from(drawn.at(-1) as Uint8Array));
    const challenge = keyedDigest(harness.auth.secretBox, "portcullis autofill ceremony v1", payload.toString("base64url"));
    expect(challenge).toHaveLength(32);
    expect(options).toMatchObject({
      challenge: challenge.toString("base64url"),
      rpId: passkeys.rpId,
      allowCredentials: [],
      userVerification: "preferred",
      timeout: 120_000,
    });
    expect((await beginAutofillCeremony(harness.auth)).ceremonyId).not.toBe(ceremonyId);
  });

  it("PL-11: mediation other than conditional, or with a username (even empty), is 40002", async () => {
    const { auth } = autofillHarness();
    for (const input of [
      { mediation: "optional" },
      { mediation: "Conditional" },
      { mediation: 1 },
      { mediation: ["conditional"] },
      { mediation: "conditional", username: "alice" },
      { mediation: "conditional", username: "" },
    ]) {
      expect(await outcome(webauthnBegin(auth, input as never)), JSON.stringify(input)).toBe(ErrorCode.MalformedParameter);
    }
    expect(isAutofillCeremonyId((await webauthnBegin(auth, { mediation: null } as never)).ceremonyId)).toBe(false);
  });
});

describe("an autofill ceremony's finish", () => {
  it("signs in with a discoverable passkey, amr hwk and user, as any discoverable sign-in", async () => {
    const harness = autofillHarness();
    const { userId, authenticator } = await userWithPasskey(harness);
    const { ceremonyId, options } = await webauthnBegin(harness.auth, { mediation: "conditional" });
    const result = await webauthnFinish(harness.auth, { ceremonyId, response: authenticator.authenticate(options) });
    if (result.status !== "authenticated") throw new Error(result.status);
    expect(await verifyAccessToken(harness.auth, { token: result.tokens.accessToken })).toMatchObject({
      userId,
      amr: ["hwk", "user", "mfa"],
    });
  });

  it("WA-4: an autofill ceremony is discoverable: an assertion without the user handle is refused", async () => {
    const harness = autofillHarness();
    const { authenticator } = await userWithPasskey(harness);
    const { ceremonyId, options } = await webauthnBegin(harness.auth, { mediation: "conditional" });
    const response = authenticator.authenticate(options, { userHandle: null });
    expect(await outcome(webauthnFinish(harness.auth, { ceremonyId, response }))).toBe(ErrorCode.AuthenticationFailed);
  });

  it("PL-12: an autofill ceremony is spent once: the same finish again is 40100; of 20 concurrent finishes exactly one signs in", async () => {
    const harness = autofillHarness({ storage: slowStorage(memoryStorage()) });
    const { authenticator } = await userWithPasskey(harness);
    const first = await webauthnBegin(harness.auth, { mediation: "conditional" });
    const assertion = authenticator.authenticate(first.options);
    expect((await webauthnFinish(harness.auth, { ceremonyId: first.ceremonyId, response: assertion })).status).toBe(
      "authenticated",
    );
    const again = await authError(webauthnFinish(harness.auth, { ceremonyId: first.ceremonyId, response: assertion }));
    expect([again.code, again.message]).toEqual([40100, "The ceremony is unknown, expired or already used"]);

    const { ceremonyId, options } = await webauthnBegin(harness.auth, { mediation: "conditional" });
    const response = authenticator.authenticate(options);
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, () => outcome(webauthnFinish(harness.auth, { ceremonyId, response }))),
    );
    expect(outcomes.filter((value) => value === "fulfilled")).toHaveLength(1);
    expect(outcomes.filter((value) => value === ErrorCode.AuthenticationFailed)).toHaveLength(19);
  });

  it("PL-11: tampered, expired, too-far-future and malformed ids are refused alike (40100), and only a well-formed live id takes a counter", async () => {
    const storage = memoryStorage();
    const harness = autofillHarness({ storage });
    const { authenticator } = await userWithPasskey(harness);
    const { auth, clock } = harness;
    const finish = async (make: (ceremonyId: string) => string, advanceMs = 0) => {
      const { ceremonyId, options } = await webauthnBegin(auth, { mediation: "conditional" });
      const response = authenticator.authenticate(options);
      clock.now += advanceMs;
      return outcome(webauthnFinish(auth, { ceremonyId: make(ceremonyId), response }));
    };
    const flipped = (index: number) => (ceremonyId: string) => {
      const payload = payloadOf(ceremonyId);
      payload[index] = (payload[index] as number) ^ 1;
      return idOf(payload);
    };
    // Tampered: the random part, or the expiry moved by 1 ms within the ttl: another challenge, so the assertion fails.
    expect(await finish(flipped(20))).toBe(40100);
    expect(await finish(flipped(7))).toBe(40100);
    expect(await finish((id) => idOf(payloadExpiringAt(Number(payloadOf(id).readBigUInt64BE(0)) - 1000)))).toBe(40100);

    const counted = storage.sizes().counters;
    const refusedAtSpend: [string, (ceremonyId: string) => string, number?][] = [
      ["expired", (id) => id, ttlMs + 1],
      ["expiring now", (id) => id, ttlMs],
      ["too far in the future", () => idOf(payloadExpiringAt(clock.now + ttlMs + 1))],
      ["far in the future", () => idOf(payloadExpiringAt(Number.MAX_SAFE_INTEGER))],
      ["the largest expiry", () => idOf(Buffer.alloc(24, 0xff))],
      ["the prefix alone", () => autofillCeremonyPrefix],
      ["too short", (id) => id.slice(0, -2)],
      ["too long", (id) => `${id}AAAA`],
      ["a character outside base64url", (id) => `${id}!`],
      ["base64's alphabet", (id) => `${autofillCeremonyPrefix}${payloadOf(id).toString("base64")}`],
      ["padded", (id) => `${id}==`],
      ["an upper-case prefix", (id) => `CM.${id.slice(3)}`],
    ];
    for (const [what, make, advance] of refusedAtSpend) {
      const made = make((await webauthnBegin(auth, { mediation: "conditional" })).ceremonyId);
      if (what === "base64's alphabet" && !/[+/]/.test(made)) continue;
      expect(await finish(() => made, advance), what).toBe(40100);
    }
    expect(storage.sizes().counters).toBe(counted);
  });

  it("PL-12: the client address's attempt is taken before the id is spent: a throttled finish spends nothing, and the id works from another address", async () => {
    const harness = autofillHarness({ throttle: { ip: [{ limit: 1, window: "15m" }] } });
    const { authenticator } = await userWithPasskey(harness);
    await webauthnBegin(harness.auth, { ip: "203.0.113.1" });
    const { ceremonyId, options } = await webauthnBegin(harness.auth, { mediation: "conditional", ip: "203.0.113.1" });
    const response = authenticator.authenticate(options);
    expect(await outcome(webauthnFinish(harness.auth, { ceremonyId, response, ip: "203.0.113.1" }))).toBe(42900);
    expect((await webauthnFinish(harness.auth, { ceremonyId, response, ip: "203.0.113.2" })).status).toBe("authenticated");
  });

  it("PL-12: register/finish and a re-authentication's finish refuse an autofill id (they look ids up in the challenge store: ST-2)", async () => {
    const harness = autofillHarness();
    const { userId, authenticator } = await userWithPasskey(harness);
    const signedIn = await webauthnBegin(harness.auth, {});
    const tokens = await webauthnFinish(harness.auth, {
      ceremonyId: signedIn.ceremonyId,
      response: authenticator.authenticate(signedIn.options),
    });
    if (tokens.status !== "authenticated") throw new Error(tokens.status);
    const { sessionId } = await verifyAccessToken(harness.auth, { token: tokens.tokens.accessToken });

    const registration = await webauthnRegisterBegin(harness.auth, { userId, sessionId, label: "Spare" });
    const autofill = await webauthnBegin(harness.auth, { mediation: "conditional" });
    const attestation = makeAuthenticator().register(registration.options);
    expect(
      await outcome(
        webauthnRegisterFinish(harness.auth, { userId, sessionId, ceremonyId: autofill.ceremonyId, response: attestation }),
      ),
    ).toBe(40100);

    const reauthentication = await reauthenticateWithPasskeyBegin(harness.auth, { userId, sessionId });
    const assertion = authenticator.authenticate(reauthentication.options);
    expect(
      await outcome(
        reauthenticateWithPasskeyFinish(harness.auth, {
          userId,
          sessionId,
          ceremonyId: autofill.ceremonyId,
          response: assertion,
        }),
      ),
    ).toBe(40100);
    // Neither spent it: it still signs in once.
    const response = authenticator.authenticate(autofill.options);
    expect((await webauthnFinish(harness.auth, { ceremonyId: autofill.ceremonyId, response })).status).toBe("authenticated");
  });

  it("PW-5: a ceremony id that is not a string is never taken for an autofill id: the finish answers 40002 as for a missing header", async () => {
    expect(isAutofillCeremonyId(42)).toBe(false);
    expect(isAutofillCeremonyId(null)).toBe(false);
    const harness = autofillHarness();
    const refused = await authError(webauthnFinish(harness.auth, { ceremonyId: 42 as never, response: {} }));
    expect(refused.code).toBe(ErrorCode.MalformedParameter);
  });

  it("spendAutofillCeremony answers the ceremony as a stored discoverable sign-in ceremony looks", async () => {
    const harness = autofillHarness();
    const { ceremonyId, options } = await beginAutofillCeremony(harness.auth);
    expect(await spendAutofillCeremony(harness.auth, ceremonyId)).toEqual({
      id: expect.any(String),
      kind: "webauthn_login",
      userId: null,
      data: { challenge: options.challenge },
      attempts: 0,
      createdAt: harness.clock.now,
      expiresAt: harness.clock.now + ttlMs,
    });
  });
});
