import { describe, expect, it } from "vitest";
import type { AuthEventOf } from "../events/types.js";
import {
  type Harness,
  addUser,
  authError,
  goodPassword,
  makeAuth,
  makeClock,
  outcome,
  signIn,
} from "../flows/fixtures.test-support.js";
import { refresh } from "../flows/refresh.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { memoryStorage } from "../storage/memory.js";
import type { TokenSet } from "../tokens/issue-tokens.js";
import { testChannel } from "../users/revocation-channel.test-support.js";
import { adminRevokeAllSessions, revokeAllSessions } from "./revoke-all-sessions.js";

const refused = 40101;

const checkOn = (harness: Harness, tokens: TokenSet) => outcome(verifyAccessToken(harness.auth, { token: tokens.accessToken }));
const refreshOn = (harness: Harness, tokens: TokenSet) => outcome(refresh(harness.auth, { refreshToken: tokens.refreshToken }));
const revokedAll = (harness: Harness) =>
  harness.events.filter((event): event is AuthEventOf<"sessions.all_revoked"> => event.type === "sessions.all_revoked");

/** Lets instances made just before subscribe to their channel (they do in a microtask). */
const subscribed = () => new Promise((resolve) => setImmediate(resolve));

describe("revokeAllSessions (STUP-6, ASVS 7.4.5)", () => {
  it("STUP-6, ASVS 7.4.5: every session of every user ends: refresh tokens refused at once, access tokens at their next check even when cached", async () => {
    const harness = makeAuth({ tokenStateCacheSeconds: 60 });
    await addUser(harness.auth, "alice");
    await addUser(harness.auth, "bob");
    const signedIn = [await signIn(harness, "alice"), await signIn(harness, "alice"), await signIn(harness, "bob")];
    for (const tokens of signedIn) expect(await checkOn(harness, tokens)).toBe("fulfilled");
    expect(harness.auth.tokenStateCache.size).toBe(3);

    expect(await revokeAllSessions(harness.auth)).toEqual({ ended: 3 });
    for (const tokens of signedIn) {
      expect(await checkOn(harness, tokens)).toBe(refused);
      expect(await refreshOn(harness, tokens)).toBe(refused);
    }
    expect(revokedAll(harness)).toEqual([{ type: "sessions.all_revoked", count: 3, by: null, at: harness.clock.now }]);
    // A sign-in after it is a new session.
    const after = await signIn(harness, "bob");
    expect(await checkOn(harness, after)).toBe("fulfilled");
    expect(await refreshOn(harness, after)).toBe("fulfilled");
  });

  it("STUP-6: a `by` that is no user id is 40002, and nothing ends", async () => {
    const harness = makeAuth();
    await addUser(harness.auth, "heidi");
    const tokens = await signIn(harness, "heidi");
    for (const by of ["", 42, {}]) {
      const { code, message } = await authError(revokeAllSessions(harness.auth, { by: by as string }));
      expect({ code, message }).toEqual({ code: 40002, message: "by must be a user id or null" });
    }
    expect(await checkOn(harness, tokens)).toBe("fulfilled");
    expect(revokedAll(harness)).toEqual([]);
    expect(await revokeAllSessions(harness.auth, { by: "an-administrator" })).toEqual({ ended: 1 });
    expect(revokedAll(harness)[0]?.by).toBe("an-administrator");
  });

  it("STUP-6: with no live session it ends none, and still says it was done", async () => {
    const harness = makeAuth();
    expect(await revokeAllSessions(harness.auth, { by: null })).toEqual({ ended: 0 });
    expect(revokedAll(harness)).toEqual([{ type: "sessions.all_revoked", count: 0, by: null, at: harness.clock.now }]);
  });

  it("STUP-6, TV-2: another instance refuses at once with a revocation channel, and within tokenStateCacheSeconds without one", async () => {
    for (const withChannel of [true, false]) {
      const storage = memoryStorage();
      const clock = makeClock();
      const revocationChannel = withChannel ? testChannel() : undefined;
      const a = makeAuth({ storage, clock, tokenStateCacheSeconds: 60, revocationChannel });
      const b = makeAuth({ storage, clock, tokenStateCacheSeconds: 60, revocationChannel });
      await subscribed();
      await addUser(a.auth, "carol");
      const tokens = await signIn(a, "carol");
      expect(await checkOn(b, tokens)).toBe("fulfilled");
      await revokeAllSessions(a.auth);
      expect(await refreshOn(b, tokens)).toBe(refused);
      if (withChannel) {
        expect(revocationChannel?.published.at(-1)).toBe('{"v":1,"kind":"all"}');
        expect(await checkOn(b, tokens)).toBe(refused);
        continue;
      }
      clock.advance(59_999);
      expect(await checkOn(b, tokens)).toBe("fulfilled");
      clock.advance(1);
      expect(await checkOn(b, tokens)).toBe(refused);
    }
  });
});

describe("adminRevokeAllSessions (STUP-6, AD-1)", () => {
  async function withAdmin() {
    const harness = makeAuth({ reauthentication: { recentSignIn: false } });
    const adminUserId = await addUser(harness.auth, "root", goodPassword, ["admin"]);
    await addUser(harness.auth, "dave");
    const admin = await signIn(harness, "root");
    const dave = await signIn(harness, "dave");
    const { sessionId } = await verifyAccessToken(harness.auth, { token: admin.accessToken });
    return { harness, adminUserId, sessionId, admin, dave };
  }

  it("STUP-6, ASVS 7.4.5: needs the administrator's re-authentication; ends every session, the administrator's own too, and names them in the event", async () => {
    const { harness, adminUserId, sessionId, admin, dave } = await withAdmin();
    expect(await outcome(adminRevokeAllSessions(harness.auth, { adminUserId, sessionId }))).toBe(40001);
    expect(await outcome(adminRevokeAllSessions(harness.auth, { adminUserId, sessionId, password: "not the password" }))).toBe(
      40100,
    );
    expect(revokedAll(harness)).toEqual([]);
    expect(await checkOn(harness, dave)).toBe("fulfilled");

    expect(await adminRevokeAllSessions(harness.auth, { adminUserId, sessionId, password: goodPassword })).toEqual({ ended: 2 });
    for (const tokens of [admin, dave]) expect(await checkOn(harness, tokens)).toBe(refused);
    expect(revokedAll(harness)).toEqual([{ type: "sessions.all_revoked", count: 2, by: adminUserId, at: harness.clock.now }]);
    expect(JSON.stringify(harness.events)).not.toContain(goodPassword);
  });

  it("STUP-6: an administrator who is gone or disabled since the token was issued is refused (40101) before anything ends", async () => {
    const { harness, adminUserId, sessionId, dave } = await withAdmin();
    await harness.auth.storage.users.update(adminUserId, { disabled: true }, harness.clock.now);
    const proof = { sessionId, password: goodPassword };
    expect(await outcome(adminRevokeAllSessions(harness.auth, { adminUserId, ...proof }))).toBe(refused);
    expect(await outcome(adminRevokeAllSessions(harness.auth, { adminUserId: "nobody", ...proof }))).toBe(refused);
    expect(await checkOn(harness, dave)).toBe("fulfilled");
  });
});
