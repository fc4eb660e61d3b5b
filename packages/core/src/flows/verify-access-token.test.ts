import { describe, expect, it } from "vitest";
import { ErrorCode } from "../errors/codes.js";
import { changePassword } from "./change-password.js";
import { type Harness, addUser, codeAt, enrolTotp, goodPassword, makeAuth, outcome, signIn } from "./fixtures.test-support.js";
import { login } from "./login.js";
import { logout } from "./logout.js";
import { setUserRoles } from "./manage-users.js";
import { refresh } from "./refresh.js";
import { verifyAccessToken } from "./verify-access-token.js";
import { verifyTotp } from "./verify-totp.js";

/** Two instances sharing storage and clock, as two processes of one service would. */
function twoInstances(tokenStateCacheSeconds: number): [Harness, Harness] {
  const first = makeAuth({ tokenStateCacheSeconds });
  return [first, makeAuth({ tokenStateCacheSeconds, storage: first.storage, clock: first.clock })];
}

describe("verifyAccessToken", () => {
  it("a live access token gives the user, session, roles, amr and token version", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "verified", goodPassword, ["reader"]);
    const tokens = await signIn(harness, "verified");
    const context = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
    expect(context).toMatchObject({ userId, roles: ["reader"], amr: ["pwd"], tokenVersion: 0 });
    expect(context.claims.exp - context.claims.iat).toBe(900);
    expect(await harness.storage.sessions.findSession(context.sessionId)).toMatchObject({ userId, revokedAt: null });
  });

  it("AT-3: the access token stops working after its lifetime (15 min) and the tolerance", async () => {
    const harness = makeAuth();
    await addUser(harness.auth, "expiring");
    const tokens = await signIn(harness, "expiring");
    harness.clock.advance(900_000 + 4_000);
    await verifyAccessToken(harness.auth, { token: tokens.accessToken });
    harness.clock.advance(2_000);
    expect(await outcome(verifyAccessToken(harness.auth, { token: tokens.accessToken }))).toBe(40101);
  });

  it("TMP-2: a temporary token or a refresh token is refused as an access token", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "kinds");
    const tokens = await signIn(harness, "kinds");
    await enrolTotp(harness.auth, userId);
    const result = await login(harness.auth, { username: "kinds", password: goodPassword });
    if (result.status !== "totp_required") throw new Error("expected a second-factor request");
    expect(await outcome(verifyAccessToken(harness.auth, { token: result.tempToken }))).toBe(ErrorCode.InvalidToken);
    expect(await outcome(verifyAccessToken(harness.auth, { token: tokens.refreshToken }))).toBe(ErrorCode.InvalidToken);
    expect(await outcome(verifyAccessToken(harness.auth, { token: `Bearer ${tokens.accessToken}` }))).toBe(
      ErrorCode.InvalidToken,
    );
  });

  describe("TV-2: stale tokens", () => {
    it("TV-2: with the default (no cache), a stale access token is refused at the next request, in every instance", async () => {
      const [first, second] = twoInstances(0);
      const userId = await addUser(first.auth, "stale");
      const tokens = await signIn(first, "stale");
      await verifyAccessToken(second.auth, { token: tokens.accessToken });
      await setUserRoles(first.auth, { userId, roles: ["admin"] });
      expect(await outcome(verifyAccessToken(first.auth, { token: tokens.accessToken }))).toBe(40101);
      expect(await outcome(verifyAccessToken(second.auth, { token: tokens.accessToken }))).toBe(40101);
    });

    it("TV-2: with tokenStateCacheSeconds 10, another instance accepts a stale token for at most 10 s", async () => {
      const [first, second] = twoInstances(10);
      const userId = await addUser(first.auth, "cached");
      const tokens = await signIn(first, "cached");
      await verifyAccessToken(second.auth, { token: tokens.accessToken });
      const checkedAt = second.clock.now;
      await changePassword(first.auth, { userId, currentPassword: goodPassword, newPassword: "a different passphrase" });
      expect(await outcome(verifyAccessToken(first.auth, { token: tokens.accessToken }))).toBe(40101);
      second.clock.now = checkedAt + 9_999;
      await verifyAccessToken(second.auth, { token: tokens.accessToken });
      second.clock.now = checkedAt + 10_000;
      expect(await outcome(verifyAccessToken(second.auth, { token: tokens.accessToken }))).toBe(40101);
      second.clock.now = checkedAt + 10_500;
      expect(await outcome(verifyAccessToken(second.auth, { token: tokens.accessToken }))).toBe(40101);
    });

    it("TV-2: the instance that raised the version or revoked the session refuses at once, despite its cache", async () => {
      const harness = makeAuth({ tokenStateCacheSeconds: 10 });
      const userId = await addUser(harness.auth, "local-cache");
      const roles = await signIn(harness, "local-cache");
      await verifyAccessToken(harness.auth, { token: roles.accessToken });
      await setUserRoles(harness.auth, { userId, roles: ["admin"] });
      expect(await outcome(verifyAccessToken(harness.auth, { token: roles.accessToken }))).toBe(40101);

      const loggedOut = await signIn(harness, "local-cache");
      await verifyAccessToken(harness.auth, { token: loggedOut.accessToken });
      await logout(harness.auth, { refreshToken: loggedOut.refreshToken });
      expect(await outcome(verifyAccessToken(harness.auth, { token: loggedOut.accessToken }))).toBe(40101);
    });

    it("TV-2: a session revoked in another instance is refused there within the cache delay", async () => {
      const [first, second] = twoInstances(10);
      await addUser(first.auth, "revoked-elsewhere");
      const tokens = await signIn(first, "revoked-elsewhere");
      await verifyAccessToken(second.auth, { token: tokens.accessToken });
      await logout(first.auth, { refreshToken: tokens.refreshToken });
      second.clock.advance(10_000);
      expect(await outcome(verifyAccessToken(second.auth, { token: tokens.accessToken }))).toBe(40101);
    });

    it("TV-2: stale refresh and temporary tokens are refused at once, whatever the cache", async () => {
      const [first, second] = twoInstances(10);
      const userId = await addUser(first.auth, "stale-others");
      const tokens = await signIn(first, "stale-others");
      await verifyAccessToken(second.auth, { token: tokens.accessToken });
      const { secret } = await enrolTotp(first.auth, userId);
      first.clock.advance(30_000);
      expect(await outcome(refresh(second.auth, { refreshToken: tokens.refreshToken }))).toBe(40101);
      const result = await login(second.auth, { username: "stale-others", password: goodPassword });
      if (result.status !== "totp_required") throw new Error("expected a second-factor request");
      await setUserRoles(first.auth, { userId, roles: ["admin"] });
      const code = codeAt(secret, second.clock.now);
      expect(await outcome(verifyTotp(second.auth, { tempToken: result.tempToken, code }))).toBe(40100);
    });
  });
});
