// The rule of a refresh's one write, as a table: memory.test.ts runs the conformance kit's
// rotation tests on the store that applies it (memoryStorage), these the rule itself.
import { describe, expect, it } from "vitest";
import { rotationOf } from "../testing/conformance/refresh-rotation.js";
import { BASE_TIME, sampleSession, sampleUser } from "../testing/conformance/samples.js";
import { mayRefresh, mayRotate, rotatedSession } from "./refresh-rotation.js";
import type { RefreshRotation, SessionRecord, UserRecord } from "./types.js";

const HOUR = 3_600_000;
const now = BASE_TIME + HOUR / 2;
const user = sampleUser({ tokenVersion: 3 });
const session = sampleSession(user.id, { tokenVersion: 3 });

/** One row: what differs from the live session, user and rotation above, and whether it may refresh (rotate). */
type Row = [string, Partial<SessionRecord>, Partial<UserRecord> | null, Partial<RefreshRotation>, boolean, boolean];

const rows: Row[] = [
  ["a live session holding the presented hash, its user enabled at its token version", {}, {}, {}, true, true],
  ["RT-2: another hash than the session's current one", {}, {}, { hash: "0".repeat(64) }, true, false],
  ["RT-2: a session that holds no refresh token", { refreshHash: null }, {}, {}, true, false],
  ["another session's id in the rotation", {}, {}, { sessionId: "session-other" }, true, false],
  ["RT-4: a revoked session", { revokedAt: BASE_TIME + 1 }, {}, {}, false, false],
  ["RT-4: the session's absolute expiry at now", { expiresAt: now }, {}, {}, false, false],
  ["RT-4: the session's absolute expiry a millisecond after now", { expiresAt: now + 1 }, {}, {}, true, true],
  ["RT-4: the refresh token's idle expiry at now", { refreshExpiresAt: now }, {}, {}, false, false],
  ["RT-4: the refresh token's idle expiry a millisecond after now", { refreshExpiresAt: now + 1 }, {}, {}, true, true],
  ["RT-4: a disabled user", {}, { disabled: true }, {}, false, false],
  ["TV-2: a user at a later token version", {}, { tokenVersion: 4 }, {}, false, false],
  ["TV-2: a user at an earlier token version", {}, { tokenVersion: 2 }, {}, false, false],
  ["TV-2: a missing user", {}, null, {}, false, false],
  ["ST-2: another user than the session's", {}, { id: "user-other" }, {}, false, false],
];

describe("mayRefresh and mayRotate: the condition of rotateRefresh (RT-2, RT-4, TV-2)", () => {
  for (const [name, sessionChange, userChange, rotationChange, refreshes, rotates] of rows) {
    it(`${name}: mayRefresh ${refreshes}, mayRotate ${rotates}`, () => {
      const changed = { ...session, ...sessionChange };
      const changedUser = userChange === null ? null : { ...user, ...userChange };
      expect(mayRefresh(changed, changedUser, now)).toBe(refreshes);
      expect(mayRotate(changed, changedUser, rotationOf(session, { now, ...rotationChange }))).toBe(rotates);
    });
  }
});

describe("rotatedSession: the session after rotateRefresh's write", () => {
  it("RT-1: takes the new hash and generation, records the use, and moves nothing else", () => {
    const rotation = rotationOf(session, { now, nextGeneration: 7, use: { userAgent: "Agent/3.0", address: null } });
    expect(rotatedSession(session, rotation)).toEqual({
      ...session,
      refreshHash: rotation.nextHash,
      refreshGeneration: 7,
      refreshExpiresAt: now + rotation.idleMs,
      lastUsedAt: now,
      userAgent: "Agent/3.0",
      address: null,
    });
  });

  it("RT-4: the new idle expiry is now + idleMs, or the session's absolute expiry when that comes first", () => {
    const cases: [number, number][] = [
      [now + 2 * HOUR, now + 2 * HOUR],
      [now + 2 * HOUR - 1, now + 2 * HOUR - 1],
      [now + 2 * HOUR + 1, now + 2 * HOUR],
    ];
    for (const [expiresAt, refreshExpiresAt] of cases) {
      const ending = { ...session, expiresAt };
      const after = rotatedSession(ending, rotationOf(ending, { now, idleMs: 2 * HOUR }));
      expect(after.refreshExpiresAt).toBe(refreshExpiresAt);
      expect(after.expiresAt).toBe(expiresAt);
    }
  });
});
