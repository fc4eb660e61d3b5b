import { rotatedSession } from "../../storage/refresh-rotation.js";
import { findTokenState } from "../../storage/token-state.js";
import { type SuiteContext, concurrently, countWhere, tryToMutate } from "./harness.js";
import { legacyRefreshTokenTests } from "./legacy-refresh-tokens.js";
import { refreshRotationTests, rotationOf } from "./refresh-rotation.js";
import { revokeAllTests } from "./revoke-all.js";
import { BASE_TIME, createUser, sampleSession, uniqueId } from "./samples.js";
import { sessionListingTests } from "./session-listing.js";

/**
 * Registers the `sessions` suite: revocation, a session's refresh token rotated by one write,
 * exactly once of N concurrent tries (RT-3), an earlier release's tokens read where the store
 * has them, a user's sessions listed and ended but one (SE-1, SE-2, SE-3), and the administrator
 * acting as the user kept with the session (IMP-3).
 */
export function sessionsSuite(context: SuiteContext): void {
  const {
    test: { describe, it, expect },
    makeStorage,
  } = context;
  describe("sessions", () => {
    sessionListingTests(context);
    refreshRotationTests(context);
    legacyRefreshTokenTests(context);
    revokeAllTests(context);

    it("RT-1: createSession stores a session that findSession returns, its refresh hash, generation and idle expiry included; an unknown id is null", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const session = sampleSession(userId);
      const later = sampleSession(userId, { refreshGeneration: 999_999_999_999_999, refreshExpiresAt: BASE_TIME + 5 });
      const without = sampleSession(userId, { refreshHash: null, refreshGeneration: 3 });
      for (const created of [session, later, without]) {
        await storage.sessions.createSession(created);
        expect(await storage.sessions.findSession(created.id)).toEqual(created);
      }
      expect(await storage.sessions.findSession(uniqueId("session"))).toBeNull();
    });

    it("IMP-3: a session's impersonator is stored and read back by findSession and listByUser (the user's sessions list shows it); a session made without one reads as having none", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const adminId = await createUser(storage, { roles: ["admin"] });
      const impersonated = sampleSession(userId, { impersonatorId: adminId, createdAt: BASE_TIME + 2 });
      const own = sampleSession(userId, { createdAt: BASE_TIME + 1 });
      const { impersonatorId: _, ...older } = sampleSession(userId);
      for (const created of [impersonated, own, older]) await storage.sessions.createSession(created);
      expect(await storage.sessions.findSession(impersonated.id)).toEqual(impersonated);
      expect(await storage.sessions.findSession(own.id)).toEqual(own);
      const found = await storage.sessions.findSession(older.id);
      expect(found?.impersonatorId ?? null).toBeNull();
      expect({ ...found, impersonatorId: undefined }).toEqual({ ...older, impersonatorId: undefined });
      const listed = await storage.sessions.listByUser(userId, BASE_TIME, 10);
      expect(listed.map((session) => [session.id, session.impersonatorId ?? null])).toEqual([
        [impersonated.id, adminId],
        [own.id, null],
        [older.id, null],
      ]);
    });

    it("TV-2: findTokenState (the store's, or its two reads) gives a session's end, revocation and user, and the user's token version and disabled flag as stored now", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage, { tokenVersion: 4 });
      const session = sampleSession(userId, { tokenVersion: 4 });
      const other = sampleSession(await createUser(storage));
      for (const created of [session, other]) await storage.sessions.createSession(created);
      const stateOf = async (id: string, ofUser = userId) => {
        const state = await findTokenState(storage, id, ofUser);
        return (
          state && {
            session: { userId: state.session.userId, revokedAt: state.session.revokedAt, expiresAt: state.session.expiresAt },
            user: state.user && { tokenVersion: state.user.tokenVersion, disabled: state.user.disabled },
          }
        );
      };
      const live = { userId, revokedAt: null, expiresAt: session.expiresAt };
      expect(await stateOf(session.id)).toEqual({ session: live, user: { tokenVersion: 4, disabled: false } });
      expect(await stateOf(uniqueId("session"))).toBeNull();
      await storage.users.incrementTokenVersion(userId, BASE_TIME + 10);
      await storage.users.update(userId, { disabled: true }, BASE_TIME + 10);
      await storage.sessions.revokeSession(session.id, BASE_TIME + 20);
      expect(await stateOf(session.id)).toEqual({
        session: { ...live, revokedAt: BASE_TIME + 20 },
        user: { tokenVersion: 5, disabled: true },
      });
      expect((await stateOf(other.id, userId))?.session.userId).toBe(other.userId);
    });

    it("revokeSession is true once, then false; an unknown session is false", async () => {
      const storage = await makeStorage();
      const session = sampleSession(await createUser(storage));
      await storage.sessions.createSession(session);
      expect(await storage.sessions.revokeSession(session.id, BASE_TIME + 10)).toBe(true);
      expect(await storage.sessions.revokeSession(session.id, BASE_TIME + 20)).toBe(false);
      expect(await storage.sessions.findSession(session.id)).toEqual({ ...session, revokedAt: BASE_TIME + 10 });
      expect(await storage.sessions.revokeSession(uniqueId("session"), BASE_TIME)).toBe(false);
    });

    it("setTokenVersion moves a live session to a new token version; a revoked or unknown one is false and unchanged", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const live = sampleSession(userId, { tokenVersion: 2 });
      const other = sampleSession(userId, { tokenVersion: 2 });
      const revoked = sampleSession(userId, { tokenVersion: 2, revokedAt: BASE_TIME + 5 });
      for (const session of [live, other, revoked]) await storage.sessions.createSession(session);
      expect(await storage.sessions.setTokenVersion(live.id, 3)).toBe(true);
      expect(await storage.sessions.findSession(live.id)).toEqual({ ...live, tokenVersion: 3 });
      expect(await storage.sessions.findSession(other.id)).toEqual(other);
      expect(await storage.sessions.setTokenVersion(revoked.id, 3)).toBe(false);
      expect(await storage.sessions.findSession(revoked.id)).toEqual(revoked);
      expect(await storage.sessions.setTokenVersion(uniqueId("session"), 3)).toBe(false);
    });

    it("STUP-2, ASVS 7.2.4, ST-1: of 20 concurrent revokeSession calls on one session exactly one is true, and the session is revoked at its time; the user's other session stays live", async () => {
      // A re-authentication ends the session it raises before it begins the new one: only the
      // caller whose revocation ended it goes on, so two re-authentications of one session never
      // both leave a live session behind.
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const session = sampleSession(userId);
      const other = sampleSession(userId);
      for (const created of [session, other]) await storage.sessions.createSession(created);
      const results = await concurrently(20, (index) => storage.sessions.revokeSession(session.id, BASE_TIME + 100 + index));
      expect(countWhere(results, (ended) => ended)).toBe(1);
      const winner = results.indexOf(true);
      expect(await storage.sessions.findSession(session.id)).toEqual({ ...session, revokedAt: BASE_TIME + 100 + winner });
      expect(await storage.sessions.findSession(other.id)).toEqual(other);
    });

    it("revokeUserSessions revokes and counts only that user's live sessions", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const otherId = await createUser(storage);
      const live = [sampleSession(userId), sampleSession(userId)];
      const revoked = sampleSession(userId, { revokedAt: BASE_TIME + 5 });
      const others = sampleSession(otherId);
      for (const session of [...live, revoked, others]) await storage.sessions.createSession(session);
      expect(await storage.sessions.revokeUserSessions(userId, BASE_TIME + 100)).toBe(2);
      for (const session of live) {
        expect((await storage.sessions.findSession(session.id))?.revokedAt).toBe(BASE_TIME + 100);
      }
      expect((await storage.sessions.findSession(revoked.id))?.revokedAt).toBe(BASE_TIME + 5);
      expect((await storage.sessions.findSession(others.id))?.revokedAt).toBeNull();
      expect(await storage.sessions.revokeUserSessions(userId, BASE_TIME + 200)).toBe(0);
    });

    it("records are copied in, and copied or frozen out: mutating an argument or a result changes nothing stored", async () => {
      const storage = await makeStorage();
      const session = sampleSession(await createUser(storage));
      const original = structuredClone(session);
      await storage.sessions.createSession(session);
      session.amr.push("hwk");
      session.expiresAt += 1;
      const found = await storage.sessions.findSession(original.id);
      expect(found).toEqual(original);
      if (found) {
        tryToMutate(() => found.amr.push("fed"));
        tryToMutate(() => {
          found.revokedAt = BASE_TIME;
        });
      }
      expect(await storage.sessions.findSession(original.id)).toEqual(original);
      expect(await storage.sessions.revokeSession(original.id, BASE_TIME + 1)).toBe(true);

      const live = sampleSession(original.userId);
      await storage.sessions.createSession(live);
      const rotation = rotationOf(live, { use: { userAgent: "Agent/2.0", address: null } });
      const rotated = await storage.sessions.rotateRefresh(rotation);
      expect(rotated.outcome).toBe("rotated");
      if (rotated.outcome === "rotated") {
        // The answer's session shares nothing with the one stored: its amr neither.
        tryToMutate(() => rotated.session.amr.push("fed"));
        tryToMutate(() => {
          rotated.session.refreshHash = null;
          rotated.user.tokenVersion += 1;
        });
      }
      rotation.use.userAgent = "changed after the call";
      const use = { userAgent: "Agent/2.0", address: null };
      expect(await storage.sessions.findSession(live.id)).toEqual(rotatedSession(live, { ...rotation, use }));
      expect((await storage.users.findById(live.userId))?.tokenVersion).toBe(0);
    });
  });
}
