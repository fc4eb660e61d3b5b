import { describe, expect, it, vi } from "vitest";
import { addUser, makeAuth, signIn } from "../flows/fixtures.test-support.js";
import { refresh } from "../flows/refresh.js";
import { sweepBatchSize, writesPerSweep as tokenSetsPerSweep } from "../storage/sweep.js";

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
