// Runs docs/examples/original-client.ts: the settings it gives make a valid auth, refuse two
// providers on one redirect URI, and answer refusals with HTTP 200 and the user with a role; its
// settings pages' options are on.
// test/http/original-client.test.ts plays the original client's calls against them on every adapter.
import { randomBytes } from "node:crypto";
import { createAuth, createUser, login, memoryStorage } from "@portcullis/core";
import { describe, expect, it } from "vitest";
import { originalClientSettings, singleRole } from "./original-client.js";

const base = () => ({
  storage: memoryStorage(),
  issuer: "https://api.example.com",
  audience: "example-api",
  secrets: { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("hex") },
});
const corp = {
  issuer: "https://id.example.com",
  clientId: "portcullis",
  clientSecret: "a client secret",
  redirectUri: "https://app.example.com/oauth/corp",
};

describe("docs/examples/original-client.ts", () => {
  it("sets always-200, the password-change alias, the role hook, unsafeAllowMissingIss on every provider, the recovery codes at setup, TOTP enrolment without proof, the password change without the second factor and a 10-second refreshReuseInterval; the token set's user has one role", async () => {
    const settings = originalClientSettings({ corp });
    expect(settings.http).toEqual({ statusMode: "always-200", passwordChangeAlias: true });
    expect(settings.oauth?.providers.corp).toEqual({ ...corp, unsafeAllowMissingIss: true });
    expect(settings.totp).toEqual({ recoveryCodesAtSetup: true });
    expect(settings.reauthentication).toEqual({
      unsafeAllowTotpEnrolmentWithoutProof: true,
      unsafeAllowPasswordChangeWithoutSecondFactor: true,
    });
    expect(settings.refreshReuseInterval).toBe("10s");
    const auth = createAuth({ ...base(), ...settings });
    expect(auth.config.statusMode).toBe("always-200");
    expect(auth.config.passwordChangeAlias).toBe(true);
    expect(auth.config.totp.recoveryCodesAtSetup).toBe(true);
    expect(auth.config.reauthentication.unsafeAllowTotpEnrolmentWithoutProof).toBe(true);
    expect(auth.config.reauthentication.unsafeAllowPasswordChangeWithoutSecondFactor).toBe(true);
    expect(auth.config.refreshReuseInterval).toBe(10);
    await createUser(auth, { username: "dana", password: "correct horse battery staple", roles: ["admin", "user"] });
    const result = await login(auth, { username: "dana", password: "correct horse battery staple" });
    expect(result.status === "authenticated" && result.tokens.user).toMatchObject({ role: "admin", roles: ["admin", "user"] });
    expect(
      singleRole({ id: "1", username: "x", roles: [], totpEnabled: false, email: null, emailVerified: false, createdAt: 0 }),
    ).toEqual({
      role: "user",
    });
  });

  it("OA-12: two providers on one redirect URI are refused at createAuth, naming both", () => {
    const settings = originalClientSettings({ corp, twin: { ...corp, clientId: "another" } });
    expect(() => createAuth({ ...base(), ...settings })).toThrow(
      /oauth\.providers\.corp\.unsafeAllowMissingIss needs a redirectUri no other provider uses, but providers\.twin uses the same/,
    );
  });
});
