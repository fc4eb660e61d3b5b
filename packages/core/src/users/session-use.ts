import { isIP } from "node:net";
import type { Auth } from "../auth.js";
import { ipv6Groups, plainAddress } from "../http/client-address.js";
import type { SessionUse } from "../storage/types.js";

/** Where a request that starts or refreshes a session comes from, as the routes know it. */
export interface SessionClient {
  /** The client address, resolved through the trusted proxies (RL-3). */
  ip?: string | undefined;
  /** The request's `User-Agent`. */
  userAgent?: string | undefined;
}

/** How much of a `User-Agent` a session keeps, in code points. */
export const userAgentLength = 256;

const unprintable = /[\p{Cc}\p{Cf}]/gu;

/** A `User-Agent` as a session shows it: control and format characters dropped, cut to 256 code points; null when nothing is left. */
export function shownUserAgent(userAgent: unknown): string | null {
  if (typeof userAgent !== "string") return null;
  const shown = [...userAgent.replace(unprintable, "").trim()].slice(0, userAgentLength).join("");
  return shown === "" ? null : shown;
}

/**
 * A client address as a session shows it: its network, an IPv4 address as its /24
 * (`203.0.113.0/24`), an IPv6 address as its /48 (`2001:db8:1::/48`), or the whole address with
 * `keepFullAddress`; null when it is no IP address.
 */
export function shownAddress(ip: unknown, keepFullAddress: boolean): string | null {
  if (typeof ip !== "string") return null;
  const plain = plainAddress(ip).replace(/%.*/, "");
  const family = isIP(plain);
  if (family === 0) return null;
  if (keepFullAddress) return plain.toLowerCase();
  if (family === 4) return `${plain.split(".").slice(0, 3).join(".")}.0/24`;
  return `${ipv6Groups(plain).slice(0, 3).join(":")}::/48`;
}

/**
 * What a session records of the request that starts or refreshes it (`sessions.keepFullAddress`
 * decides the address): shown to its user in the sessions list, never used for a decision.
 */
export function sessionUseOf(auth: Auth, client: SessionClient): SessionUse {
  return {
    userAgent: shownUserAgent(client.userAgent),
    address: shownAddress(client.ip, auth.config.sessions.keepFullAddress),
  };
}
