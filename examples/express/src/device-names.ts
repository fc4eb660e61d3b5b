// How the demo's session list names a session's device and place, in the words people use:
// "Chrome on Linux", "Safari on iPhone", "on this computer". The User-Agent is read by Bowser, a
// maintained parser (its tables follow new browsers and systems; a hand-made one would not). It
// runs in the page, bundled with the client (page-client.ts); the server sends the User-Agent and
// the address as it keeps them.
import Bowser from "bowser";

/** What kind of device a session was used from: the session list draws a mark for each. */
export type DeviceKind = "computer" | "phone" | "tablet" | "unknown";

/** What the parser makes of a User-Agent; null for none. */
function parsed(userAgent: string | null): Bowser.Parser.ParsedResult | null {
  return userAgent ? Bowser.parse(userAgent) : null;
}

/**
 * The device of a session as people name it: the browser, and the phone or tablet model (iPhone,
 * iPad) or else the operating system. "Chrome on Linux", "Safari on iPhone", "Firefox on Windows",
 * "Chrome on Android"; "Chrome" when the system is not said; "An unknown device" for a User-Agent
 * that names no known browser (a script, an app) or none at all.
 *
 * @example
 * ```ts
 * deviceName("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36");
 * // "Chrome on Linux"
 * ```
 */
export function deviceName(userAgent: string | null): string {
  const result = parsed(userAgent);
  const browser = result?.browser.name;
  if (!result || !browser) return "An unknown device";
  const system = result.platform.model ?? result.os.name;
  return system ? `${browser} on ${system}` : browser;
}

/**
 * The kind of device of a session, from the parser's platform type: a desktop or laptop is a
 * "computer"; a User-Agent it cannot place is "unknown".
 *
 * @example
 * ```ts
 * deviceKind("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) …"); // "phone"
 * ```
 */
export function deviceKind(userAgent: string | null): DeviceKind {
  const type = parsed(userAgent)?.platform.type;
  if (type === "desktop") return "computer";
  if (type === "mobile") return "phone";
  if (type === "tablet") return "tablet";
  return "unknown";
}

/** The first two parts of an IPv4 address, or null when `address` is not one. */
function ipv4Prefix(address: string): [number, number] | null {
  const parts = /^(\d{1,3})\.(\d{1,3})\.\d{1,3}\.\d{1,3}$/.exec(address);
  return parts ? [Number(parts[1]), Number(parts[2])] : null;
}

/**
 * Where a session was used from, as near as its network address tells without a location
 * database: "on this computer" for loopback, "on a local network" for a private or link-local
 * range, else "from <address>" (the server keeps IPv4 to /24 and IPv6 to /48 unless told to keep
 * it whole, as `203.0.113.0/24`: a network, not a person). A service that wants a city here looks the address up in a
 * GeoIP database of its own; the demo ships none (examples/express/README.md).
 *
 * @example
 * ```ts
 * placeName("127.0.0.0/24"); // "on this computer"
 * placeName("192.168.1.0/24"); // "on a local network"
 * placeName("203.0.113.0/24"); // "from 203.0.113.0/24"
 * ```
 */
export function placeName(address: string | null): string {
  if (!address) return "from an unknown place";
  const lower = address.toLowerCase().replace(/\/\d+$/, "");
  const v4 = ipv4Prefix(lower.startsWith("::ffff:") ? lower.slice("::ffff:".length) : lower);
  if (v4) {
    const [first, second] = v4;
    if (first === 127) return "on this computer";
    const local =
      first === 10 ||
      (first === 172 && second >= 16 && second <= 31) ||
      (first === 192 && second === 168) ||
      (first === 169 && second === 254) ||
      (first === 100 && second >= 64 && second <= 127);
    return local ? "on a local network" : `from ${address}`;
  }
  if (lower === "::1" || lower === "::") return "on this computer";
  if (/^f[cd][0-9a-f]{2}:/.test(lower) || /^fe[89ab][0-9a-f]:/.test(lower)) return "on a local network";
  return `from ${address}`;
}
