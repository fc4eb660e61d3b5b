import { describe, expect, it } from "vitest";
import { ErrorCode } from "../errors/codes.js";
import { addUser, authError, makeAuth, outcome, signIn } from "./fixtures.test-support.js";
import { logout } from "./logout.js";
import { refresh } from "./refresh.js";
import { verifyAccessToken } from "./verify-access-token.js";

describe("logout", () => {
  const harness = makeAuth();
  const userId = addUser(harness.auth, "leaving");

  it("RT-4: logout revokes the session: its refresh and access tokens stop working; other sessions live on", async () => {
    const id = await userId;
    const kept = await signIn(harness, "leaving");
    const ended = await signIn(harness, "leaving");
    const rotated = await refresh(harness.auth, { refreshToken: ended.refreshToken });
    harness.events.length = 0;
    await logout(harness.auth, { refreshToken: rotated.refreshToken });
    expect(harness.events).toEqual([expect.objectContaining({ type: "session.revoked", userId: id, reason: "logout" })]);
    expect(await outcome(refresh(harness.auth, { refreshToken: rotated.refreshToken }))).toBe(40101);
    expect(await outcome(verifyAccessToken(harness.auth, { token: rotated.accessToken }))).toBe(40101);
    expect(await outcome(verifyAccessToken(harness.auth, { token: ended.accessToken }))).toBe(40101);
    await verifyAccessToken(harness.auth, { token: kept.accessToken });
    await refresh(harness.auth, { refreshToken: kept.refreshToken });
  });

  it("RT-4: logout with a spent refresh token of the session still ends the session", async () => {
    await userId;
    const first = await signIn(harness, "leaving");
    const second = await refresh(harness.auth, { refreshToken: first.refreshToken });
    await logout(harness.auth, { refreshToken: first.refreshToken });
    expect(await outcome(refresh(harness.auth, { refreshToken: second.refreshToken }))).toBe(40101);
  });

  it("RT-4: an unknown refresh token, or an access token, is refused with 40101", async () => {
    const tokens = await signIn(harness, "leaving");
    expect((await authError(logout(harness.auth, { refreshToken: "B".repeat(43) }))).code).toBe(ErrorCode.InvalidToken);
    expect((await authError(logout(harness.auth, { refreshToken: tokens.accessToken }))).code).toBe(ErrorCode.InvalidToken);
    expect(await outcome(logout(harness.auth, { refreshToken: undefined as never }))).toBe(ErrorCode.MissingParameter);
    await refresh(harness.auth, { refreshToken: tokens.refreshToken });
  });

  it("PW-5: each missing field is 40001 naming it, each non-string 40002 naming it", async () => {
    for (const missing of [undefined, null, ""]) {
      const error = await authError(logout(harness.auth, { refreshToken: missing as never }));
      expect({ code: error.code, message: error.message }).toEqual({
        code: ErrorCode.MissingParameter,
        message: "refreshToken is required",
      });
    }
    for (const malformed of [{ $ne: "" }, ["token"], 42]) {
      const error = await authError(logout(harness.auth, { refreshToken: malformed as never }));
      expect({ code: error.code, message: error.message }).toEqual({
        code: ErrorCode.MalformedParameter,
        message: "refreshToken must be a string",
      });
    }
  });
});
