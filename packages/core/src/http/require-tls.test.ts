import { describe, expect, it } from "vitest";
import { createAuth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { audience, encryptionKey, issuer, makeAuth, signingSecret } from "../flows/fixtures.test-support.js";
import { memoryStorage } from "../storage/memory.js";
import { isTlsRequest, requireTls } from "./require-tls.js";
import type { HttpRequest } from "./types.js";

type Connection = Pick<HttpRequest, "header" | "peerAddress" | "secure">;

function connection(peerAddress: string | undefined, secure: boolean, headers: Record<string, string> = {}): Connection {
  return { peerAddress, secure, header: (name) => headers[name] };
}

const direct = makeAuth().auth;
const behindProxy = makeAuth({ http: { trustedProxies: ["10.0.0.0/8", "127.0.0.1"] } }).auth;

function refusalOf(auth: typeof direct, request: Connection): AuthError | undefined {
  try {
    requireTls(auth, request);
    return undefined;
  } catch (error) {
    if (error instanceof AuthError) return error;
    throw error;
  }
}

describe("isTlsRequest", () => {
  it("HTTP-7: without a trusted proxy the connection decides and X-Forwarded-Proto is ignored", () => {
    expect(isTlsRequest(direct, connection("192.0.2.1", true))).toBe(true);
    expect(isTlsRequest(direct, connection("192.0.2.1", false))).toBe(false);
    expect(isTlsRequest(direct, connection("192.0.2.1", false, { "x-forwarded-proto": "https" }))).toBe(false);
    expect(isTlsRequest(direct, connection("192.0.2.1", true, { "x-forwarded-proto": "http" }))).toBe(true);
    expect(isTlsRequest(direct, connection(undefined, false, { "x-forwarded-proto": "https" }))).toBe(false);
  });

  it("HTTP-7: a peer that is not one of the trusted proxies has its X-Forwarded-Proto ignored", () => {
    expect(isTlsRequest(behindProxy, connection("192.0.2.1", false, { "x-forwarded-proto": "https" }))).toBe(false);
    expect(isTlsRequest(behindProxy, connection("11.0.0.1", true, { "x-forwarded-proto": "http" }))).toBe(true);
  });

  it("HTTP-7: from a trusted proxy, X-Forwarded-Proto decides when present: TLS only if every value is https", () => {
    const fromProxy = (proto: string, secure = false) =>
      isTlsRequest(behindProxy, connection("10.0.0.1", secure, { "x-forwarded-proto": proto }));
    for (const proto of ["https", "HTTPS", " https ", "https,https", "https, HTTPS"]) expect(fromProxy(proto), proto).toBe(true);
    for (const proto of ["http", "https, http", "http, https", "", " ", "https,", ",https", "wss", "https;x", "httpss"]) {
      expect(fromProxy(proto), proto).toBe(false);
      expect(fromProxy(proto, true), `${proto} over TLS`).toBe(false);
    }
    expect(isTlsRequest(behindProxy, connection("::ffff:10.0.0.1", false, { "x-forwarded-proto": "https" }))).toBe(true);
  });

  it("HTTP-7: from a trusted proxy without X-Forwarded-Proto, the connection to the proxy decides", () => {
    expect(isTlsRequest(behindProxy, connection("10.0.0.1", true))).toBe(true);
    expect(isTlsRequest(behindProxy, connection("10.0.0.1", false))).toBe(false);
  });
});

describe("requireTls", () => {
  it("HTTP-7: a client whose resolved address is loopback is exempt", () => {
    for (const peer of ["127.0.0.1", "127.8.9.10", "127.255.255.255", "::1", "::ffff:127.0.0.1", "[::1]"]) {
      expect(refusalOf(direct, connection(peer, false)), peer).toBeUndefined();
    }
    // An untrusted loopback peer's X-Forwarded-For is ignored: the client is the loopback peer.
    expect(refusalOf(behindProxy, connection("127.0.0.2", false, { "x-forwarded-for": "203.0.113.9" }))).toBeUndefined();
    // A trusted loopback proxy forwarding nothing: the client is the proxy itself.
    expect(refusalOf(behindProxy, connection("127.0.0.1", false))).toBeUndefined();
  });

  it("HTTP-7: plain HTTP from a non-loopback, unknown or forwarded client is 40300", () => {
    for (const peer of [
      "192.0.2.2",
      "10.0.0.1",
      "126.255.255.255",
      "128.0.0.1",
      "::ffff:192.0.2.2",
      "2001:db8::1",
      "::",
      "0.0.0.0",
    ]) {
      expect(refusalOf(direct, connection(peer, false))?.code, peer).toBe(40300);
    }
    expect(refusalOf(direct, connection(undefined, false))?.code).toBe(40300);
    expect(refusalOf(direct, connection("", false))?.code).toBe(40300);
    expect(refusalOf(direct, connection("localhost", false))?.code).toBe(40300);
    const forwarded = { "x-forwarded-for": "203.0.113.9" };
    expect(refusalOf(behindProxy, connection("127.0.0.1", false, forwarded))?.code).toBe(40300);
    expect(
      refusalOf(behindProxy, connection("127.0.0.1", false, { ...forwarded, "x-forwarded-proto": "https" })),
    ).toBeUndefined();
    expect(
      refusalOf(behindProxy, connection("127.0.0.1", false, { ...forwarded, "x-forwarded-proto": "https, http" }))?.code,
    ).toBe(40300);
    expect(refusalOf(direct, connection("192.0.2.2", true))).toBeUndefined();
  });

  it("HTTP-7: the refusal says how to declare a TLS-terminating proxy and echoes nothing the client sent", () => {
    const refusal = refusalOf(
      behindProxy,
      connection("10.0.0.1", false, { "x-forwarded-proto": "<script>gopher", "x-forwarded-for": "198.51.100.66" }),
    );
    expect(refusal?.message).toBe(
      "TLS is required. If a proxy terminates TLS in front of this service, list its address in http.trustedProxies so that its X-Forwarded-Proto is believed.",
    );
    expect(refusal?.message).not.toMatch(/script|gopher|198\.51|10\.0\.0\.1/);
  });

  it("HTTP-7: http.unsafeAllowPlainHttp lets plain HTTP through; it defaults to false and must be a boolean", () => {
    const unsafe = makeAuth({ http: { unsafeAllowPlainHttp: true } }).auth;
    expect(refusalOf(unsafe, connection("192.0.2.2", false))).toBeUndefined();
    expect(refusalOf(unsafe, connection(undefined, false))).toBeUndefined();
    expect(direct.config.unsafeAllowPlainHttp).toBe(false);
    for (const value of ["true", "false", 1, 0]) {
      const build = () =>
        createAuth({
          storage: memoryStorage(),
          issuer,
          audience,
          secrets: { signing: signingSecret, encryption: encryptionKey },
          http: { unsafeAllowPlainHttp: value as unknown as boolean },
        });
      expect(build, String(value)).toThrow(/^Portcullis configuration: http\.unsafeAllowPlainHttp must be true or false/);
    }
  });
});
