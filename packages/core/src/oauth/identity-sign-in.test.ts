import { describe, expect, it } from "vitest";
import { addUser, authError, enrolTotp, makeAuth, slowStorage } from "../flows/fixtures.test-support.js";
import { setUserDisabled } from "../flows/manage-users.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { memoryStorage } from "../storage/memory.js";
import { signInWithIdentity } from "./identity-sign-in.js";
import { type OAuthProviderConfig, resolveOAuthConfig } from "./provider-config.js";

const base: OAuthProviderConfig = {
  issuer: "https://id.example.com",
  clientId: "portcullis",
  redirectUri: "https://app.example.com/callback",
};

function providerWith(changes: Partial<OAuthProviderConfig> = {}) {
  return resolveOAuthConfig({ providers: { corp: { ...base, ...changes } } }).get("corp") as NonNullable<
    ReturnType<ReturnType<typeof resolveOAuthConfig>["get"]>
  >;
}

const alice = { subject: "sub-alice", username: "alice", email: "alice@example.com", emailVerified: true };

describe("signInWithIdentity", () => {
  it("OA-7: a first sign-in makes an account without a password, with the default roles, linked to (provider, subject); the next finds it", async () => {
    const harness = makeAuth();
    const provider = providerWith({ provisioning: { defaultRoles: ["user"] } });
    const first = await signInWithIdentity(harness.auth, provider, alice);
    if (first.status !== "authenticated") throw new Error(first.status);
    expect(first.tokens.user).toMatchObject({ username: "alice", roles: ["user"] });
    const access = await verifyAccessToken(harness.auth, { token: first.tokens.accessToken });
    expect(access.amr).toEqual(["fed"]);
    expect(await harness.storage.identities.find("corp", "sub-alice")).toMatchObject({
      userId: access.userId,
      email: "alice@example.com",
      emailVerified: true,
    });
    expect((await harness.storage.users.findById(access.userId))?.passwordHash).toBeNull();
    const second = await signInWithIdentity(harness.auth, provider, { ...alice, username: "renamed" });
    if (second.status !== "authenticated") throw new Error(second.status);
    expect(second.tokens.user.id).toBe(access.userId);
  });

  it("OA-7: an existing account with the same username or email is never taken over: the new account gets another name", async () => {
    const harness = makeAuth();
    const existing = await addUser(harness.auth, "alice");
    const result = await signInWithIdentity(harness.auth, providerWith(), alice);
    if (result.status !== "authenticated") throw new Error(result.status);
    expect(result.tokens.user.id).not.toBe(existing);
    expect(result.tokens.user.username).toMatch(/^alice-[a-z0-9x]+$/);
  });

  it("OA-7: a provider username that is no valid username falls back to the email's local part, then to <provider>-user; a long one is cut", async () => {
    const harness = makeAuth();
    const provider = providerWith();
    const named = async (profile: Parameters<typeof signInWithIdentity>[2]) => {
      const result = await signInWithIdentity(harness.auth, provider, profile);
      if (result.status !== "authenticated") throw new Error(result.status);
      return result.tokens.user.username;
    };
    expect(await named({ subject: "s1", username: "bad\u0000name", email: "frank@example.com" })).toBe("frank");
    expect(await named({ subject: "s2", username: "   " })).toBe("corp-user");
    expect(await named({ subject: "s3", username: "x".repeat(300) })).toMatch(/^x{100}$/);
    expect(await named({ subject: "s4", username: ` ${"y".repeat(99)} z` })).toBe("y".repeat(99));
  });

  it("OA-7: with provisioning off, an unlinked person is 40100 and nothing is created", async () => {
    const harness = makeAuth();
    const error = await authError(signInWithIdentity(harness.auth, providerWith({ provisioning: false }), alice));
    expect(error).toMatchObject({ code: 40100, message: "No account is linked to this sign-in" });
    expect(await harness.storage.identities.find("corp", "sub-alice")).toBeNull();
  });

  it("EN-3, TMP-1: a disabled account is 40300; a TOTP user gets a temporary token unless the provider is trusted for the second factor", async () => {
    const harness = makeAuth();
    const first = await signInWithIdentity(harness.auth, providerWith(), alice);
    if (first.status !== "authenticated") throw new Error(first.status);
    const userId = first.tokens.user.id;
    await harness.storage.users.update(
      userId,
      { passwordHash: await harness.auth.passwords.hash("correct horse battery staple") },
      harness.clock.now,
    );
    await enrolTotp(harness.auth, userId);
    expect((await signInWithIdentity(harness.auth, providerWith(), alice)).status).toBe("totp_required");
    expect((await signInWithIdentity(harness.auth, providerWith({ trustedForSecondFactor: true }), alice)).status).toBe(
      "authenticated",
    );
    await setUserDisabled(harness.auth, { userId, disabled: true });
    expect((await authError(signInWithIdentity(harness.auth, providerWith(), alice))).code).toBe(40300);
  });

  it("ST-1: concurrent first sign-ins of one person leave one usable account linked", async () => {
    const harness = makeAuth({ storage: slowStorage(memoryStorage()) });
    const results = await Promise.all(Array.from({ length: 5 }, () => signInWithIdentity(harness.auth, providerWith(), alice)));
    const ids = new Set(results.map((result) => (result.status === "authenticated" ? result.tokens.user.id : "")));
    expect(ids.size).toBe(1);
    const linked = await harness.storage.identities.find("corp", "sub-alice");
    expect(ids.has(linked?.userId as string)).toBe(true);
  });
});
