import { describe, expect, it, vi } from "vitest";
import { ErrorCode } from "../errors/codes.js";
import { memoryStorage } from "../storage/memory.js";
import type { Storage, UserRecord } from "../storage/types.js";
import { setPassword } from "./change-password.js";
import { type CreateUserInput, createUser, readCreateUserInput } from "./create-user.js";
import { type EnsureUserDifference, differences, ensureUser } from "./ensure-user.js";
import { authError, enrolTotp, goodPassword, makeAuth, nextCode, signIn, slowStorage } from "./fixtures.test-support.js";
import { login } from "./login.js";
import { setUserDisabled, setUserRoles } from "./manage-users.js";
import { verifyTotp } from "./verify-totp.js";

const seed = { username: "alice", password: goodPassword, roles: ["admin"] } satisfies CreateUserInput;

/** The business code and message a rejected promise carries. */
async function answerOf(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  const { code, message } = await authError(promise);
  return { code, message };
}

describe("ensureUser", () => {
  it("PW-1, PW-3: a free username is created as createUser creates it: the policy, argon2id, user.created by the service", async () => {
    const harness = makeAuth();
    const result = await ensureUser(harness.auth, { ...seed, email: "Alice@Example.com", emailVerified: true });
    expect(result).toEqual({
      created: true,
      differs: [],
      user: expect.objectContaining({
        username: "alice",
        roles: ["admin"],
        disabled: false,
        hasPassword: true,
        source: "local",
        email: "Alice@Example.com",
        emailVerified: true,
      }),
    });
    expect((await harness.storage.users.findById(result.user.id))?.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(harness.events.filter((event) => event.type === "user.created")).toEqual([
      { type: "user.created", userId: result.user.id, by: "service", at: harness.clock.now },
    ]);
    await signIn(harness, "alice");

    const refused = await answerOf(ensureUser(harness.auth, { username: "bob", password: "password1" }));
    expect(refused.code).toBe(ErrorCode.ValidationFailed);
    expect(refused.message).toMatch(/too common/);
    expect(await harness.storage.users.findByUsernameKey("bob")).toBeNull();
  });

  it("a second start with the same seed leaves the user exactly as it is, writes nothing and emits nothing", async () => {
    const harness = makeAuth();
    const first = await ensureUser(harness.auth, seed);
    const before = await harness.storage.users.findById(first.user.id);
    const eventsBefore = harness.events.length;
    harness.clock.advance(60_000);
    const again = await ensureUser(harness.auth, seed);
    expect(again).toEqual({ created: false, user: first.user, differs: [] });
    expect(await harness.storage.users.findById(first.user.id)).toEqual(before);
    expect(harness.events).toHaveLength(eventsBefore);
    // Regardless of case or form, as createUser's uniqueness: the stored name is kept.
    const shouted = await ensureUser(harness.auth, { ...seed, username: "ＡＬＩＣＥ" });
    expect(shouted).toMatchObject({ created: false, user: { id: first.user.id, username: "alice" }, differs: [] });
  });

  it("TV-1: a user changed since the seed keeps its password, roles, state, address, TOTP and sessions; differs names the fields, never a value", async () => {
    const storage = memoryStorage();
    const harness = makeAuth({ storage });
    const { user } = await ensureUser(harness.auth, { ...seed, email: "alice@example.com" });
    const changedPassword = "a passphrase of her own choosing";
    await setPassword(harness.auth, { userId: user.id, newPassword: changedPassword });
    const { secret } = await enrolTotp(harness.auth, user.id, changedPassword);
    await setUserRoles(harness.auth, { userId: user.id, roles: ["auditor"] });
    await harness.storage.users.setEmail(user.id, { email: "alice@elsewhere.example", verified: true }, harness.clock.now);
    expect((await login(harness.auth, { username: "alice", password: changedPassword })).status).toBe("totp_required");
    await setUserDisabled(harness.auth, { userId: user.id, disabled: true });
    const before = await harness.storage.users.findById(user.id);
    const sizesBefore = storage.sizes();
    const hash = vi.spyOn(harness.auth.passwords, "hash");
    const verify = vi.spyOn(harness.auth.passwords, "verify");

    const result = await ensureUser(harness.auth, {
      ...seed,
      email: "alice@example.com",
      emailVerified: false,
      disabled: false,
    });
    expect(result).toEqual({
      created: false,
      user: expect.objectContaining({ id: user.id, roles: ["auditor"], disabled: true, email: "alice@elsewhere.example" }),
      differs: ["roles", "disabled", "email", "emailVerified"],
    });
    expect(await harness.storage.users.findById(user.id)).toEqual(before);
    expect(storage.sizes()).toEqual(sizesBefore);
    // The seed's password was neither hashed nor compared with the stored one.
    expect(hash).not.toHaveBeenCalled();
    expect(verify).not.toHaveBeenCalled();
    expect(JSON.stringify(result)).not.toContain(goodPassword);
    expect(JSON.stringify(result)).not.toContain("admin");

    await setUserDisabled(harness.auth, { userId: user.id, disabled: false });
    // Her own password and TOTP still sign her in; the seed's password does not.
    const pending = await login(harness.auth, { username: "alice", password: changedPassword });
    if (pending.status !== "totp_required") throw new Error(`expected totp_required, got ${pending.status}`);
    const tokens = await verifyTotp(harness.auth, { tempToken: pending.tempToken, code: nextCode(harness, secret) });
    expect(tokens.user).toMatchObject({ id: user.id, totpEnabled: true, roles: ["auditor"] });
    expect((await answerOf(login(harness.auth, { username: "alice", password: goodPassword }))).code).toBe(
      ErrorCode.AuthenticationFailed,
    );
  });

  it("PW-3: a password given for an existing user is not held to the policy, and the answer is the same whether or not it matches", async () => {
    const harness = makeAuth();
    await ensureUser(harness.auth, seed);
    const answers = [];
    for (const password of [goodPassword, "short", "password1", "alice", "another long passphrase"]) {
      answers.push(await ensureUser(harness.auth, { ...seed, password }));
    }
    expect(new Set(answers.map((answer) => JSON.stringify(answer))).size).toBe(1);
    expect(answers[0]).toMatchObject({ created: false, differs: [] });
  });

  it("hasPassword is listed when a password is given and the user has none; a field the seed leaves out is not compared", async () => {
    const harness = makeAuth();
    await createUser(harness.auth, { username: "carol", roles: ["ops"], email: "carol@example.com", disabled: true });
    expect((await ensureUser(harness.auth, { username: "carol", password: goodPassword })).differs).toEqual(["hasPassword"]);
    expect((await ensureUser(harness.auth, { username: "carol" })).differs).toEqual([]);
    expect(
      (await ensureUser(harness.auth, { username: "carol", roles: ["ops", "ops"], email: "carol@example.com", disabled: true }))
        .differs,
    ).toEqual([]);
  });

  it("PW-5: every field is checked as createUser checks it, whether the user exists or not, and nothing is written", async () => {
    const storage = memoryStorage();
    const harness = makeAuth({ storage });
    const refusals: Array<[Record<string, unknown>, { code: number; message: string }]> = [
      [{ username: "" }, { code: ErrorCode.MissingParameter, message: "username is required" }],
      [{ username: { $ne: "" } }, { code: ErrorCode.MalformedParameter, message: "username must be a string" }],
      [{ password: 42 }, { code: ErrorCode.MalformedParameter, message: "password must be a string" }],
      [{ roles: "admin" }, { code: ErrorCode.ValidationFailed, message: "roles must be a list of names of 1 to 64 characters" }],
      [
        { email: "no-at-sign" },
        { code: ErrorCode.MalformedParameter, message: "email must be an address with one @ between a name and a domain" },
      ],
      [{ emailVerified: true }, { code: ErrorCode.MalformedParameter, message: "emailVerified needs an email" }],
      [
        { email: "a@example.com", emailVerified: "yes" },
        { code: ErrorCode.MalformedParameter, message: "emailVerified must be a boolean" },
      ],
    ];
    for (const exists of [false, true]) {
      if (exists) await ensureUser(harness.auth, seed);
      const before = JSON.stringify(await storage.users.findByUsernameKey("alice"));
      for (const [fields, answer] of refusals) {
        const input = { ...seed, ...fields } as unknown as CreateUserInput;
        expect(await answerOf(ensureUser(harness.auth, input)), `${JSON.stringify(fields)}, exists: ${exists}`).toEqual(answer);
      }
      expect(JSON.stringify(await storage.users.findByUsernameKey("alice"))).toBe(before);
      expect(storage.sizes().users).toBe(exists ? 1 : 0);
    }
  });

  it("EV-1: creating with an address another account holds verified is 40900, and no user is made", async () => {
    const harness = makeAuth();
    await createUser(harness.auth, { username: "holder", email: "ann@example.com", emailVerified: true });
    expect(await answerOf(ensureUser(harness.auth, { username: "ann", email: "ANN@example.com", emailVerified: true }))).toEqual({
      code: ErrorCode.Conflict,
      message: "The email address is verified on another account",
    });
    expect(await harness.storage.users.findByUsernameKey("ann")).toBeNull();
  });

  it("a user created by another process between the lookup and the write is answered created: false, not 40900", async () => {
    const storage = memoryStorage();
    const other = makeAuth({ storage });
    const late = await createUser(other.auth, { username: "alice", roles: ["viewer"] });
    let lookups = 0;
    const blind: Storage = {
      ...storage,
      users: {
        ...storage.users,
        // The first lookup runs before the other process's write lands.
        findByUsernameKey: async (key: string) => (++lookups === 1 ? null : storage.users.findByUsernameKey(key)),
      },
    };
    const harness = makeAuth({ storage: blind });
    const result = await ensureUser(harness.auth, seed);
    expect(result).toEqual({ created: false, user: late, differs: ["roles", "hasPassword"] });
    expect(lookups).toBe(2);
    expect(harness.events.filter((event) => event.type === "user.created")).toEqual([]);
  });

  for (const [name, slow] of [
    ["memory storage", false],
    ["memory storage with every call delayed", true],
  ] as const) {
    it(`20 calls at once from two instances on one ${name} end with one user, one created: true and no error`, async () => {
      const storage = memoryStorage();
      const shared = slow ? slowStorage(storage) : storage;
      const first = makeAuth({ storage: shared });
      const second = makeAuth({ storage: shared });
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, index) => ensureUser((index % 2 === 0 ? first : second).auth, seed)),
      );
      expect(results.filter((result) => result.created)).toHaveLength(1);
      expect(new Set(results.map((result) => result.user.id)).size).toBe(1);
      expect(results.every((result) => result.differs.length === 0)).toBe(true);
      expect(storage.sizes().users).toBe(1);
      const created = [...first.events, ...second.events].filter((event) => event.type === "user.created");
      expect(created).toHaveLength(1);
    });
  }
});

describe("differences", () => {
  const record: UserRecord = {
    id: "u1",
    username: "alice",
    usernameKey: "alice",
    passwordHash: "$argon2id$…",
    roles: ["admin", "ops"],
    disabled: false,
    tokenVersion: 0,
    source: "local",
    email: "Alice@example.com",
    emailVerified: true,
    createdAt: 0,
    updatedAt: 0,
  };
  const cases: Array<[string, Partial<UserRecord>, Omit<CreateUserInput, "username">, EnsureUserDifference[]]> = [
    ["nothing given", {}, {}, []],
    ["the same roles in another order, one repeated", {}, { roles: ["ops", "admin", "ops"] }, []],
    ["one role fewer", {}, { roles: ["admin"] }, ["roles"]],
    ["one role more", {}, { roles: ["admin", "ops", "x"] }, ["roles"]],
    ["no roles given as []", {}, { roles: [] }, ["roles"]],
    ["roles null: not given", {}, { roles: null as never }, []],
    ["disabled: false on an enabled user", {}, { disabled: false }, []],
    ["disabled: true on an enabled user", {}, { disabled: true }, ["disabled"]],
    ["disabled: false on a disabled user", { disabled: true }, { disabled: false }, ["disabled"]],
    ["the same address", {}, { email: "Alice@example.com" }, []],
    ["the address in another case", {}, { email: "alice@example.com" }, ["email"]],
    ["the address given, verification left out", {}, { email: "Alice@example.com" }, []],
    [
      "verification given false on a verified address",
      {},
      { email: "Alice@example.com", emailVerified: false },
      ["emailVerified"],
    ],
    ["an address on a user without one", { email: null, emailVerified: false }, { email: "a@example.com" }, ["email"]],
    ["a password on a user with one", {}, { password: "anything" }, []],
    ["a password on a user without one", { passwordHash: null }, { password: "anything" }, ["hasPassword"]],
    [
      "everything at once, in the type's order",
      { passwordHash: null, disabled: true, email: null, emailVerified: false },
      { password: "x", email: "a@example.com", emailVerified: true, disabled: false, roles: [] },
      ["roles", "disabled", "email", "emailVerified", "hasPassword"],
    ],
  ];
  it.each(cases)("%s", (_name, stored, given, expected) => {
    const input = { username: "alice", ...given };
    expect(differences({ ...record, ...stored }, input, readCreateUserInput(input))).toEqual(expected);
  });
});
