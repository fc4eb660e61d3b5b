import { describe, expect, it } from "vitest";
import { type PublicUser, withHookFields } from "./public-user.js";

const alice: PublicUser = {
  id: "u1",
  username: "alice",
  roles: ["editor"],
  totpEnabled: false,
  email: null,
  emailVerified: false,
  createdAt: 1_700_000_000_000,
};

class Profile {
  role = "editor";
}

/** An object whose prototype has no `constructor`, so no class name to give. */
const nameless = Object.create(Object.create(null)) as object;

describe("withHookFields (the publicUser hook)", () => {
  it("without a hook the user is the contract's", async () => {
    expect(await withHookFields(alice, undefined)).toBe(alice);
  });

  it("a plain object, made by {} or Object.create(null), adds its fields; the contract's fields win", async () => {
    expect(await withHookFields(alice, () => ({ role: "editor", username: "root" }))).toEqual({ ...alice, role: "editor" });
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { department: "sales", id: "u2" });
    expect(await withHookFields(alice, async () => bare)).toEqual({ ...alice, department: "sales" });
  });

  it("anything else is a TypeError naming what the hook answered, for onInternalError", async () => {
    const answers: [answer: unknown, named: string][] = [
      [null, "null"],
      [undefined, "undefined"],
      [["editor"], "an array"],
      [new Map([["role", "editor"]]), "an instance of Map"],
      [new Date(0), "an instance of Date"],
      [new Profile(), "an instance of Profile"],
      [nameless, "an instance of another prototype"],
      ["editor", "a string"],
      [42, "a number"],
      [true, "a boolean"],
    ];
    for (const [answer, named] of answers) {
      await expect(
        withHookFields(alice, () => answer as Record<string, unknown>),
        named,
      ).rejects.toThrow(new TypeError(`The publicUser hook must answer a plain object of extra fields; it answered ${named}`));
    }
  });
});
