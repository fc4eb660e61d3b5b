import { describe, expect, it, vi } from "vitest";
import { addUser, makeAuth, signIn } from "../flows/fixtures.test-support.js";
import { refresh } from "../flows/refresh.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { sweepBatchSize, writesPerSweep as tokenSetsPerSweep } from "../storage/sweep.js";
import type { UserRecord } from "../storage/types.js";
import { startSession } from "./issue-tokens.js";

describe("sweeping expired rows", () => {
  it("every 1000th token set deletes what has expired by the instance's clock, in the background; a failure is reported", async () => {
    const reported: unknown[] = [];
    const harness = makeAuth({ onInternalError: (error, requestId) => reported.push([error, requestId]) });
    await addUser(harness.auth, "busy");
    const sweep = vi.spyOn(harness.storage.challenges, "deleteExpired").mockRejectedValueOnce(new Error("storage away"));
    let tokens = await signIn(harness, "busy");
    for (let issued = 1; issued < tokenSetsPerSweep; issued += 1) {
      if (issued === tokenSetsPerSweep - 1) expect(sweep).not.toHaveBeenCalled();
      harness.clock.advance(1);
      tokens = await refresh(harness.auth, { refreshToken: tokens.refreshToken });
    }
    expect(sweep).toHaveBeenCalledExactlyOnceWith(harness.clock.now, sweepBatchSize);
    await vi.waitFor(() => expect(reported).toEqual([[new Error("storage away"), "sweep"]]));
    for (let issued = 0; issued < tokenSetsPerSweep; issued += 1) {
      tokens = await refresh(harness.auth, { refreshToken: tokens.refreshToken });
    }
    expect(sweep).toHaveBeenCalledTimes(2);
  });
});

describe("the session's sign-in time (STUP-1, STUP-5)", () => {
  it("STUP-1, STUP-5, ASVS 10.3.4: a first factor proven before now (a provider's auth_time) is the session's authTime; one stated ahead of now is now", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "timed");
    const user = (await harness.storage.users.findById(userId)) as UserRecord;
    const now = harness.clock.now;
    const authTimes = [];
    for (const stated of [undefined, now - 90_000, now + 20_000]) {
      const tokens = await startSession(harness.auth, user, ["fed"], {}, stated);
      const { sessionId, authTime } = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
      const stored = (await harness.storage.sessions.findSession(sessionId))?.authTime as number;
      expect(authTime).toBe(stored / 1000);
      authTimes.push(stored);
    }
    expect(authTimes).toEqual([now, now - 90_000, now]);
  });
});
