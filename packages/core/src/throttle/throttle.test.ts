import { describe, expect, it } from "vitest";
import { authError, makeAuth, outcome } from "../flows/fixtures.test-support.js";
import { clearAccountFailures, takeAttempt } from "./throttle.js";

const minute = 60_000;

describe("throttle", () => {
  it("RL-1: each tier allows its limit per window, and the first to run out gives the retry time", async () => {
    const { auth, clock, events } = makeAuth({
      throttle: {
        account: [
          { limit: 2, window: "1m" },
          { limit: 3, window: "1h" },
        ],
      },
    });
    const start = clock.now;
    const aliceKey = auth.pseudonym("alice");
    await takeAttempt(auth, "account", "alice");
    await takeAttempt(auth, "account", "alice");
    clock.advance(10_000);
    const short = await authError(takeAttempt(auth, "account", "alice"));
    expect(short.code).toBe(42900);
    expect(short.retryAfterSeconds).toBe(50);
    clock.now = start + minute;
    await takeAttempt(auth, "account", "alice");
    const long = await authError(takeAttempt(auth, "account", "alice"));
    expect(long.retryAfterSeconds).toBe(59 * 60);
    expect(events.filter((event) => event.type === "throttled")).toEqual([
      { type: "throttled", scope: "account", key: aliceKey, retryAfterSeconds: 50, at: start + 10_000, ip: undefined },
      { type: "throttled", scope: "account", key: aliceKey, retryAfterSeconds: 3540, at: start + minute, ip: undefined },
    ]);
    expect(JSON.stringify(events)).not.toContain('"alice"');
    clock.now = start + 60 * minute;
    expect(await outcome(takeAttempt(auth, "account", "alice"))).toBe("fulfilled");
  });

  it("RL-1: an attempt refused by the first tier is not counted by the next", async () => {
    const { auth, clock } = makeAuth({
      throttle: {
        account: [
          { limit: 1, window: "1m" },
          { limit: 3, window: "1h" },
        ],
      },
    });
    await takeAttempt(auth, "account", "bob");
    for (let attempt = 0; attempt < 10; attempt += 1) expect(await outcome(takeAttempt(auth, "account", "bob"))).toBe(42900);
    expect(await auth.storage.counters.peek(`account:${auth.pseudonym("bob")}:1`, auth.now())).toBe(1);
    clock.advance(minute);
    expect(await outcome(takeAttempt(auth, "account", "bob"))).toBe("fulfilled");
  });

  it("RL-1: clearing an account's failures empties every tier, and only that account's", async () => {
    const { auth } = makeAuth();
    for (let attempt = 0; attempt < 5; attempt += 1) {
      await takeAttempt(auth, "account", "carol");
      await takeAttempt(auth, "account", "dave");
    }
    await clearAccountFailures(auth, "carol");
    expect(await auth.storage.counters.peek(`account:${auth.pseudonym("carol")}:0`, auth.now())).toBe(0);
    expect(await auth.storage.counters.peek(`account:${auth.pseudonym("carol")}:1`, auth.now())).toBe(0);
    expect(await outcome(takeAttempt(auth, "account", "carol"))).toBe("fulfilled");
    expect(await outcome(takeAttempt(auth, "account", "dave"))).toBe(42900);
  });

  it("RL-3: the address scope counts IPv6 per /64 and reports the bucket, not the address", async () => {
    const { auth, events } = makeAuth({ throttle: { ip: [{ limit: 2, window: "1m" }] } });
    await takeAttempt(auth, "ip", "2001:db8:5:6::1", "2001:db8:5:6::1");
    await takeAttempt(auth, "ip", "2001:db8:5:6:aaaa::2", "2001:db8:5:6:aaaa::2");
    expect(await outcome(takeAttempt(auth, "ip", "2001:db8:5:6:ffff:ffff:ffff:ffff"))).toBe(42900);
    expect(await outcome(takeAttempt(auth, "ip", "2001:db8:5:7::1"))).toBe("fulfilled");
    expect(events.find((event) => event.type === "throttled")).toMatchObject({ scope: "ip", key: "2001:db8:5:6::/64" });
  });

  it("RL-3, RL-7: unauthenticated writes count IPv6 per /64 too, on counters apart from the address's attempts at secrets", async () => {
    const { auth, events } = makeAuth({
      throttle: { ip: [{ limit: 1, window: "1m" }], unauthenticatedWrites: [{ limit: 2, window: "1m" }] },
    });
    await takeAttempt(auth, "ip", "2001:db8:5:6::1");
    await takeAttempt(auth, "unauthenticatedWrites", "2001:db8:5:6::1");
    await takeAttempt(auth, "unauthenticatedWrites", "2001:db8:5:6:aaaa::2");
    expect(await outcome(takeAttempt(auth, "unauthenticatedWrites", "2001:db8:5:6::3"))).toBe(42900);
    expect(await outcome(takeAttempt(auth, "unauthenticatedWrites", "2001:db8:5:7::1"))).toBe("fulfilled");
    expect(events.find((event) => event.type === "throttled")).toMatchObject({
      scope: "unauthenticatedWrites",
      key: "2001:db8:5:6::/64",
    });
  });

  it("RL-5: each device has a counter of its own, apart from every account's", async () => {
    const { auth } = makeAuth({ throttle: { account: [{ limit: 1, window: "1m" }], device: [{ limit: 1, window: "1m" }] } });
    await takeAttempt(auth, "device", "device-one");
    expect(await outcome(takeAttempt(auth, "device", "device-one"))).toBe(42900);
    expect(await outcome(takeAttempt(auth, "device", "device-two"))).toBe("fulfilled");
    expect(await outcome(takeAttempt(auth, "account", "device-one"))).toBe("fulfilled");
  });
});
