import type { SoftwareAuthenticator } from "@portcullis/testing";
import { describe, expect, it } from "vitest";
import { type Harness, enrolTotp, nextCode, outcome, wrongCodeAt } from "../flows/fixtures.test-support.js";
import { makeAuthenticator, makePasskeyAuth, userWithPasskey } from "../flows/passkeys.test-support.js";
import { verifyTotp } from "../flows/verify-totp.js";
import { webauthnBegin, webauthnFinish } from "../flows/webauthn-login.js";

/** Signs in with a passkey without user verification and returns the temporary token of the TOTP step. */
async function tempTokenAfterPasskey(harness: Harness, authenticator: SoftwareAuthenticator): Promise<string> {
  const { ceremonyId, options } = await webauthnBegin(harness.auth, {});
  const response = authenticator.authenticate(options, { flags: { uv: false } });
  const pending = await webauthnFinish(harness.auth, { ceremonyId, response });
  if (pending.status !== "totp_required") throw new Error("expected a TOTP step");
  return pending.tempToken;
}

/** A user with a passkey of its own authenticator and TOTP on. */
async function passkeyUserWithTotp(harness: Harness, username: string) {
  const { userId, authenticator } = await userWithPasskey(harness, username, makeAuthenticator());
  const { secret } = await enrolTotp(harness.auth, userId);
  return { authenticator, secret };
}

describe("failure budget", () => {
  it("RL-6: the TOTP failures after one user's passkey spend that passkey's budget: another user's passkey still signs in", async () => {
    const harness = makePasskeyAuth({ throttle: { device: [{ limit: 3, window: "15m" }] } }, { userVerification: "preferred" });
    const alice = await passkeyUserWithTotp(harness, "alice");
    const bob = await passkeyUserWithTotp(harness, "bob");
    const aliceToken = await tempTokenAfterPasskey(harness, alice.authenticator);
    const wrong = wrongCodeAt(alice.secret, harness.clock.now);
    for (let failure = 0; failure < 3; failure += 1) {
      expect(await outcome(verifyTotp(harness.auth, { tempToken: aliceToken, code: wrong }))).toBe(40103);
    }
    const aliceAgain = await tempTokenAfterPasskey(harness, alice.authenticator);
    expect(await outcome(verifyTotp(harness.auth, { tempToken: aliceAgain, code: nextCode(harness, alice.secret) }))).toBe(42900);
    const bobToken = await tempTokenAfterPasskey(harness, bob.authenticator);
    expect(await outcome(verifyTotp(harness.auth, { tempToken: bobToken, code: nextCode(harness, bob.secret) }))).toBe(
      "fulfilled",
    );
  });
});
