import { compareCodePoints } from "../../storage/code-point-order.js";
import type { Storage, UserListQuery, UserRecord } from "../../storage/types.js";
import type { SuiteContext } from "./harness.js";
import { BASE_TIME, sampleUser, uniqueId } from "./samples.js";

/**
 * Keys that tell an exact prefix match from a SQL `LIKE` (`%`, `_`, `\`), a quote, case and
 * accent folding, and UTF-16 order from code point order (U+FF21 sorts before U+1F600).
 */
const suffixes = [
  "a",
  "a%b",
  "axb",
  "a_c",
  "abc",
  "a\\d",
  "a'e",
  "A'e",
  "B",
  "e1",
  "é1",
  "É1",
  "\uFF21",
  "\u{1F600}",
  "\u{1F600}x",
  "\u{10FFFF}",
  "\u{10FFFF}\u{10FFFF}",
  "zz",
];

/** Stores one user per suffix under a prefix of this test's own; returns the prefix and the users in code point order. */
async function usersUnderPrefix(storage: Storage): Promise<{ prefix: string; users: UserRecord[] }> {
  const prefix = `${uniqueId("list")}/`;
  const users = suffixes.map((suffix) => sampleUser({ usernameKey: `${prefix}${suffix}`, username: `${prefix}${suffix}` }));
  for (const user of users) {
    if (!(await storage.users.create(user))) throw new Error(`conformance setup: could not create user ${user.usernameKey}`);
  }
  return { prefix, users: users.sort((a, b) => compareCodePoints(a.usernameKey, b.usernameKey)) };
}

/** Every page of `query`, each from the last key of the one before, until a page comes back short. */
async function allPages(storage: Storage, query: UserListQuery): Promise<UserRecord[][]> {
  const pages: UserRecord[][] = [];
  let after = query.afterUsernameKey;
  for (;;) {
    const page = await storage.users.list({ ...query, afterUsernameKey: after });
    pages.push(page);
    if (page.length < query.limit || pages.length > 100) return pages;
    after = page.at(-1)?.usernameKey;
  }
}

const keysOf = (users: readonly UserRecord[]) => users.map((user) => user.usernameKey);

/** Registers the tests of `users.list`, the administrators' paged listing (AD-1, issue 21). */
export function userListingTests({ test: { describe, it, expect }, makeStorage }: SuiteContext): void {
  describe("list (AD-1)", () => {
    it("AD-1: pages through every user of a prefix exactly once, in code point order, whatever the page size", async () => {
      const storage = await makeStorage();
      const { prefix, users } = await usersUnderPrefix(storage);
      for (const limit of [1, 2, 3, 7, users.length, 100]) {
        const pages = await allPages(storage, { limit, usernameKeyPrefix: prefix });
        for (const page of pages) expect(page.length <= limit).toBe(true);
        expect(pages.flat()).toEqual(users);
      }
    });

    it("AD-1: a prefix matches exactly, code point for code point: %, _, \\ and ' are characters, no case or accent folding", async () => {
      const storage = await makeStorage();
      const { prefix } = await usersUnderPrefix(storage);
      const matching = async (rest: string) =>
        keysOf(await storage.users.list({ limit: 100, usernameKeyPrefix: `${prefix}${rest}` })).map((key) =>
          key.slice(prefix.length),
        );
      expect(await matching("a%")).toEqual(["a%b"]);
      expect(await matching("a_")).toEqual(["a_c"]);
      expect(await matching("a\\")).toEqual(["a\\d"]);
      expect(await matching("a'")).toEqual(["a'e"]);
      expect(await matching("A")).toEqual(["A'e"]);
      expect(await matching("a")).toEqual(["a", "a%b", "a'e", "a\\d", "a_c", "abc", "axb"]);
      expect(await matching("é")).toEqual(["é1"]);
      expect(await matching("e")).toEqual(["e1"]);
      expect(await matching("\u{1F600}")).toEqual(["\u{1F600}", "\u{1F600}x"]);
      expect(await matching("\u{10FFFF}")).toEqual(["\u{10FFFF}", "\u{10FFFF}\u{10FFFF}"]);
      expect(await matching("zz")).toEqual(["zz"]);
      expect(await matching("zzz")).toEqual([]);
      expect(await matching("nobody")).toEqual([]);
      expect(await storage.users.list({ limit: 10, usernameKeyPrefix: uniqueId("nobody") })).toEqual([]);
    });

    it("AD-1: afterUsernameKey excludes that key and starts right after it; the limit holds", async () => {
      const storage = await makeStorage();
      const { prefix, users } = await usersUnderPrefix(storage);
      const keys = keysOf(users);
      for (const [index, key] of keys.entries()) {
        const page = await storage.users.list({ limit: 3, usernameKeyPrefix: prefix, afterUsernameKey: key });
        expect(keysOf(page)).toEqual(keys.slice(index + 1, index + 4));
      }
      const between = `${prefix}a&`;
      const afterBetween = await storage.users.list({ limit: 2, usernameKeyPrefix: prefix, afterUsernameKey: between });
      expect(keysOf(afterBetween)).toEqual(keys.filter((key) => compareCodePoints(key, between) > 0).slice(0, 2));
      expect(
        await storage.users.list({ limit: 5, usernameKeyPrefix: prefix, afterUsernameKey: `${prefix}\u{10FFFF}\u{10FFFF}` }),
      ).toEqual([]);
    });

    it("AD-1: without a prefix, a page holds at most limit users after the key, in code point order", async () => {
      const storage = await makeStorage();
      const { prefix, users } = await usersUnderPrefix(storage);
      const page = await storage.users.list({ limit: 4, afterUsernameKey: prefix });
      expect(page).toHaveLength(4);
      // Other tests may share this storage: what comes first after the prefix is at most this prefix's first user.
      const first = users[0] as UserRecord;
      for (const [index, user] of page.entries()) {
        expect(compareCodePoints(user.usernameKey, prefix) > 0).toBe(true);
        if (index > 0) expect(compareCodePoints((page[index - 1] as UserRecord).usernameKey, user.usernameKey) < 0).toBe(true);
      }
      expect(compareCodePoints((page[0] as UserRecord).usernameKey, first.usernameKey) <= 0).toBe(true);
      expect(await storage.users.list({ limit: 1 })).toHaveLength(1);
    });

    it("AD-1: a renamed user is listed under its new key only", async () => {
      const storage = await makeStorage();
      const { prefix, users } = await usersUnderPrefix(storage);
      const renamed = users[0] as UserRecord;
      const newKey = `${prefix}renamed`;
      const updated = await storage.users.update(renamed.id, { usernameKey: newKey }, BASE_TIME + 1);
      const expected = users
        .slice(1)
        .concat(updated as UserRecord)
        .sort((a, b) => compareCodePoints(a.usernameKey, b.usernameKey));
      expect((await allPages(storage, { limit: 4, usernameKeyPrefix: prefix })).flat()).toEqual(expected);
      expect(await storage.users.list({ limit: 10, usernameKeyPrefix: renamed.usernameKey })).toEqual([]);
    });
  });
}
