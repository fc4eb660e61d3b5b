// RL-3 unit tests of http/client-address.ts. They live here, beside the throttle that buckets
// addresses, because packages/core/src/http/** belongs to the HTTP tests.
import { describe, expect, it } from "vitest";
import { addressBucket, createProxyTrust, isLoopbackAddress, resolveClientAddress } from "../http/client-address.js";

const none = createProxyTrust([]);
const proxies = createProxyTrust(["10.0.0.0/8", "192.0.2.10", "2001:db8:ffff::/48"]);

describe("client address", () => {
  it("RL-3: without trusted proxies X-Forwarded-For is ignored", () => {
    expect(resolveClientAddress("203.0.113.9", "1.2.3.4", none)).toBe("203.0.113.9");
    expect(resolveClientAddress("10.0.0.1", "1.2.3.4", none)).toBe("10.0.0.1");
    expect(resolveClientAddress("203.0.113.9", undefined, none)).toBe("203.0.113.9");
    expect(resolveClientAddress(undefined, "1.2.3.4", none)).toBeUndefined();
  });

  it("RL-3: a peer that is not a trusted proxy is the client, whatever it forwards", () => {
    expect(resolveClientAddress("203.0.113.9", "1.2.3.4", proxies)).toBe("203.0.113.9");
    expect(resolveClientAddress("192.0.2.11", "1.2.3.4", proxies)).toBe("192.0.2.11");
  });

  it("RL-3: behind a trusted proxy, the forwarded address is the client", () => {
    expect(resolveClientAddress("10.1.2.3", "198.51.100.7", proxies)).toBe("198.51.100.7");
    expect(resolveClientAddress("192.0.2.10", " 198.51.100.7 ", proxies)).toBe("198.51.100.7");
    expect(resolveClientAddress("10.1.2.3", "", proxies)).toBe("10.1.2.3");
    expect(resolveClientAddress("10.1.2.3", undefined, proxies)).toBe("10.1.2.3");
  });

  it("RL-3: X-Forwarded-For is read right to left, skipping trusted hops; a spoofed left part is ignored", () => {
    expect(resolveClientAddress("10.0.0.2", "6.6.6.6, 198.51.100.7, 10.0.0.5", proxies)).toBe("198.51.100.7");
    expect(resolveClientAddress("10.0.0.2", "6.6.6.6,198.51.100.7,192.0.2.10,10.9.9.9", proxies)).toBe("198.51.100.7");
    expect(resolveClientAddress("10.0.0.2", "10.0.0.9, 10.0.0.5", proxies)).toBe("10.0.0.9");
  });

  it("RL-3: a hop that is not an address ends the walk at the last trusted hop", () => {
    expect(resolveClientAddress("10.0.0.2", "198.51.100.7, unknown, 10.0.0.5", proxies)).toBe("10.0.0.5");
    expect(resolveClientAddress("10.0.0.2", "_hidden", proxies)).toBe("10.0.0.2");
    for (const hop of ["[2001:db8::1", "2001:db8::1]", "::ffff:198.51.100.7:5", "198.51.100.7%eth0", "::1%"]) {
      expect(resolveClientAddress("10.0.0.2", `203.0.113.9, ${hop}, 10.0.0.5`, proxies), hop).toBe("10.0.0.5");
    }
  });

  it("RL-3: IPv4-mapped IPv6 and bracketed addresses are normalised", () => {
    expect(resolveClientAddress("::ffff:203.0.113.9", undefined, none)).toBe("203.0.113.9");
    expect(resolveClientAddress("::FFFF:10.0.0.2", "::ffff:198.51.100.7", proxies)).toBe("198.51.100.7");
    expect(resolveClientAddress("[2001:db8:ffff::1]", "[2001:db8:1::5]", proxies)).toBe("2001:db8:1::5");
    expect(proxies("::ffff:10.0.0.2")).toBe(true);
    expect(proxies("[2001:db8:ffff:1::1]")).toBe(true);
  });

  it("RL-3: an address that ends in ffff:a.b.c.d without being in ::ffff:0:0/96 stays IPv6, bucketed by its /64", () => {
    const address = "2001:db8:1:2::ffff:198.51.100.7";
    expect(resolveClientAddress(address, undefined, none)).toBe(address);
    expect(addressBucket(address)).toBe("2001:db8:1:2::/64");
  });

  it("RL-3: a zone id is no part of the address: ranges and loopback match it, the /64 bucket leaves it out", () => {
    expect(createProxyTrust(["fe80::/10"])("fe80::1%eth0")).toBe(true);
    expect(isLoopbackAddress("::1%lo")).toBe(true);
    expect(addressBucket("fe80::1:2:3:4%eth0.100")).toBe("fe80:0:0:0::/64");
    expect(addressBucket("1:2::3:4:5:198.51.100.27%eth0")).toBe("1:2:0:3::/64");
  });

  it("RL-3: text that is not an address is neither a trusted proxy nor loopback, even when Node's native parser reads a prefix of it", () => {
    const trust = createProxyTrust(["::1", "10.0.0.0/8"]);
    for (const text of ["::1%", "10.0.0.1\u0000", "127.0.0.1\u0000x"]) {
      expect(trust(text), JSON.stringify(text)).toBe(false);
      expect(resolveClientAddress(text, "198.51.100.7", trust), JSON.stringify(text)).toBe(text);
      expect(isLoopbackAddress(text), JSON.stringify(text)).toBe(false);
    }
  });

  it("RL-3: an entry without a prefix length trusts that address alone; a range covers up to /32 (IPv4) or /128 (IPv6)", () => {
    const trust = createProxyTrust([
      "192.0.2.10",
      "198.51.100.7/32",
      "10.0.0.0/8",
      "2001:db8:ffff::/48",
      "2001:db8::5/128",
      "fe80::1",
    ]);
    for (const address of ["192.0.2.10", "198.51.100.7", "10.255.255.255", "2001:db8:ffff:abcd::9", "2001:db8::5", "fe80::1"]) {
      expect(trust(address), address).toBe(true);
    }
    for (const address of ["192.0.2.11", "198.51.100.8", "11.0.0.0", "2001:db8:fffe::1", "2001:db8::6", "fe80::2"]) {
      expect(trust(address), address).toBe(false);
    }
  });

  it("RL-3: the trust check matches configured addresses and ranges only", () => {
    expect(proxies("10.255.255.255")).toBe(true);
    expect(proxies("11.0.0.0")).toBe(false);
    expect(proxies("192.0.2.10")).toBe(true);
    expect(proxies("192.0.2.9")).toBe(false);
    expect(proxies("2001:db8:ffff:abcd::9")).toBe(true);
    expect(proxies("2001:db8:fffe::1")).toBe(false);
    expect(proxies("not an address")).toBe(false);
    expect(proxies("")).toBe(false);
    expect(none("127.0.0.1")).toBe(false);
  });

  it("RL-3: createProxyTrust refuses entries that are not an address or CIDR range", () => {
    for (const entry of [
      "localhost",
      "10.0.0.0/33",
      "2001:db8::/129",
      "10.0.0.0/8.5",
      "10.0.0.0/abc",
      "1.2.3",
      "10.0.0.0/-8",
      "",
      "10.0.0.1/",
      "10.0.0.0/8/9",
      "/0x8",
      "/8",
      "/10.0.0.1",
      "proxy/10.0.0.1",
      "10.0.0.0/8/10.0.0.1",
    ]) {
      expect(() => createProxyTrust([entry]), entry).toThrow(/http\.trustedProxies entry/);
    }
  });

  it("RL-3: createProxyTrust refuses an entry that is not a string, even one that would read as an address", () => {
    for (const entry of [["10.0.0.1"], { toString: () => "10.0.0.1" }, 10, null]) {
      expect(() => createProxyTrust([entry as unknown as string]), String(entry)).toThrow(/http\.trustedProxies entry/);
    }
  });

  it("RL-3: IPv6 addresses are bucketed by /64, whatever their written form", () => {
    const bucket = "2001:db8:1:2::/64";
    expect(addressBucket("2001:db8:1:2:3:4:5:6")).toBe(bucket);
    expect(addressBucket("2001:db8:1:2:ffff:ffff:ffff:ffff")).toBe(bucket);
    expect(addressBucket("2001:db8:1:2::")).toBe(bucket);
    expect(addressBucket("2001:db8:1:2::9")).toBe(bucket);
    expect(addressBucket("2001:0DB8:0001:0002:0000:0000:0000:0001")).toBe(bucket);
    expect(addressBucket("[2001:db8:1:2::1]")).toBe(bucket);
    expect(addressBucket("2001:db8:1:3::1")).not.toBe(bucket);
  });

  it("RL-3: '::' compression is expanded before the /64 is taken", () => {
    expect(addressBucket("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(addressBucket("2001:db8:0:0:1::")).toBe("2001:db8:0:0::/64");
    expect(addressBucket("::1")).toBe("0:0:0:0::/64");
    expect(addressBucket("::")).toBe("0:0:0:0::/64");
    expect(addressBucket("::2:0:0:0:1")).toBe("0:0:0:2::/64");
    expect(addressBucket("1::")).toBe("1:0:0:0::/64");
    expect(addressBucket("1:2:3::4:5")).toBe("1:2:3:0::/64");
    expect(addressBucket("fe80::1:2:3:4")).toBe("fe80:0:0:0::/64");
  });

  it("RL-3: an IPv6 address written with a dotted IPv4 tail is bucketed by its real /64", () => {
    expect(addressBucket("1:2::3:4:5:1.2.3.4")).toBe("1:2:0:3::/64");
    expect(addressBucket("1:2:0:3:4:5:102:304")).toBe("1:2:0:3::/64");
    expect(addressBucket("64:ff9b::203.0.113.9")).toBe("64:ff9b:0:0::/64");
    expect(addressBucket("1:2::3:4:5:198.51.100.27")).toBe("1:2:0:3::/64");
  });

  it("RL-3: IPv4 addresses are their own bucket, IPv4-mapped ones too", () => {
    expect(addressBucket("203.0.113.9")).toBe("203.0.113.9");
    expect(addressBucket("::ffff:203.0.113.9")).toBe("203.0.113.9");
    expect(addressBucket("203.0.113.10")).not.toBe(addressBucket("203.0.113.9"));
  });
});
