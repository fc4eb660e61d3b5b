import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ErrorCode } from "../errors/codes.js";
import { usernameKeyOf } from "../users/username.js";
import { type ListUsersInput, type UserPage, defaultPageSize, listUsers } from "./admin-user-list.js";
import { createUser } from "./create-user.js";
import { type Harness, authError, makeAuth, signingSecret } from "./fixtures.test-support.js";

/** Makes accounts without passwords (no argon2id): the listing reads nothing else. */
async function addUsers(harness: Harness, usernames: string[]): Promise<void> {
  for (const username of usernames) await createUser(harness.auth, { username });
}

/** Every page of a listing, following the cursors. */
async function allPages(harness: Harness, input: ListUsersInput): Promise<UserPage[]> {
  const pages = [await listUsers(harness.auth, input)];
  for (let page = pages[0]; page?.nextCursor; ) {
    page = await listUsers(harness.auth, { ...input, cursor: page.nextCursor });
    pages.push(page);
  }
  return pages;
}

const namesOf = (pages: UserPage[]) => pages.flatMap((page) => page.users.map((user) => user.username));
const codeOf = async (promise: Promise<unknown>) => (await authError(promise)).code;

describe("listUsers", () => {
  it("AD-1: 250 users in pages of 100 and of 7: each exactly once, in key order; the last page has no cursor", async () => {
    const harness = makeAuth();
    const usernames = Array.from({ length: 250 }, (_, index) => `user-${String((index * 37) % 250).padStart(3, "0")}`);
    await addUsers(harness, usernames);
    const sorted = [...usernames].sort();
    const hundreds = await allPages(harness, { limit: 100 });
    expect(hundreds.map((page) => page.users.length)).toEqual([100, 100, 50]);
    expect(namesOf(hundreds)).toEqual(sorted);
    expect(hundreds.at(-1)?.nextCursor).toBeNull();
    const sevens = await allPages(harness, { limit: 7 });
    expect(sevens).toHaveLength(36);
    expect(sevens.slice(0, -1).every((page) => page.users.length === 7)).toBe(true);
    expect(sevens.at(-1)?.users).toHaveLength(250 - 35 * 7);
    expect(namesOf(sevens)).toEqual(sorted);
    expect((await listUsers(harness.auth)).users).toHaveLength(defaultPageSize);
  });

  it("AD-1: a page that ends exactly at the last user has no cursor", async () => {
    const harness = makeAuth();
    await addUsers(harness, ["a", "b", "c", "d"]);
    expect(await listUsers(harness.auth, { limit: 4 })).toMatchObject({ nextCursor: null });
    const first = await listUsers(harness.auth, { limit: 2 });
    const second = await listUsers(harness.auth, { limit: 2, cursor: first.nextCursor as string });
    expect([namesOf([second]), second.nextCursor]).toEqual([["c", "d"], null]);
    expect(await listUsers(harness.auth, { limit: 1, q: "d" })).toMatchObject({ nextCursor: null });
  });

  it("AD-1: q is a username prefix compared as keys are (NFKC, lower case), also across pages, among names that share prefixes", async () => {
    const harness = makeAuth();
    await addUsers(harness, ["al", "Alice", "alicia", "ALINA", "alina2", "ali", "bob", "zoë", "ｚｏｅｙ", "alfred"]);
    const found = async (q: string, limit = 2) => namesOf(await allPages(harness, { q, limit }));
    expect(await found("ali")).toEqual(["ali", "Alice", "alicia", "ALINA", "alina2"]);
    expect(await found("ALIC", 1)).toEqual(["Alice", "alicia"]);
    expect(await found("al", 3)).toEqual(["al", "alfred", "ali", "Alice", "alicia", "ALINA", "alina2"]);
    expect(await found("alina")).toEqual(["ALINA", "alina2"]);
    expect(await found("ZOË")).toEqual(["zoë"]);
    expect(await found("Ｚｏｅ")).toEqual(["zoey"]);
    expect(await found("alz")).toEqual([]);
    expect(await found("")).toHaveLength(10);
    expect((await listUsers(harness.auth, { q: "alice" })).users.map((user) => usernameKeyOf(user.username))).toEqual(["alice"]);
  });

  it("shows each user as the admin views do: the user object and disabled, nothing secret", async () => {
    const harness = makeAuth();
    const user = await createUser(harness.auth, { username: "shown", password: "correct horse battery staple", roles: ["r"] });
    await createUser(harness.auth, { username: "switched-off", disabled: true });
    const page = await listUsers(harness.auth);
    expect(page.users).toEqual([
      {
        id: user.id,
        username: "shown",
        roles: ["r"],
        totpEnabled: false,
        email: null,
        emailVerified: false,
        createdAt: harness.clock.now,
        disabled: false,
      },
      expect.objectContaining({ username: "switched-off", disabled: true }),
    ]);
    expect(JSON.stringify(page)).not.toMatch(/passwordHash|tokenVersion|usernameKey|argon2/);
  });

  it("AD-1: a cursor this listing did not give is 40002: made up, altered, of another q, of another key, or no string", async () => {
    const harness = makeAuth();
    await addUsers(harness, ["a1", "a2", "a3", "b1", "b2"]);
    const { nextCursor } = await listUsers(harness.auth, { limit: 1 });
    const cursor = nextCursor as string;
    expect((await listUsers(harness.auth, { limit: 1, cursor })).users[0]?.username).toBe("a2");
    const [key, tag] = cursor.split(".") as [string, string];
    const flip = (text: string, at: number) => `${text.slice(0, at)}${text[at] === "A" ? "B" : "A"}${text.slice(at + 1)}`;
    const forged = [
      `${Buffer.from("a2").toString("base64url")}.${tag}`,
      `${key}.${flip(tag, 0)}`,
      `${key}.${flip(tag, 21)}`,
      `${flip(key, 0)}.${tag}`,
      `${key}.${tag}x`,
      `${key}${tag}`,
      `${key}.${tag}.${tag}`,
      `.${tag}`,
      `${key}+.${tag}`,
      `${"A".repeat(1001)}.${tag}`,
      "",
      " ",
    ];
    for (const bad of forged) {
      const error = await authError(listUsers(harness.auth, { limit: 1, cursor: bad }));
      expect([error.code, error.message], bad).toEqual([ErrorCode.MalformedParameter, "The cursor is not one this listing gave"]);
    }
    expect(await codeOf(listUsers(harness.auth, { limit: 1, cursor, q: "a" }))).toBe(ErrorCode.MalformedParameter);
    const prefixed = (await listUsers(harness.auth, { limit: 1, q: "a" })).nextCursor as string;
    expect(await codeOf(listUsers(harness.auth, { limit: 1, cursor: prefixed }))).toBe(ErrorCode.MalformedParameter);
    expect((await listUsers(harness.auth, { limit: 1, cursor: prefixed, q: "A" })).users[0]?.username).toBe("a2");
    const secrets = { signing: signingSecret, encryption: randomBytes(32).toString("base64url") };
    const elsewhere = makeAuth({ storage: harness.storage, secrets });
    expect(await codeOf(listUsers(elsewhere.auth, { limit: 1, cursor }))).toBe(ErrorCode.MalformedParameter);
    expect(await codeOf(listUsers(harness.auth, { cursor: 5 as never }))).toBe(ErrorCode.MalformedParameter);
  });

  it("PW-5: a limit outside 1 to 100, or no whole number, and a q that cannot begin a username are 40002", async () => {
    const harness = makeAuth();
    await addUsers(harness, ["a"]);
    for (const limit of [0, -1, 101, 2.5, Number.NaN, "5"]) {
      const error = await authError(listUsers(harness.auth, { limit: limit as number }));
      expect([error.code, error.message], String(limit)).toEqual([
        ErrorCode.MalformedParameter,
        "limit must be a whole number from 1 to 100",
      ]);
    }
    expect((await listUsers(harness.auth, { limit: 100 })).users).toHaveLength(1);
    expect((await listUsers(harness.auth, { limit: 1 })).users).toHaveLength(1);
    for (const q of ["a".repeat(129), "\ud800", "😀".repeat(129), "x".repeat(513)]) {
      const error = await authError(listUsers(harness.auth, { q }));
      expect([error.code, error.message]).toEqual([
        ErrorCode.MalformedParameter,
        "q must be a username prefix of at most 128 characters",
      ]);
    }
    expect((await listUsers(harness.auth, { q: "a".repeat(128) })).users).toEqual([]);
    expect((await listUsers(harness.auth, { q: "😀".repeat(128) })).users).toEqual([]);
    expect(await codeOf(listUsers(harness.auth, { q: ["a"] as never }))).toBe(ErrorCode.MalformedParameter);
  });
});
