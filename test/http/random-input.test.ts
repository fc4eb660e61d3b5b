import { type HttpResponse, handleRequest, login, routes } from "@portcullis/core";
import { beforeAll, describe, expect, it } from "vitest";
import { createTestUser, createTotpUser, generousThrottle, makeTestAuth, testPassword } from "../fixtures/auth.js";

/** A small seeded generator (mulberry32), so that a failing input can be replayed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const awkwardStrings = [
  "",
  " ",
  "\u0000",
  "a".repeat(2048),
  "\u{1F600}".repeat(300),
  "\uD800",
  "ﬁ",
  "<script>",
  "' OR 1=1 --",
  "*)(uid=*))(|(uid=*",
  "Bearer x",
  "123456",
  "0000-0000-0000-0000",
  "constructor",
  "toString",
];

function randomValue(next: () => number, depth = 0): unknown {
  const pick = Math.floor(next() * (depth > 2 ? 6 : 8));
  switch (pick) {
    case 0:
      return null;
    case 1:
      return next() < 0.5;
    case 2:
      return [0, -1, 1e308, Number.MAX_SAFE_INTEGER + 2, 123456, 0.5][Math.floor(next() * 6)];
    case 3:
    case 4:
      return awkwardStrings[Math.floor(next() * awkwardStrings.length)];
    case 5:
      return next()
        .toString(36)
        .repeat(Math.floor(next() * 4));
    case 6:
      return Array.from({ length: Math.floor(next() * 4) }, () => randomValue(next, depth + 1));
    default:
      return Object.fromEntries(
        Array.from({ length: Math.floor(next() * 4) }, (_, index) => [`k${index}`, randomValue(next, depth + 1)]),
      );
  }
}

const fieldsByPath: Record<string, string[]> = {
  "/auth/login": ["username", "password", "provider"],
  "/auth/2fa/verify": ["tempToken", "code"],
  "/auth/2fa/recovery": ["tempToken", "recoveryCode"],
  "/auth/refresh": ["refreshToken"],
  "/auth/logout": ["refreshToken"],
  "/auth/2fa/setup": [],
  "/auth/2fa/enable": ["code"],
  "/auth/2fa/disable": ["code", "password"],
  "/auth/2fa/recovery-codes": ["code"],
};

const documentedCodes = new Set([0, 40001, 40002, 40100, 40101, 40102, 40103, 40300, 40400, 40900, 42200, 42900]);

function request(path: string, body: string, token?: string) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  return {
    method: "POST",
    url: `/api/v1${path}`,
    header: (name: string) => headers[name],
    body: (async function* () {
      yield new TextEncoder().encode(body);
    })(),
    peerAddress: "192.0.2.1",
    secure: true,
  };
}

describe("random input on every POST route", () => {
  const { auth } = makeTestAuth({ throttle: { ...generousThrottle, ip: [{ limit: 100_000, window: "15m" }] } });
  let accessToken = "";

  beforeAll(async () => {
    await createTestUser(auth, "fuzz");
    await createTotpUser(auth, "fuzz-totp");
    const result = await login(auth, { username: "fuzz", password: testPassword });
    if (result.status !== "authenticated") throw new Error("expected a session");
    accessToken = result.tokens.accessToken;
  });

  const postRoutes = routes.filter((route) => route.method === "POST");

  it("covers every POST route of the table", () => {
    expect(postRoutes.map((route) => route.path).sort()).toEqual(Object.keys(fieldsByPath).sort());
  });

  for (const route of postRoutes) {
    it(`HTTP-5: ${route.path} answers 300 random bodies with documented codes, never 500`, async () => {
      const next = seeded(route.path.length * 7919);
      const fields = fieldsByPath[route.path] ?? [];
      const seen = new Set<number>();
      for (let index = 0; index < 300; index += 1) {
        const body: Record<string, unknown> = {};
        for (const field of fields) if (next() < 0.85) body[field] = randomValue(next);
        if (next() < 0.2) body[`extra${index}`] = randomValue(next);
        // Only proper strings reach argon2; keep the hashing count, and so the run time, small.
        if (route.path === "/auth/login" && typeof body.password === "string" && next() < 0.9) body.password = 42;
        const text = JSON.stringify(body);
        const response = (await handleRequest(auth, request(route.path, text, accessToken))) as HttpResponse;
        const envelope = JSON.parse(response.body) as { code: number; message: string };
        expect(documentedCodes.has(envelope.code), `${route.path} ${text} → ${response.body}`).toBe(true);
        expect(response.status).toBeLessThan(500);
        expect(response.body).not.toMatch(/stack|Error:|\.ts:\d/);
        seen.add(envelope.code);
      }
      // Routes that read fields must have refused some of the inputs; setup reads none.
      if (fields.length > 0) expect([...seen].some((code) => code !== 0)).toBe(true);
    });
  }
});
