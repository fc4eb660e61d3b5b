import { describe, expect, it } from "vitest";
import { resolveSessionConfig } from "./session-config.js";
import { shownAddress, shownUserAgent, userAgentLength } from "./session-use.js";

describe("what a session shows of its client", () => {
  it("SE-1: an IPv4 address is kept as its /24, an IPv6 address as its /48, unless kept whole", () => {
    const cases: Array<[string, string, string]> = [
      ["203.0.113.77", "203.0.113.0/24", "203.0.113.77"],
      ["10.0.0.255", "10.0.0.0/24", "10.0.0.255"],
      ["2001:db8:1:2:3:4:5:6", "2001:db8:1::/48", "2001:db8:1:2:3:4:5:6"],
      ["2001:0DB8:0001::1", "2001:db8:1::/48", "2001:0db8:0001::1"],
      ["::1", "0:0:0::/48", "::1"],
      ["fe80::1%eth0", "fe80:0:0::/48", "fe80::1"],
      ["::ffff:198.51.100.9", "198.51.100.0/24", "198.51.100.9"],
      ["[2001:db8:abcd:12::1]", "2001:db8:abcd::/48", "2001:db8:abcd:12::1"],
    ];
    for (const [ip, network, whole] of cases) {
      expect(shownAddress(ip, false), ip).toBe(network);
      expect(shownAddress(ip, true), ip).toBe(whole);
    }
  });

  it("SE-1: anything that is no IP address shows as null", () => {
    for (const ip of [undefined, "", "localhost", "203.0.113", "2001:db8::g", 42, { ip: "1.2.3.4" }]) {
      expect(shownAddress(ip, false), String(ip)).toBeNull();
      expect(shownAddress(ip, true), String(ip)).toBeNull();
    }
  });

  it("SE-1: a User-Agent loses its control and format characters and is cut to 256 code points", () => {
    expect(shownUserAgent("Mozilla/5.0 (X11)")).toBe("Mozilla/5.0 (X11)");
    expect(shownUserAgent("a\u0000b\u001bc\u007fd\u200be\u202ef\u2066g")).toBe("abcdefg");
    expect(shownUserAgent("  padded  ")).toBe("padded");
    expect(shownUserAgent("x".repeat(300))).toBe("x".repeat(userAgentLength));
    expect(shownUserAgent("😀".repeat(300))).toBe("😀".repeat(userAgentLength));
    for (const nothing of [undefined, "", "   ", "\u0000\u0001", 7]) expect(shownUserAgent(nothing)).toBeNull();
  });

  it("sessions.keepFullAddress is false by default, and must be a boolean", () => {
    expect(resolveSessionConfig(undefined)).toEqual({ keepFullAddress: false, maxPerUser: null });
    expect(resolveSessionConfig({})).toEqual({ keepFullAddress: false, maxPerUser: null });
    expect(resolveSessionConfig({ keepFullAddress: true })).toEqual({ keepFullAddress: true, maxPerUser: null });
    expect(() => resolveSessionConfig({ keepFullAddress: "yes" as never })).toThrow(
      'Portcullis configuration: sessions.keepFullAddress must be true or false; got "yes"',
    );
    for (const bad of [null, true, "whole", []]) {
      expect(() => resolveSessionConfig(bad as never)).toThrow(/^Portcullis configuration: sessions must be an object/);
    }
  });
});
