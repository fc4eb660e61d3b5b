import { describe, expect, it } from "vitest";
import { ErrorCode } from "../errors/codes.js";
import { memoryStorage } from "../storage/memory.js";
import { type CreateUserInput, createUser } from "./create-user.js";
import { authError, goodPassword, makeAuth, outcome, signIn } from "./fixtures.test-support.js";
import { login } from "./login.js";

/** The business code and message a rejected promise carries. */
async function answerOf(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  const { code, message } = await authError(promise);
  return { code, message };
}

const rolesRefusal = { code: ErrorCode.ValidationFailed, message: "roles must be a list of names of 1 to 64 characters" };

describe("createUser", () => {
  it("PW-5: each missing field is 40001 naming it, each non-string 40002 naming it", async () => {
    const storage = memoryStorage();
    const { auth } = makeAuth({ storage });
    const create = (input: Record<string, unknown>) => createUser(auth, input as unknown as CreateUserInput);
    for (const missing of [undefined, null, ""]) {
      expect(await answerOf(create({ username: missing, password: goodPassword })), String(missing)).toEqual({
        code: ErrorCode.MissingParameter,
        message: "username is required",
      });
    }
    for (const malformed of [{ $ne: "" }, ["alice"], 42, true]) {
      expect(await answerOf(create({ username: malformed, password: goodPassword }))).toEqual({
        code: ErrorCode.MalformedParameter,
        message: "username must be a string",
      });
      expect(await answerOf(create({ username: "alice", password: malformed }))).toEqual({
        code: ErrorCode.MalformedParameter,
        message: "password must be a string",
      });
    }
    expect(storage.sizes().users).toBe(0);
  });

  it("PW-5: roles are a list of names of 1 to 64 characters; anything else is 42200 with the reason", async () => {
    const { auth } = makeAuth();
    const refused: unknown[] = [
      "admin",
      { 0: "admin", length: 1 },
      [""],
      ["r".repeat(65)],
      [42],
      [null],
      [["admin"]],
      [{ length: 5 }],
      ["admin", ["admin"]],
    ];
    for (const roles of refused) {
      expect(await answerOf(createUser(auth, { username: "roles", roles } as never)), JSON.stringify(roles)).toEqual(
        rolesRefusal,
      );
    }
    const user = await createUser(auth, { username: "roles", roles: ["r", "r".repeat(64), "r"] });
    expect(user.roles).toEqual(["r", "r".repeat(64)]);
  });

  it("AD-2: at most 50 roles, each counted once, taking at most 4,096 bytes together as the access token carries them (JSON, UTF-8): the bound is accepted, one more is 42200 naming it", async () => {
    const { auth } = makeAuth();
    const create = (roles: string[]) => answerOf(createUser(auth, { username: `roles-${roles.length}`, roles }));
    const fifty = Array.from({ length: 50 }, (_, index) => `${index}`.padStart(64, "r"));
    const atTheBound = await createUser(auth, { username: "fifty", roles: [...fifty, fifty[0] as string] });
    expect(atTheBound.roles).toEqual(fifty);
    expect(Buffer.byteLength(JSON.stringify(fifty))).toBe(3351);
    expect(await create([...fifty, "one more"])).toEqual({
      code: ErrorCode.ValidationFailed,
      message: "roles must be at most 50 names; got 51",
    });
    expect(await create(Array.from({ length: 3000 }, (_, index) => `role-${index}`))).toEqual({
      code: ErrorCode.ValidationFailed,
      message: "roles must be at most 50 names; got 3000",
    });
    // Non-ASCII names and escaped characters weigh more than their length: 4,096 bytes exactly, then one more.
    const heavy = [...Array.from({ length: 31 }, (_, index) => `${index}`.padStart(64, "é")), `${"é".repeat(41)}x`];
    expect(Buffer.byteLength(JSON.stringify(heavy))).toBe(4096);
    expect((await createUser(auth, { username: "heavy", roles: heavy })).roles).toEqual(heavy);
    expect(await create([...heavy.slice(0, -1), `${"é".repeat(41)}xx`])).toEqual({
      code: ErrorCode.ValidationFailed,
      message: "roles must take at most 4096 bytes together (JSON, UTF-8, as the access token carries them); these take 4097",
    });
    const escaped = Array.from({ length: 11 }, (_, index) => `${index}`.padStart(64, "\u0001"));
    expect((await create(escaped)).message).toMatch(/^roles must take at most 4096 bytes together .*; these take 4\d{3}$/);
  });

  it("PW-3: the password given at creation passes the policy, with the reason when it does not", async () => {
    const storage = memoryStorage();
    const { auth } = makeAuth({ storage });
    const short = await answerOf(createUser(auth, { username: "short", password: "short" }));
    expect(short.code).toBe(ErrorCode.ValidationFailed);
    expect(short.message).toMatch(/at least 8 characters/);
    const common = await answerOf(createUser(auth, { username: "common", password: "password1" }));
    expect(common.code).toBe(ErrorCode.ValidationFailed);
    expect(common.message).toMatch(/too common/);
    expect(storage.sizes().users).toBe(0);
  });

  it("users: without roles, password or disabled, an account has no roles, cannot sign in with a password, and is enabled", async () => {
    const harness = makeAuth();
    for (const input of [{ username: "bare" }, { username: "nulls", password: null, roles: undefined }]) {
      const user = await createUser(harness.auth, input as never);
      expect(user).toMatchObject({ roles: [], disabled: false, tokenVersion: 0, hasPassword: false });
      const stored = await harness.storage.users.findById(user.id);
      expect(stored).toMatchObject({ roles: [], disabled: false, passwordHash: null });
      expect(await outcome(login(harness.auth, { username: input.username, password: goodPassword }))).toBe(40100);
    }
    const withPassword = await createUser(harness.auth, { username: "with-password", password: goodPassword });
    expect(withPassword).toMatchObject({ roles: [], disabled: false, hasPassword: true });
    await signIn(harness, "with-password");
  });

  it("EN-1: an account created with disabled: true starts disabled; only true disables it", async () => {
    const harness = makeAuth();
    const disabled = await createUser(harness.auth, { username: "born-disabled", password: goodPassword, disabled: true });
    expect(disabled.disabled).toBe(true);
    expect((await harness.storage.users.findById(disabled.id))?.disabled).toBe(true);
    expect(await outcome(login(harness.auth, { username: "born-disabled", password: goodPassword }))).toBe(ErrorCode.Forbidden);
    for (const [index, value] of [false, "true", 1].entries()) {
      const user = await createUser(harness.auth, { username: `not-disabled-${index}`, disabled: value } as never);
      expect(user.disabled, JSON.stringify(value)).toBe(false);
    }
  });

  it("a username that is taken, whatever its case or form, is 40900 The username is taken", async () => {
    const storage = memoryStorage();
    const harness = makeAuth({ storage });
    await createUser(harness.auth, { username: "Taken" });
    expect(await answerOf(createUser(harness.auth, { username: "TAKEN", password: goodPassword }))).toEqual({
      code: ErrorCode.Conflict,
      message: "The username is taken",
    });
    expect(storage.sizes().users).toBe(1);
  });

  it("an address is stored unverified by default, verified when the service vouches; not an address is 40002 naming email", async () => {
    const harness = makeAuth();
    const plain = await createUser(harness.auth, { username: "plain" });
    expect(plain).toMatchObject({ email: null, emailVerified: false });
    const pending = await createUser(harness.auth, { username: "pending", email: "Pat@Example.com" });
    expect(pending).toMatchObject({ email: "Pat@Example.com", emailVerified: false });
    const vouched = await createUser(harness.auth, { username: "vouched", email: "\uFF36ic@example.com", emailVerified: true });
    expect(vouched).toMatchObject({ email: "Vic@example.com", emailVerified: true });
    expect((await harness.storage.users.findByVerifiedEmail("vic@example.com"))?.id).toBe(vouched.id);
    const refused = [
      [{ email: "no-at-sign" }, "email must be an address with one @ between a name and a domain"],
      [{ email: "two words@example.com" }, "email must not hold spaces, control or invisible characters"],
      [{ email: 42 }, "email must be a string"],
      [{ email: "a@example.com", emailVerified: "yes" }, "emailVerified must be a boolean"],
      [{ emailVerified: true }, "emailVerified needs an email"],
    ] as const;
    for (const [fields, message] of refused) {
      const attempt = createUser(harness.auth, { username: "refused", ...fields } as unknown as CreateUserInput);
      expect(await answerOf(attempt), message).toEqual({ code: ErrorCode.MalformedParameter, message });
    }
    expect(await harness.storage.users.findByUsernameKey("refused")).toBeNull();
  });

  it("EV-1: an address another account holds verified is 40900 when vouched for, compared lower-cased after NFKC; unverified it repeats", async () => {
    const storage = memoryStorage();
    const harness = makeAuth({ storage });
    await createUser(harness.auth, { username: "holder", email: "Ann@Example.com", emailVerified: true });
    expect(
      await answerOf(createUser(harness.auth, { username: "second", email: "\uFF41nn@EXAMPLE.com", emailVerified: true })),
    ).toEqual({ code: ErrorCode.Conflict, message: "The email address is verified on another account" });
    expect(await storage.users.findByUsernameKey("second")).toBeNull();
    const copy = await createUser(harness.auth, { username: "copy", email: "ann@example.com" });
    expect(copy).toMatchObject({ email: "ann@example.com", emailVerified: false });
    expect(storage.sizes().users).toBe(2);
  });
});
