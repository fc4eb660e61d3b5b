import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sha256 } from "../crypto/random.js";
import { makeAuth, signingSecret } from "../flows/fixtures.test-support.js";
import { memoryStorage } from "../storage/memory.js";
import type { LegacyRefreshToken, Storage } from "../storage/types.js";
import {
  type IssuedRefreshToken,
  firstRefreshToken,
  maxGenerationsBack,
  nextRefreshToken,
  readRefreshToken,
  relationToCurrent,
} from "./refresh-token.js";

const sessionId = "c2Vzc2lvbi1pZC0xMjM0NTY";

/** The token `steps` rotations after `token`, each replacement made from the one before under the instance's current key. */
function after(auth: ReturnType<typeof makeAuth>["auth"], token: IssuedRefreshToken, steps: number): IssuedRefreshToken {
  let next = token;
  for (let step = 0; step < steps; step += 1) next = nextRefreshToken(auth, { ...next, sessionId });
  return next;
}

async function presented(auth: ReturnType<typeof makeAuth>["auth"], value: string) {
  const token = await readRefreshToken(auth, value);
  if (token === null) throw new Error("not read");
  return token;
}

describe("refresh tokens (RT-1, RT-2)", () => {
  const { auth } = makeAuth();

  it("RT-1: a session's first token names it, generation 0, with 256 random bits; storage is given only its SHA-256", () => {
    const first = firstRefreshToken(auth, sessionId);
    expect(first.value).toMatch(new RegExp(`^${sessionId}\\.0\\.[A-Za-z0-9_-]{43}$`));
    expect(Buffer.from(first.value.split(".")[2] as string, "base64url")).toHaveLength(32);
    expect(first.hash).toBe(sha256(first.value));
    expect(first.generation).toBe(0);
    expect(firstRefreshToken(auth, sessionId).value).not.toBe(first.value);
  });

  it("RT-2: a replacement is the next generation, made from the whole replaced token under a key of the instance's own", async () => {
    const first = firstRefreshToken(auth, sessionId);
    const next = nextRefreshToken(auth, await presented(auth, first.value));
    expect(next.value).toMatch(new RegExp(`^${sessionId}\\.1\\.[A-Za-z0-9_-]{43}$`));
    expect(nextRefreshToken(auth, await presented(auth, first.value))).toEqual(next);
    // Another instance (another encryption key) makes another replacement: the chain is not computable without the key.
    const otherKey = { signing: signingSecret, encryption: randomBytes(32).toString("base64url") };
    expect(nextRefreshToken(makeAuth({ secrets: otherKey }).auth, await presented(auth, first.value)).value).not.toBe(next.value);
    // Another session or generation named in the token makes another replacement too.
    const [, , secret] = first.value.split(".");
    expect(nextRefreshToken(auth, await presented(auth, `${sessionId}x.0.${secret}`)).value.split(".")[2]).not.toBe(
      next.value.split(".")[2],
    );
  });

  it("RT-1: a malformed token is refused before any storage read", async () => {
    const storage = memoryStorage();
    let reads = 0;
    const counted: Storage = {
      ...storage,
      sessions: {
        ...storage.sessions,
        findLegacyRefreshToken: async () => {
          reads += 1;
          return null;
        },
      },
    };
    const { auth: own } = makeAuth({ storage: counted });
    for (const value of [
      "",
      "a.b.c",
      `${sessionId}.01.${"A".repeat(43)}`,
      `${sessionId}.-1.${"A".repeat(43)}`,
      `${sessionId}.1.${"A".repeat(42)}`,
      `${sessionId}.1.${"A".repeat(44)}`,
      `${sessionId}.1.${"A".repeat(43)}.x`,
      `.1.${"A".repeat(43)}`,
      `${"s".repeat(256)}.1.${"A".repeat(43)}`,
      `${sessionId}.1234567890123456.${"A".repeat(43)}`,
      "A".repeat(42),
      "A".repeat(44),
      `${"A".repeat(42)}=`,
    ]) {
      expect(await readRefreshToken(own, value)).toBeNull();
    }
    expect(reads).toBe(0);
  });

  it("an earlier release's token (43 characters) is read from its store as generation 0 of its session, spent or not", async () => {
    const storage = memoryStorage();
    const legacy = new Map<string, LegacyRefreshToken>();
    const withLegacy: Storage = {
      ...storage,
      sessions: { ...storage.sessions, findLegacyRefreshToken: async (hash) => legacy.get(hash) ?? null },
    };
    const { auth: own } = makeAuth({ storage: withLegacy });
    const [live, spent] = [randomBytes(32).toString("base64url"), randomBytes(32).toString("base64url")];
    const row = { sessionId, userId: "u", createdAt: 1, expiresAt: 2 };
    legacy.set(sha256(live), { ...row, hash: sha256(live), spentAt: null });
    legacy.set(sha256(spent), { ...row, hash: sha256(spent), spentAt: 1 });
    expect(await readRefreshToken(own, live)).toEqual({
      value: live,
      hash: sha256(live),
      sessionId,
      generation: 0,
      spentBeforeUpgrade: false,
    });
    expect((await readRefreshToken(own, spent))?.spentBeforeUpgrade).toBe(true);
    expect(await readRefreshToken(own, randomBytes(32).toString("base64url"))).toBeNull();
    // A store without earlier tokens knows none.
    expect(await readRefreshToken(auth, live)).toBeNull();
  });

  it("RT-2: a token the session replaced is traced to its current one: the last replaced is its parent, older ones earlier", async () => {
    const first = firstRefreshToken(auth, sessionId);
    const current = after(auth, first, 3);
    const session = { refreshHash: current.hash, refreshGeneration: 3 };
    const parent = after(auth, first, 2);
    expect(relationToCurrent(auth, await presented(auth, parent.value), session)).toEqual({
      relation: "parent",
      current: current.value,
    });
    for (const earlier of [first, after(auth, first, 1)]) {
      expect(relationToCurrent(auth, await presented(auth, earlier.value), session)).toEqual({ relation: "earlier" });
    }
  });

  it("RT-2: a token the service never issued for the session is unrelated: made up from its id, the current one, a later generation, another session's", async () => {
    const first = firstRefreshToken(auth, sessionId);
    const current = after(auth, first, 2);
    const session = { refreshHash: current.hash, refreshGeneration: 2 };
    const madeUp = [
      `${sessionId}.0.${randomBytes(32).toString("base64url")}`,
      `${sessionId}.1.${randomBytes(32).toString("base64url")}`,
      current.value,
      after(auth, first, 3).value,
      `${sessionId}.7.${randomBytes(32).toString("base64url")}`,
      firstRefreshToken(auth, "b3RoZXItc2Vzc2lvbi1pZA").value,
    ];
    for (const value of madeUp)
      expect(relationToCurrent(auth, await presented(auth, value), session)).toEqual({ relation: "unrelated" });
    expect(relationToCurrent(auth, await presented(auth, first.value), { refreshHash: null, refreshGeneration: 2 })).toEqual({
      relation: "unrelated",
    });
  });

  it(`RT-2: a token more than ${maxGenerationsBack} generations back is not followed (a bounded cost), one at the limit is`, async () => {
    const first = firstRefreshToken(auth, sessionId);
    const atLimit = after(auth, first, maxGenerationsBack);
    expect(
      relationToCurrent(auth, await presented(auth, first.value), {
        refreshHash: atLimit.hash,
        refreshGeneration: maxGenerationsBack,
      }),
    ).toEqual({
      relation: "earlier",
    });
    const beyond = nextRefreshToken(auth, { ...atLimit, sessionId });
    expect(
      relationToCurrent(auth, await presented(auth, first.value), {
        refreshHash: beyond.hash,
        refreshGeneration: maxGenerationsBack + 1,
      }),
    ).toEqual({ relation: "unrelated" });
  });

  it("RT-2: after an encryption key rotation (the old key kept in the ring) the chain made under the old key is still traced", async () => {
    const k1 = randomBytes(32).toString("base64url");
    const k2 = randomBytes(32).toString("base64url");
    const before = makeAuth({ secrets: { signing: signingSecret, encryption: { current: "k1", keys: { k1 } } } }).auth;
    const rotated = makeAuth({ secrets: { signing: signingSecret, encryption: { current: "k2", keys: { k1, k2 } } } }).auth;
    const first = firstRefreshToken(before, sessionId);
    const current = after(before, first, 2);
    const session = { refreshHash: current.hash, refreshGeneration: 2 };
    expect(relationToCurrent(rotated, await presented(rotated, after(before, first, 1).value), session)).toEqual({
      relation: "parent",
      current: current.value,
    });
    expect(relationToCurrent(rotated, await presented(rotated, first.value), session)).toEqual({ relation: "earlier" });
    // The replacement made now is under the new key.
    expect(nextRefreshToken(rotated, await presented(rotated, current.value)).value).not.toBe(after(before, current, 1).value);
  });
});
