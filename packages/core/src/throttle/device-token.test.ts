import { createHmac, hkdfSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { makeAuth, signingSecret } from "../flows/fixtures.test-support.js";
import { deviceIdOf, issueDeviceToken } from "./device-token.js";

const deviceId = "AAAAAAAAAAAAAAAAAAAAAA";

describe("device token", () => {
  it("RL-5: the token is stable across releases: `<device id>.<issued at>.<MAC>`, the MAC as documented", () => {
    const key = Buffer.from(Array.from({ length: 32 }, (_, index) => index));
    const { auth, clock } = makeAuth({ secrets: { signing: signingSecret, encryption: key.toString("hex") } });
    const issuedAt = clock.now / 1000;
    const derived = Buffer.from(hkdfSync("sha256", key, "portcullis", "portcullis device token v1", 32));
    const tag = createHmac("sha256", derived).update(`${deviceId}.${issuedAt}.alice`).digest().subarray(0, 16);
    const expected = `${deviceId}.${issuedAt}.${tag.toString("base64url")}`;
    expect(issueDeviceToken(auth, "alice", deviceId)).toBe(expected);
    expect(deviceIdOf(auth, expected, "alice")).toBe(deviceId);
    expect(deviceIdOf(auth, expected, "bob")).toBeNull();
  });

  it("RL-5: a token is honoured from 60 seconds before it was issued (clock skew) until throttle.deviceTokenLifetime after", () => {
    const { auth, clock } = makeAuth({ throttle: { deviceTokenLifetime: "1d" } });
    const issued = clock.now;
    const token = issueDeviceToken(auth, "alice", deviceId);
    const at = (offsetMs: number) => {
      clock.now = issued + offsetMs;
      return deviceIdOf(auth, token, "alice");
    };
    expect(at(-60_001)).toBeNull();
    expect(at(-60_000)).toBe(deviceId);
    expect(at(86_400_000 - 1)).toBe(deviceId);
    expect(at(86_400_000)).toBeNull();
  });

  it("RL-5: no token, or one of another shape, is no device", () => {
    const { auth } = makeAuth();
    const token = issueDeviceToken(auth, "alice");
    expect(deviceIdOf(auth, token, "alice")).toBe(token.split(".")[0]);
    for (const other of [undefined, "", "undefined", `${token}.`, ` ${token}`])
      expect(deviceIdOf(auth, other, "alice")).toBeNull();
  });
});
