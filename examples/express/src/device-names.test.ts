import { describe, expect, it } from "vitest";
import { deviceKind, deviceName, placeName } from "./device-names.js";

const userAgents = {
  chromeLinux: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36",
  headlessChrome: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/142.0.0.0 Safari/537.36",
  safariIphone:
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
  safariIpad:
    "Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
  firefoxWindows: "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
  chromeAndroid:
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Mobile Safari/537.36",
  safariMac:
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
};

describe("the demo's device names (Bowser)", () => {
  it("names a browser and the system or the model it runs on, as people say it", () => {
    expect(deviceName(userAgents.chromeLinux)).toBe("Chrome on Linux");
    expect(deviceName(userAgents.headlessChrome)).toBe("Chrome on Linux");
    expect(deviceName(userAgents.safariIphone)).toBe("Safari on iPhone");
    expect(deviceName(userAgents.safariIpad)).toBe("Safari on iPad");
    expect(deviceName(userAgents.firefoxWindows)).toBe("Firefox on Windows");
    expect(deviceName(userAgents.chromeAndroid)).toBe("Chrome on Android");
    expect(deviceName(userAgents.safariMac)).toBe("Safari on macOS");
  });

  it("says the device is unknown for no User-Agent, a script's, or one that names no browser", () => {
    expect(deviceName(null)).toBe("An unknown device");
    expect(deviceName("")).toBe("An unknown device");
    expect(deviceName("curl/8.5.0")).toBe("An unknown device");
    expect(deviceName("first browser")).toBe("An unknown device");
  });

  it("tells computers, phones and tablets apart", () => {
    expect(deviceKind(userAgents.chromeLinux)).toBe("computer");
    expect(deviceKind(userAgents.safariMac)).toBe("computer");
    expect(deviceKind(userAgents.safariIphone)).toBe("phone");
    expect(deviceKind(userAgents.chromeAndroid)).toBe("phone");
    expect(deviceKind(userAgents.safariIpad)).toBe("tablet");
    expect(deviceKind(null)).toBe("unknown");
    expect(deviceKind("curl/8.5.0")).toBe("unknown");
  });
});

describe("the demo's place names", () => {
  it("places loopback on this computer, private and link-local ranges on a local network, as the server keeps them", () => {
    for (const address of ["127.0.0.0/24", "127.0.0.1", "::1", "::ffff:127.0.0.1"]) {
      expect(placeName(address), address).toBe("on this computer");
    }
    for (const address of [
      "10.1.2.0/24",
      "172.16.0.0/24",
      "172.31.255.0/24",
      "192.168.1.0/24",
      "169.254.3.0/24",
      "100.64.0.0/24",
      "fd12:3456:789a::/48",
      "fe80::1",
    ]) {
      expect(placeName(address), address).toBe("on a local network");
    }
  });

  it("names any other network by its address, and says when there is none", () => {
    expect(placeName("203.0.113.0/24")).toBe("from 203.0.113.0/24");
    expect(placeName("172.32.0.0/24")).toBe("from 172.32.0.0/24");
    expect(placeName("2001:db8:1::/48")).toBe("from 2001:db8:1::/48");
    expect(placeName(null)).toBe("from an unknown place");
  });
});
