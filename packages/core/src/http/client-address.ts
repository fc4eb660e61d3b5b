import { BlockList, isIP } from "node:net";
import { rememberAnswers } from "../bounded-cache.js";
import type { HttpRequest } from "./types.js";

/** Decides which peer addresses are trusted proxies. */
export type ProxyTrust = (address: string) => boolean;

/** An address without brackets, an IPv4 address mapped into IPv6 (`::ffff:192.0.2.1`) as the IPv4 one. */
export function plainAddress(address: string): string {
  const unbracketed = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(unbracketed);
  return mapped ? (mapped[1] as string) : unbracketed;
}

/**
 * Builds the trust check from `http.trustedProxies`: addresses or CIDR ranges, IPv4 or
 * IPv6. Throws a `TypeError` naming any entry it cannot read.
 */
export function createProxyTrust(entries: string[]): ProxyTrust {
  const list = new BlockList();
  for (const entry of entries) {
    const unreadable = () =>
      new TypeError(
        `Portcullis configuration: http.trustedProxies entry ${JSON.stringify(entry)} is not an address or CIDR range`,
      );
    const match = typeof entry === "string" ? /^([^/]+)(?:\/([0-9]{1,3}))?$/.exec(entry) : null;
    if (!match) throw unreadable();
    const address = match[1] as string;
    const family = isIP(address);
    const fullLength = family === 6 ? 128 : 32;
    const bits = match[2] === undefined ? fullLength : Number(match[2]);
    if (family === 0 || bits > fullLength) throw unreadable();
    list.addSubnet(address, bits, family === 6 ? "ipv6" : "ipv4");
  }
  return rememberAnswers((address) => {
    const plain = plainAddress(address);
    const family = isIP(plain);
    return family !== 0 && list.check(plain, family === 6 ? "ipv6" : "ipv4");
  });
}

/**
 * The client address of a request (RL-3): the socket's peer, unless that peer is a trusted
 * proxy, in which case `X-Forwarded-For` is read from the right, skipping trusted proxies, and
 * the first untrusted address wins. Without trusted proxies the header is ignored, so a
 * client cannot spoof it.
 */
export function resolveClientAddress(
  peer: string | undefined,
  forwardedFor: string | undefined,
  trusted: ProxyTrust,
): string | undefined {
  if (peer === undefined) return undefined;
  let client = plainAddress(peer);
  if (!trusted(client) || !forwardedFor) return client;
  const hops = forwardedFor.split(",").map((hop) => plainAddress(hop.trim()));
  for (let index = hops.length - 1; index >= 0; index -= 1) {
    const hop = hops[index] as string;
    if (isIP(hop) === 0) break;
    client = hop;
    if (!trusted(hop)) break;
  }
  return client;
}

/** The client address of a request, resolved through the trusted-proxy setting of `auth` (RL-3). */
export function clientAddressOf(
  auth: { readonly proxyTrust: ProxyTrust },
  request: Pick<HttpRequest, "header" | "peerAddress">,
): string | undefined {
  return resolveClientAddress(request.peerAddress, request.header("x-forwarded-for"), auth.proxyTrust);
}

const loopback = new BlockList();
loopback.addSubnet("127.0.0.0", 8, "ipv4");
loopback.addAddress("::1", "ipv6");

/** True for a loopback address: 127.0.0.0/8, `::1`, or 127.0.0.0/8 mapped into IPv6 (HTTP-7). */
export const isLoopbackAddress: (address: string) => boolean = rememberAnswers((address) => {
  const plain = plainAddress(address);
  const family = isIP(plain);
  return family !== 0 && loopback.check(plain, family === 6 ? "ipv6" : "ipv4");
});

/** Rewrites a trailing dotted IPv4 part of an IPv6 address (`::1.2.3.4`) as two hex groups. */
function withoutEmbeddedIpv4(address: string): string {
  const match = /^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address);
  if (!match) return address;
  const [a, b, c, d] = match.slice(2).map(Number) as [number, number, number, number];
  return `${match[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/**
 * The eight 16-bit groups of an IPv6 address, in lower-case hex without leading zeros (`::`
 * expanded, a dotted IPv4 tail rewritten). A zone id (`fe80::1%eth0`) names an interface of this
 * host, not part of the client's address, and is left out.
 */
export function ipv6Groups(address: string): string[] {
  const [head, tail] = withoutEmbeddedIpv4(address.toLowerCase().replace(/%.*/, "")).split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  return groups.map((group) => group.replace(/^0+(?=.)/, ""));
}

/**
 * The throttling bucket of an address (RL-3): an IPv4 address as it is, an IPv6 address by
 * its /64 network, since one host is handed a whole /64.
 */
export function addressBucket(address: string): string {
  const plain = plainAddress(address);
  if (isIP(plain) !== 6) return plain;
  return `${ipv6Groups(plain).slice(0, 4).join(":")}::/64`;
}
