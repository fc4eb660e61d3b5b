import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { hash as bcryptHash } from "@node-rs/bcrypt";
import { driveAuthorization, totpCode } from "@portcullis/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OidcTestProvider, startOidcProvider } from "../../../../test/fixtures/oidc-provider.js";
import { type Auth, createAuth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import {
  audience,
  decodeBase32,
  encryptionKey,
  goodPassword,
  issuer,
  makeAuth,
  makeClock,
  signingSecret,
} from "../flows/fixtures.test-support.js";
import { login } from "../flows/login.js";
import { oauthAuthorize, oauthCallback } from "../flows/oauth-sign-in.js";
import { makeAuthenticator, makePasskeyAuth, passkeySignIn, userWithPasskey } from "../flows/passkeys.test-support.js";
import { useRecoveryCode } from "../flows/use-recovery-code.js";
import { verifyTotp } from "../flows/verify-totp.js";
import { maxRegistrationCounter } from "../flows/webauthn-register.js";
import { authWithProviders, discoveredProvider } from "../oauth/oauth.test-support.js";
import { memoryStorage } from "../storage/memory.js";
import type { EncryptedSecret, Storage } from "../storage/types.js";
import { hashRecoveryCode } from "../totp/recovery-codes.js";
import { openTotpSecret } from "../totp/totp-secret.js";
import { field } from "../user-fields/field.js";
import {
  type ImportIncomplete,
  type ImportRefusal,
  type ImportSummary,
  type ImportedUser,
  UnreadableRecord,
  existsWithOtherData,
  existsWithoutItsFactors,
  importUsers,
} from "./import-users.js";

/** A TOTP secret of 20 bytes in base32, as an authenticator app is given it. */
const totpSecret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
const recoveryCodes = ["ABCD-EFGH-JKMN-PQRS", "0123-4567-89AB-CDEF"];
const bcryptOfGoodPassword = await bcryptHash(goodPassword, 4);

/** Runs an import and keeps every refusal. */
async function run(auth: Auth, records: unknown[], dryRun = false) {
  const refusals: ImportRefusal[] = [];
  const summary = await importUsers(auth, records, { dryRun, onRefused: (refusal) => refusals.push(refusal) });
  return { summary, refusals };
}

async function passwordLogin(auth: Auth, username: string) {
  return login(auth, { username, password: goodPassword });
}

async function tempTokenOf(auth: Auth, username: string): Promise<string> {
  const result = await passwordLogin(auth, username);
  if (result.status !== "totp_required") throw new Error("expected a second factor to be asked for");
  return result.tempToken;
}

const full: ImportedUser = {
  username: "Alice",
  email: "Alice@Example.com",
  emailVerified: true,
  roles: ["admin", "billing"],
  passwordHash: bcryptOfGoodPassword,
};

let oidc: OidcTestProvider;

beforeAll(async () => {
  oidc = await startOidcProvider();
});

afterAll(async () => {
  await oidc.close();
});

describe("importUsers: the fields", () => {
  it("IM-1: a user with email, verified flag, roles, disabled and a bcrypt hash is stored as given and signs in with the password", async () => {
    const { auth, storage, events } = makeAuth();
    const { summary, refusals } = await run(auth, [full, { username: "bob", disabled: true }]);
    expect(refusals).toEqual([]);
    expect(summary).toMatchObject({ read: 2, imported: 2, unchanged: 0, skipped: 0, refused: 0 });
    const alice = await storage.users.findByUsernameKey("alice");
    expect(alice).toMatchObject({
      username: "Alice",
      email: "Alice@Example.com",
      emailVerified: true,
      roles: ["admin", "billing"],
      disabled: false,
      source: "local",
      tokenVersion: 0,
      passwordHash: `imported:${bcryptOfGoodPassword}`,
    });
    expect(await storage.users.findByUsernameKey("bob")).toMatchObject({ disabled: true, passwordHash: null, email: null });
    expect((await passwordLogin(auth, "alice")).status).toBe("authenticated");
    expect((await storage.users.findByUsernameKey("alice"))?.passwordHash).toMatch(/^\$argon2id\$/);
    expect(
      events.filter((event) => event.type === "user.created").map((event) => event.type === "user.created" && event.by),
    ).toEqual(["import", "import"]);
  });

  it("UF-1: additional user fields are imported as an administrator sets them, the others take their defaults; a bad or undeclared one refuses the record naming it; a re-run is unchanged, other values are other data", async () => {
    const fields = {
      company: field.string({ maxLength: 20 }),
      plan: field.enum(["free", "pro"], { default: "free" }),
      seats: field.integer({ min: 1, max: 100, default: 1 }),
    };
    const { auth, storage } = makeAuth({ user: { fields } });
    const records = [
      { username: "carol", fields: { company: "Acme", seats: 12 } },
      { username: "dan" },
      { username: "erin", fields: { seats: 1000 } },
      { username: "fay", fields: { colour: "red" } },
    ];
    const { summary, refusals } = await run(auth, records);
    expect(summary).toMatchObject({ read: 4, imported: 2, refused: 2 });
    expect(refusals).toEqual([
      { position: 3, field: "fields", reason: expect.stringContaining("fields.seats") },
      { position: 4, field: "fields", reason: expect.stringContaining("fields.colour is not a declared field") },
    ]);
    expect((await storage.users.findByUsernameKey("carol"))?.fields).toEqual({ company: "Acme", plan: "free", seats: 12 });
    expect((await storage.users.findByUsernameKey("dan"))?.fields).toEqual({ company: null, plan: "free", seats: 1 });
    expect(await storage.users.findByUsernameKey("erin")).toBeNull();

    const again = await run(auth, records.slice(0, 2));
    expect(again.summary).toMatchObject({ read: 2, imported: 0, unchanged: 2, skipped: 0 });
    const changed = await run(auth, [{ username: "carol", fields: { company: "Acme", seats: 13 } }]);
    expect(changed.summary).toMatchObject({ read: 1, imported: 0, unchanged: 0, skipped: 1 });
  });

  it("TOTP-6: an imported TOTP secret is sealed at once (never stored as given), enabled, and its code passes at sign-in", async () => {
    const { auth, storage, clock } = makeAuth();
    await run(auth, [{ ...full, totpSecret: totpSecret.toLowerCase().replace(/(.{4})/g, "$1 ") }]);
    const user = await storage.users.findByUsernameKey("alice");
    const totp = await storage.totp.get(user?.id as string);
    expect(totp).toMatchObject({ enabled: true, lastUsedStep: -1 });
    expect(JSON.stringify(totp)).not.toContain(totpSecret);
    expect(totp?.secret.sealed).not.toContain(Buffer.from(decodeBase32(totpSecret)).toString("base64url"));
    expect(openTotpSecret(auth, totp?.secret as EncryptedSecret, user?.id as string)).toEqual(
      Buffer.from(decodeBase32(totpSecret)),
    );
    const tempToken = await tempTokenOf(auth, "alice");
    const tokens = await verifyTotp(auth, { tempToken, code: totpCode({ secret: totpSecret, at: clock.now }) });
    expect(tokens.accessToken).toEqual(expect.any(String));
  });

  it("STUP-7, ASVS 6.5.2: codes of the current 24-character form and of the 16-character form issued before are imported alike", async () => {
    const { auth, storage } = makeAuth();
    const codes = ["ABCD-EFGH-JKMN-PQRS-TVWX-YZ01", "0123 4567 89ab cdef ghjk mnpq", "ABCD-EFGH-JKMN-PQRS"];
    const { summary, refusals } = await run(auth, [{ ...full, totpSecret, recoveryCodes: codes }]);
    expect(refusals).toEqual([]);
    expect(summary.imported).toBe(1);
    const userId = (await storage.users.findByUsernameKey("alice"))?.id as string;
    expect(await storage.recoveryCodes.count(userId)).toBe(3);
    for (const compact of ["ABCDEFGHJKMNPQRSTVWXYZ01", "0123456789ABCDEFGHJKMNPQ", "ABCDEFGHJKMNPQRS"]) {
      expect(await storage.recoveryCodes.has(userId, hashRecoveryCode(userId, compact))).toBe(true);
    }
    const tokens = await useRecoveryCode(auth, {
      tempToken: await tempTokenOf(auth, "alice"),
      recoveryCode: "0123456789ABCDEFGHJKMNPQ",
    });
    expect(tokens.accessToken).toEqual(expect.any(String));
  });

  it("RC-2, RC-3: imported recovery codes are stored only as hashes, and one works once", async () => {
    const { auth, storage } = makeAuth();
    await run(auth, [{ ...full, totpSecret, recoveryCodes }]);
    const userId = (await storage.users.findByUsernameKey("alice"))?.id as string;
    expect(await storage.recoveryCodes.count(userId)).toBe(2);
    expect(await storage.recoveryCodes.has(userId, hashRecoveryCode(userId, "ABCDEFGHJKMNPQRS"))).toBe(true);
    const first = await useRecoveryCode(auth, {
      tempToken: await tempTokenOf(auth, "alice"),
      recoveryCode: "abcd efgh jkmn pqrs",
    });
    expect(first.accessToken).toEqual(expect.any(String));
    const again = await useRecoveryCode(auth, {
      tempToken: await tempTokenOf(auth, "alice"),
      recoveryCode: recoveryCodes[0] as string,
    }).catch((error: unknown) => error);
    expect(again).toBeInstanceOf(AuthError);
    expect((again as AuthError).code).toBe(ErrorCode.SecondFactorFailed);
    expect(await storage.recoveryCodes.count(userId)).toBe(1);
  });

  it("WA-4: an imported passkey, with the user's old id kept as its user handle, signs in with the authenticator holding its key", async () => {
    const legacy = makePasskeyAuth();
    const authenticator = makeAuthenticator();
    const { userId } = await userWithPasskey(legacy, "carol", authenticator);
    const [old] = await legacy.storage.passkeys.listByUser(userId);
    if (!old) throw new Error("no passkey registered");
    const { auth, storage } = makePasskeyAuth();
    const passkey = {
      id: old.id,
      publicKey: old.publicKey,
      counter: old.counter,
      transports: old.transports,
      label: "Old laptop",
    };
    const { summary } = await run(auth, [{ username: "carol", id: userId, passkeys: [passkey] }]);
    expect(summary.imported).toBe(1);
    expect(await storage.passkeys.findById(old.id)).toMatchObject({ userId, label: "Old laptop", counter: old.counter });
    const signedIn = await passkeySignIn(auth, authenticator);
    expect(signedIn.status).toBe("authenticated");
  });

  it("OA-7: an imported identity is linked as a provider sign-in links one: (provider, subject) to the user, the address lower-cased", async () => {
    const { auth, storage } = makeAuth();
    await run(auth, [
      {
        username: "dave",
        identities: [{ provider: "github", subject: "12345", email: "Dave@Example.com", emailVerified: true }],
      },
    ]);
    const user = await storage.users.findByUsernameKey("dave");
    expect(await storage.identities.find("github", "12345")).toMatchObject({
      userId: user?.id,
      email: "dave@example.com",
      emailVerified: true,
      lastUsedAt: null,
    });
  });

  it("OA-7: an imported identity signs in through the provider to the imported account", async () => {
    const h = authWithProviders({ corp: discoveredProvider(oidc) });
    const account = oidc.accounts.alice;
    await run(h.auth, [{ username: "zed", id: "zed-1", identities: [{ provider: "corp", subject: account?.sub as string }] }]);
    const begun = await oauthAuthorize(h.auth, { provider: "corp" });
    const callback = await driveAuthorization(begun.authUrl, { username: "alice" });
    const signedIn = await oauthCallback(h.auth, {
      provider: "corp",
      query: callback.search,
      browserBinding: begun.browserBinding,
    });
    if (signedIn.status !== "authenticated") throw new Error(signedIn.status);
    expect(signedIn.tokens.user).toMatchObject({ id: "zed-1", username: "zed" });
    expect((await h.storage.users.list({ limit: 10 })).length).toBe(1);
  });
});

/** A record with one fault, the field it names and a pattern of its reason. */
const bad: [string, unknown, string, RegExp][] = [
  ["not an object", ["alice"], "record", /JSON object/],
  ["no username", { email: "x@example.com" }, "username", /required/],
  ["a username with an invisible character", { username: "al\u00adice" }, "username", /U\+00AD/],
  ["an unknown field", { username: "erin", password_hash: bcryptOfGoodPassword }, "password_hash", /unknown field/],
  ["a __proto__ key", JSON.parse('{"username":"erin","__proto__":{"roles":["admin"]}}'), "__proto__", /unknown field/],
  ["a malformed email", { username: "erin", email: "alice.example.com" }, "email", /one @/],
  ["emailVerified without an email", { username: "erin", emailVerified: true }, "emailVerified", /needs an email/],
  [
    "emailVerified as a string",
    { username: "erin", email: "e@example.com", emailVerified: "yes" },
    "emailVerified",
    /true or false/,
  ],
  ["roles not a list of names", { username: "erin", roles: "admin" }, "roles", /names/],
  ["disabled as a number", { username: "erin", disabled: 1 }, "disabled", /true or false/],
  [
    "an unknown password hash format",
    { username: "erin", passwordHash: "md5$0123456789abcdef" },
    "passwordHash",
    /unknown password hash format/,
  ],
  ["a password hash as an object", { username: "erin", passwordHash: { $ne: "" } }, "passwordHash", /string/],
  [
    "a bcrypt hash too costly",
    { username: "erin", passwordHash: bcryptOfGoodPassword.replace("$04$", "$16$") },
    "passwordHash",
    /cost/,
  ],
  ["a TOTP secret not base32", { username: "erin", totpSecret: "JBSWY3DP!" }, "totpSecret", /base32/],
  ["a TOTP secret of 10 bytes", { username: "erin", totpSecret: "JBSWY3DPEHPK3PXP" }, "totpSecret", /at least 20 bytes/],
  ["recovery codes without TOTP", { username: "erin", recoveryCodes }, "recoveryCodes", /need totpSecret/],
  [
    "a recovery code of another form",
    { username: "erin", totpSecret, recoveryCodes: ["12345678"] },
    "recoveryCodes[0]",
    /24 Crockford base32 characters \(or 16, as issued before\)/,
  ],
  [
    "a recovery code twice",
    { username: "erin", totpSecret, recoveryCodes: [recoveryCodes[0], "abcdefghjkmnpqrs"] },
    "recoveryCodes",
    /twice/,
  ],
  ["a passkey id not base64url", { username: "erin", passkeys: [{ id: "a+b", publicKey: "AQ" }] }, "passkeys[0].id", /base64url/],
  [
    "a passkey key that is not COSE",
    { username: "erin", passkeys: [{ id: "AQID", publicKey: "AQID" }] },
    "passkeys[0].publicKey",
    /COSE/,
  ],
  [
    "an identity of a badly named provider",
    { username: "erin", identities: [{ provider: "Git Hub", subject: "1" }] },
    "identities[0].provider",
    /provider name/,
  ],
  [
    "an identity without a subject",
    { username: "erin", identities: [{ provider: "github" }] },
    "identities[0].subject",
    /required/,
  ],
  ["an id with a slash", { username: "erin", id: "a/b" }, "id", /1 to 64/],
  ["an unreadable line", new UnreadableRecord("the line is not JSON"), "record", /not JSON/],
];

describe("importUsers: refusals", () => {
  for (const [what, record, field, reason] of bad) {
    it(`IM-1: a record with ${what} is refused whole, naming ${field} and its position, echoing no secret`, async () => {
      const { auth, storage } = makeAuth();
      const { summary, refusals } = await run(auth, [{ username: "first" }, record, { username: "third" }]);
      expect(refusals).toHaveLength(1);
      expect(refusals[0]).toMatchObject({ position: 2, field });
      expect(refusals[0]?.reason).toMatch(reason);
      for (const secret of [bcryptOfGoodPassword, totpSecret, "JBSWY3DPEHPK3PXP", "12345678", "ABCD-EFGH"]) {
        expect(JSON.stringify({ summary, refusals })).not.toContain(secret);
      }
      expect(summary).toMatchObject({ read: 3, imported: 2, refused: 1 });
      expect(Object.values(summary.refusedByReason)).toEqual([1]);
      expect(await storage.users.findByUsernameKey("erin")).toBeNull();
      expect(await storage.users.findByUsernameKey("third")).not.toBeNull();
    });
  }

  it("IM-1: a record whose passkey is fine but whose identity is bad writes nothing, not even the user", async () => {
    const legacy = makePasskeyAuth();
    const { userId } = await userWithPasskey(legacy, "carol");
    const [old] = await legacy.storage.passkeys.listByUser(userId);
    const { auth, storage } = makeAuth();
    const { refusals } = await run(auth, [
      {
        username: "carol",
        passkeys: [{ id: old?.id, publicKey: old?.publicKey }],
        identities: [{ provider: "github", subject: "" }],
      },
    ]);
    expect(refusals).toMatchObject([{ position: 1, field: "identities[0].subject" }]);
    expect(await storage.users.findByUsernameKey("carol")).toBeNull();
    expect(await storage.passkeys.findById(old?.id as string)).toBeNull();
  });

  it("EV-1, WA-6, OA-7: an id, verified address, credential id or link another account holds refuses the record, writing nothing", async () => {
    const legacy = makePasskeyAuth();
    const { userId: legacyId } = await userWithPasskey(legacy, "carol");
    const [old] = await legacy.storage.passkeys.listByUser(legacyId);
    const passkey = { id: old?.id as string, publicKey: old?.publicKey as string };
    const { auth, storage } = makeAuth();
    const holder = {
      username: "holder",
      id: "holder-1",
      email: "held@example.com",
      emailVerified: true,
      passkeys: [passkey],
      identities: [{ provider: "github", subject: "42" }],
    };
    const { refusals } = await run(auth, [
      holder,
      { username: "u1", id: "holder-1" },
      { username: "u2", email: "HELD@example.com", emailVerified: true },
      { username: "u3", passkeys: [passkey] },
      { username: "u4", identities: [{ provider: "github", subject: "42" }] },
      { username: "u5", email: "held@example.com" },
    ]);
    expect(refusals.map(({ position, field }) => [position, field])).toEqual([
      [2, "id"],
      [3, "email"],
      [4, "passkeys[0].id"],
      [5, "identities[0]"],
    ]);
    for (const username of ["u1", "u2", "u3", "u4"]) expect(await storage.users.findByUsernameKey(username)).toBeNull();
    expect(await storage.users.findByUsernameKey("u5")).toMatchObject({ emailVerified: false });
  });
});

describe("importUsers: running again", () => {
  it("IM-1: the same input again changes nothing and says so: every record unchanged, no write, no event", async () => {
    const legacy = makePasskeyAuth();
    const { userId } = await userWithPasskey(legacy, "carol");
    const [old] = await legacy.storage.passkeys.listByUser(userId);
    const records: ImportedUser[] = [
      { ...full, totpSecret, recoveryCodes },
      { username: "carol", id: userId, passkeys: [{ id: old?.id as string, publicKey: old?.publicKey as string }] },
      { username: "dave", identities: [{ provider: "github", subject: "7" }] },
    ];
    const { auth, storage, events } = makeAuth();
    expect((await run(auth, records)).summary.imported).toBe(3);
    const before = JSON.stringify(await storage.users.list({ limit: 10 }));
    const eventsBefore = events.length;
    const again = await run(auth, records);
    expect(again.summary).toMatchObject({ read: 3, imported: 0, unchanged: 3, skipped: 0, refused: 0 });
    expect(JSON.stringify(await storage.users.list({ limit: 10 }))).toBe(before);
    expect(events).toHaveLength(eventsBefore);
  });

  it("IM-1: an existing username with other data is skipped (or incomplete, when it lacks a factor of the record), its account left as it is", async () => {
    const { auth, storage } = makeAuth();
    await run(auth, [full]);
    const before = await storage.users.findByUsernameKey("alice");
    const skips: unknown[] = [];
    for (const changed of [
      { ...full, roles: ["admin"] },
      { ...full, passwordHash: undefined },
    ]) {
      const summary = await importUsers(auth, [changed], { onSkipped: (skip) => skips.push(skip) });
      expect(summary).toMatchObject({ skipped: 1, incomplete: 0, skippedByReason: { [existsWithOtherData]: 1 } });
    }
    for (const changed of [
      { ...full, totpSecret },
      { ...full, identities: [{ provider: "github", subject: "1" }] },
    ]) {
      expect(await importUsers(auth, [changed])).toMatchObject({ skipped: 0, incomplete: 1, skippedByReason: {} });
    }
    expect(skips[0]).toEqual({ position: 1, username: "Alice", reason: existsWithOtherData });
    expect(await storage.users.findByUsernameKey("alice")).toEqual(before);
    expect(await storage.totp.get(before?.id as string)).toBeNull();
    expect(await storage.identities.find("github", "1")).toBeNull();
  });

  it("IM-1: a TOTP secret that differs from the stored one is other data", async () => {
    const { auth } = makeAuth();
    await run(auth, [{ username: "alice", totpSecret }]);
    const other = "KRSXG5DSNFXGOIDUN5ZHI2LOM5ZXI6LZ";
    expect((await run(auth, [{ username: "alice", totpSecret: other }])).summary.skipped).toBe(1);
    expect((await run(auth, [{ username: "alice", totpSecret }])).summary.unchanged).toBe(1);
  });

  it("IM-1: the same username twice in one input, handled concurrently, is imported once", async () => {
    const { auth, storage } = makeAuth();
    const records = Array.from({ length: 20 }, (_, index) => ({ username: "twin", roles: index === 0 ? [] : ["r"] }));
    const summary = await importUsers(auth, records, { concurrency: 8 });
    expect(summary).toMatchObject({ imported: 1, skipped: 19 });
    expect((await storage.users.list({ limit: 10 })).length).toBe(1);
  });

  it("a dry run checks every record against the storage and writes nothing", async () => {
    const { auth, storage } = makeAuth();
    await run(auth, [{ username: "taken", id: "u-1" }]);
    const { summary, refusals } = await run(auth, [full, { username: "x", id: "u-1" }, { username: "" }], true);
    expect(summary).toMatchObject({ dryRun: true, read: 3, imported: 1, refused: 2 });
    expect(refusals.map(({ position, field }) => [position, field]).sort()).toEqual([
      [2, "id"],
      [3, "username"],
    ]);
    expect(await storage.users.findByUsernameKey("alice")).toBeNull();
  });
});

describe("importUsers: streaming", () => {
  it("reads an async iterable only as fast as it imports: at most `concurrency` records in hand", async () => {
    const { auth } = makeAuth();
    let pulled = 0;
    let done = 0;
    let mostInHand = 0;
    async function* records() {
      for (let index = 0; index < 200; index += 1) {
        pulled += 1;
        mostInHand = Math.max(mostInHand, pulled - done);
        yield { username: `user${index}` };
      }
    }
    const summary = await importUsers(auth, records(), { concurrency: 4, onProgress: () => done++ });
    expect(summary.imported).toBe(200);
    expect(mostInHand).toBeLessThanOrEqual(4);
  });

  it("a storage that fails stops the import and throws, after the records in hand are done", async () => {
    const storage = memoryStorage();
    const lost = new Error("connection lost");
    let creates = 0;
    const failing: Storage = {
      ...storage,
      users: {
        ...storage.users,
        createAccount: async (account) => {
          creates += 1;
          if (creates === 5) throw lost;
          return storage.users.createAccount(account);
        },
      },
    };
    const { auth } = makeAuth({ storage: failing });
    let pulled = 0;
    async function* records() {
      for (let index = 0; index < 1000; index += 1) {
        pulled += 1;
        yield { username: `user${index}` };
      }
    }
    await expect(importUsers(auth, records(), { concurrency: 2 })).rejects.toBe(lost);
    expect(pulled).toBeLessThan(20);
  });

  it("an error that is no refusal, thrown while a record is checked, stops the import and is thrown", async () => {
    let failing = false;
    const clock = makeClock();
    const failingClock = {
      get now() {
        if (failing) throw new Error("the clock failed");
        return clock.now;
      },
      advance: clock.advance,
    };
    const { auth } = makeAuth({ clock: failingClock });
    failing = true;
    const refusals: ImportRefusal[] = [];
    await expect(importUsers(auth, [{ username: "x" }], { onRefused: (refusal) => refusals.push(refusal) })).rejects.toThrow(
      "the clock failed",
    );
    expect(refusals).toEqual([]);
  });

  it("100,000 records import with a flat heap: what is held does not grow with the count", { timeout: 60_000 }, async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const storage = memoryStorage();
    let stored = 0;
    // Real memory storage, but accounts are counted and not kept, so that only the import's own holding is measured.
    const counting: Storage = {
      ...storage,
      users: {
        ...storage.users,
        createAccount: async () => {
          stored += 1;
          return true;
        },
      },
    };
    // Not makeAuth: its harness keeps every event, 100,000 user.created among them.
    const auth = createAuth({
      issuer,
      audience,
      secrets: { signing: signingSecret, encryption: encryptionKey },
      storage: counting,
    });
    const samples: number[] = [];
    const total = 100_000;
    function* records() {
      for (let index = 0; index < total; index += 1) {
        if (index % 10_000 === 0) {
          gc();
          samples.push(process.memoryUsage().heapUsed);
        }
        yield {
          username: `user${index}`,
          email: `user${index}@example.com`,
          roles: ["member"],
          passwordHash: bcryptOfGoodPassword,
          totpSecret: index % 2 === 0 ? undefined : totpSecret,
        };
      }
    }
    const summary: ImportSummary = await importUsers(auth, records());
    expect(summary.imported).toBe(total);
    expect(stored).toBe(total);
    const growth = Math.max(...samples.slice(2)) - (samples[1] as number);
    expect(growth).toBeLessThan(8 * 1024 * 1024);
  });
});

/** A registered passkey's id and COSE public key, as another system would export them. */
async function exportedPasskey(username = "carol"): Promise<{ id: string; publicKey: string }> {
  const legacy = makePasskeyAuth();
  const { userId } = await userWithPasskey(legacy, username);
  const [old] = await legacy.storage.passkeys.listByUser(userId);
  if (!old) throw new Error("no passkey registered");
  return { id: old.id, publicKey: old.publicKey };
}

/** Twenty distinct recovery codes of this library's form. */
const twentyCodes = Array.from({ length: 21 }, (_, index) => `ABCD-EFGH-JKMN-${String(index).padStart(4, "0")}`);

describe("importUsers: each field's rule, named exactly", () => {
  it("IM-1: a bad field is refused naming its exact place and reason; null stands for an absent field", async () => {
    const passkey = await exportedPasskey();
    const cases: [unknown, string, string][] = [
      [{ username: 7 }, "username", "must be a string"],
      [{ username: "" }, "username", "is required"],
      [{ username: "erin", id: 7 }, "id", "must be a string"],
      [{ username: "erin", email: 7 }, "email", "must be a string"],
      [{ username: "erin", totpSecret: 7 }, "totpSecret", "must be a string"],
      [{ username: "erin", totpSecret: "1JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP" }, "totpSecret", "must be base32 (A-Z, 2-7)"],
      [{ username: "erin", totpSecret, recoveryCodes: "x" }, "recoveryCodes", "must be a list"],
      [{ username: "erin", totpSecret, recoveryCodes: twentyCodes }, "recoveryCodes", "must hold at most 20"],
      [{ username: "erin", passkeys: "x" }, "passkeys", "must be a list"],
      [{ username: "erin", identities: "x" }, "identities", "must be a list"],
      [{ username: "erin", totpSecret: "JBSWY3DP==EHPK3PXPJBSWY3DPEHPK3PXP" }, "totpSecret", "must be base32 (A-Z, 2-7)"],
      [{ username: "erin", passkeys: [null] }, "passkeys[0]", "must be an object"],
      [{ username: "erin", passkeys: ["x"] }, "passkeys[0]", "must be an object"],
      [{ username: "erin", passkeys: [[]] }, "passkeys[0]", "must be an object"],
      [
        { username: "erin", passkeys: [{ ...passkey, extra: 1 }] },
        "passkeys[0].extra",
        "unknown field; accepted are id, publicKey, counter, transports, label, backupEligible, backupState",
      ],
      [{ username: "erin", passkeys: [{ ...passkey, id: "AQ=" }] }, "passkeys[0].id", "must be unpadded base64url"],
      [{ username: "erin", passkeys: [{ ...passkey, id: "!AQID" }] }, "passkeys[0].id", "must be unpadded base64url"],
      [{ username: "erin", passkeys: [{ ...passkey, id: "AQID!" }] }, "passkeys[0].id", "must be unpadded base64url"],
      [{ username: "erin", passkeys: [{ ...passkey, id: "AR" }] }, "passkeys[0].id", "must be unpadded base64url"],
      [{ username: "erin", passkeys: [{ ...passkey, id: "A" }] }, "passkeys[0].id", "must be unpadded base64url"],
      [
        { username: "erin", passkeys: [{ ...passkey, id: Buffer.alloc(1024, 1).toString("base64url") }] },
        "passkeys[0].id",
        "must be at most 1023 bytes",
      ],
      [{ username: "erin", passkeys: [{ ...passkey, publicKey: 7 }] }, "passkeys[0].publicKey", "must be a string"],
      ...[-1, 1.5, "3", maxRegistrationCounter + 1].map((counter): [unknown, string, string] => [
        { username: "erin", passkeys: [{ ...passkey, counter }] },
        "passkeys[0].counter",
        `must be a whole number from 0 to ${maxRegistrationCounter}`,
      ]),
      [{ username: "erin", passkeys: [{ ...passkey, transports: "usb" }] }, "passkeys[0].transports", "must be a list"],
      [
        { username: "erin", passkeys: [{ ...passkey, transports: ["usb", "USB"] }] },
        "passkeys[0].transports[1]",
        "must be a transport name such as usb, nfc, ble, internal or hybrid",
      ],
      [
        { username: "erin", passkeys: [{ ...passkey, transports: ["xusb!"] }] },
        "passkeys[0].transports[0]",
        "must be a transport name such as usb, nfc, ble, internal or hybrid",
      ],
      [
        { username: "erin", passkeys: [{ ...passkey, transports: ["!usb"] }] },
        "passkeys[0].transports[0]",
        "must be a transport name such as usb, nfc, ble, internal or hybrid",
      ],
      [
        { username: "erin", passkeys: [{ ...passkey, label: " " }] },
        "passkeys[0].label",
        "label must be 1 to 64 characters of visible text",
      ],
      [
        { username: "erin", passkeys: [{ ...passkey, backupEligible: "yes" }] },
        "passkeys[0].backupEligible",
        "must be true or false",
      ],
      [{ username: "erin", passkeys: [{ ...passkey, backupState: 1 }] }, "passkeys[0].backupState", "must be true or false"],
      [{ username: "erin", passkeys: [passkey, passkey] }, "passkeys", "hold the same credential id twice"],
      [{ username: "erin", identities: [null] }, "identities[0]", "must be an object"],
      [
        { username: "erin", identities: [{ provider: "github-", subject: "1", x: 1 }] },
        "identities[0].x",
        expect.stringMatching(/^unknown field/) as unknown as string,
      ],
      [
        { username: "erin", identities: [{ provider: "github!", subject: "1" }] },
        "identities[0].provider",
        expect.stringMatching(/^must be a provider name/) as unknown as string,
      ],
      [
        { username: "erin", identities: [{ provider: "github", subject: "s".repeat(256) }] },
        "identities[0].subject",
        "must be at most 255 characters",
      ],
      [
        { username: "erin", identities: [{ provider: "github", subject: "1", email: 7 }] },
        "identities[0].email",
        "must be a string",
      ],
      [
        { username: "erin", identities: [{ provider: "github", subject: "1", emailVerified: 1 }] },
        "identities[0].emailVerified",
        "must be true or false",
      ],
      [
        { username: "erin", identities: [{ provider: "github", subject: "1", emailVerified: true }] },
        "identities[0].emailVerified",
        "needs an email",
      ],
      [
        { username: "erin", identities: [{ provider: "github", subject: "1", email: " ", emailVerified: true }] },
        "identities[0].emailVerified",
        "needs an email",
      ],
      [
        { username: "erin", identities: [{ provider: "github", subject: "1", email: "no-at-sign" }] },
        "identities[0].email",
        "email must be an address with one @ between a name and a domain",
      ],
      [{ username: "erin", email: "no-at-sign" }, "email", "email must be an address with one @ between a name and a domain"],
      [
        {
          username: "erin",
          identities: [
            { provider: "github", subject: "1" },
            { provider: "github", subject: "1" },
          ],
        },
        "identities",
        "hold the same provider and subject twice",
      ],
    ];
    for (const [record, field, reason] of cases) {
      const { auth } = makeAuth();
      const { refusals } = await run(auth, [record]);
      expect(refusals, JSON.stringify(record).slice(0, 120)).toEqual([{ position: 1, field, reason }]);
    }
  });

  it("IM-1: null stands for an absent optional field, and each documented default and bound is taken as it is", async () => {
    const passkey = await exportedPasskey();
    const { auth, storage } = makeAuth();
    const { refusals, summary } = await run(auth, [
      {
        username: "nulls",
        id: null,
        email: null,
        emailVerified: null,
        roles: null,
        disabled: null,
        passwordHash: null,
        totpSecret: null,
        recoveryCodes: null,
        passkeys: null,
        identities: null,
      },
      { username: "padded", totpSecret: `${totpSecret}====`, recoveryCodes: twentyCodes.slice(0, 20) },
      {
        username: "keys",
        id: "keys-1",
        passkeys: [
          {
            ...passkey,
            counter: maxRegistrationCounter,
            transports: ["usb", "usb", "nfc"],
            label: null,
            backupEligible: true,
            backupState: true,
          },
        ],
        identities: [
          { provider: "github", subject: "😀".repeat(255), email: "  Dev@Example.com " },
          { provider: "gitlab", subject: "1", email: null, emailVerified: null },
        ],
      },
      { username: "one-id", passkeys: [{ id: Buffer.alloc(1023, 2).toString("base64url"), publicKey: passkey.publicKey }] },
    ]);
    expect(refusals).toEqual([]);
    expect(summary).toMatchObject({ imported: 4, refused: 0 });
    expect(await storage.users.findByUsernameKey("nulls")).toMatchObject({
      email: null,
      emailVerified: false,
      roles: [],
      disabled: false,
      passwordHash: null,
    });
    const padded = (await storage.users.findByUsernameKey("padded"))?.id as string;
    expect(await storage.totp.get(padded)).toMatchObject({ enabled: true });
    expect(await storage.recoveryCodes.count(padded)).toBe(20);
    expect(await storage.passkeys.findById(passkey.id)).toMatchObject({
      userId: "keys-1",
      counter: maxRegistrationCounter,
      transports: ["usb", "nfc"],
      label: "Passkey",
      backupEligible: true,
      backupState: true,
    });
    expect(await storage.identities.find("github", "😀".repeat(255))).toMatchObject({
      email: "dev@example.com",
      emailVerified: false,
    });
    expect(await storage.identities.find("gitlab", "1")).toMatchObject({ email: null, emailVerified: false });
  });

  it("IM-1: a passkey's flags and counter default to false and 0", async () => {
    const passkey = await exportedPasskey();
    const { auth, storage } = makeAuth();
    await run(auth, [{ username: "defaults", passkeys: [passkey] }]);
    expect(await storage.passkeys.findById(passkey.id)).toMatchObject({
      counter: 0,
      transports: [],
      backupEligible: false,
      backupState: false,
    });
  });

  it("WA-3: an imported passkey that says it is backed up but not backup-eligible is refused, naming backupState, as registration refuses it", async () => {
    const passkey = await exportedPasskey();
    const { auth, storage } = makeAuth();
    const { summary, refusals } = await run(auth, [
      { username: "erin", passkeys: [{ ...passkey, backupEligible: false, backupState: true }] },
      { username: "fay", passkeys: [{ ...passkey, backupState: true }] },
    ]);
    expect(refusals).toEqual([
      { position: 1, field: "passkeys[0].backupState", reason: "cannot be true when backupEligible is false (WA-3)" },
      { position: 2, field: "passkeys[0].backupState", reason: "cannot be true when backupEligible is false (WA-3)" },
    ]);
    expect(summary).toMatchObject({ imported: 0, refused: 2 });
    expect(await storage.passkeys.findById(passkey.id)).toBeNull();
    for (const [backupEligible, backupState] of [
      [true, true],
      [true, false],
      [false, false],
    ]) {
      const other = makeAuth();
      expect(
        (await run(other.auth, [{ username: "gil", passkeys: [{ ...passkey, backupEligible, backupState }] }])).refusals,
      ).toEqual([]);
      expect(await other.storage.passkeys.findById(passkey.id)).toMatchObject({ backupEligible, backupState });
    }
  });

  it("a refusal is counted under its field without list positions, also without onRefused", async () => {
    const { auth } = makeAuth();
    const summary = await importUsers(auth, [
      { username: "a", passkeys: [null] },
      { username: "b", passkeys: [null] },
      { username: "c", identities: [{}, null] },
      {
        username: "d",
        identities: [...Array.from({ length: 10 }, (_, index) => ({ provider: "github", subject: `${index}` })), null],
      },
    ]);
    expect(summary.refusedByReason).toEqual({
      "passkeys[]: must be an object": 2,
      "identities[].provider: is required": 1,
      "identities[]: must be an object": 1,
    });
  });

  it("importUsers refuses a concurrency that is not a whole number of at least 1; 1 imports one record at a time", async () => {
    const { auth } = makeAuth();
    for (const concurrency of [0, -1, 1.5, Number.NaN]) {
      await expect(importUsers(auth, [{ username: "x" }], { concurrency })).rejects.toThrow(
        new TypeError("importUsers: concurrency must be a whole number of at least 1"),
      );
    }
    expect((await importUsers(auth, [{ username: "x" }, { username: "y" }], { concurrency: 1 })).imported).toBe(2);
  });
});

describe("importUsers: other data, and records that share a key", () => {
  it("IM-1: an existing account differing in any one thing an import writes is skipped, or incomplete when it lacks a factor of the record; never changed", async () => {
    const passkey = await exportedPasskey();
    const second = await exportedPasskey("second");
    const other = await exportedPasskey("other");
    const base: ImportedUser = {
      username: "Alice",
      id: "alice-1",
      email: "alice@example.com",
      emailVerified: true,
      roles: ["admin", "billing"],
      passwordHash: bcryptOfGoodPassword,
      totpSecret,
      recoveryCodes,
      passkeys: [passkey, second],
      identities: [
        { provider: "github", subject: "1" },
        { provider: "gitlab", subject: "1" },
      ],
    };
    const changes: Partial<ImportedUser>[] = [
      { id: "alice-2" },
      { username: "ALICE" },
      { email: "Alice@example.com" },
      { roles: ["admin", "ops"] },
      { emailVerified: false },
      { disabled: true },
      { recoveryCodes: [recoveryCodes[0] as string] },
      { recoveryCodes: [recoveryCodes[0] as string, "ZZZZ-ZZZZ-ZZZZ-ZZZZ"] },
      { totpSecret: "KRSXG5DSNFXGOIDUN5ZHI2LOM5ZXI6LZ" },
      { passkeys: [passkey] },
      { passkeys: [passkey, { id: second.id, publicKey: other.publicKey }] },
      // The key of the account's other passkey in its place: each passkey must hold its own key.
      { passkeys: [passkey, { id: second.id, publicKey: passkey.publicKey }] },
      { identities: [{ provider: "github", subject: "1" }] },
    ];
    // The account lacks what these carry: incomplete (IM-1), and left as it is too.
    const lacking: Partial<ImportedUser>[] = [
      { passkeys: [passkey, other] },
      {
        identities: [
          { provider: "github", subject: "1" },
          { provider: "gitlab", subject: "2" },
        ],
      },
      {
        identities: [
          { provider: "github", subject: "1" },
          { provider: "gitea", subject: "1" },
        ],
      },
    ];
    const { auth, storage } = makeAuth();
    await run(auth, [base]);
    const before = JSON.stringify(await storage.users.findByUsernameKey("alice"));
    for (const change of changes) {
      const { summary } = await run(auth, [{ ...base, ...change }]);
      expect(summary, JSON.stringify(change)).toMatchObject({ skipped: 1, incomplete: 0, unchanged: 0, imported: 0 });
    }
    for (const change of lacking) {
      const { summary } = await run(auth, [{ ...base, ...change }]);
      expect(summary, JSON.stringify(change)).toMatchObject({ skipped: 0, incomplete: 1, unchanged: 0, imported: 0 });
    }
    expect((await run(auth, [base])).summary).toMatchObject({ unchanged: 1 });
    expect(JSON.stringify(await storage.users.findByUsernameKey("alice"))).toBe(before);
  });

  it("IM-1: an account whose TOTP is pending, or that is a directory account, is other data", async () => {
    const { auth, storage } = makeAuth();
    await run(auth, [{ username: "pending" }, { username: "ldap-user" }]);
    const pending = (await storage.users.findByUsernameKey("pending"))?.id as string;
    await storage.totp.putPending({
      userId: pending,
      secret: { sealed: "x", keyId: "k" } as never,
      enabled: false,
      lastUsedStep: -1,
      createdAt: 0,
    });
    expect((await run(auth, [{ username: "pending" }])).summary.skipped).toBe(1);
    const ldap = (await storage.users.findByUsernameKey("ldap-user")) as NonNullable<
      Awaited<ReturnType<typeof storage.users.findByUsernameKey>>
    >;
    const directoryStorage = memoryStorage();
    await directoryStorage.users.create({ ...ldap, source: "directory" });
    const directoryAuth = makeAuth({ storage: directoryStorage }).auth;
    expect((await run(directoryAuth, [{ username: "ldap-user", id: ldap.id }])).summary.skipped).toBe(1);
  });

  it("IM-1, EV-1, WA-6, OA-7: records of one input that share an id, verified address, credential id or link, handled concurrently, write the first only", async () => {
    const passkey = await exportedPasskey();
    const { auth, storage } = makeAuth();
    const { refusals, summary } = await run(auth, [
      { username: "i1", id: "shared-id" },
      { username: "i2", id: "shared-id" },
      { username: "e1", email: "shared@example.com", emailVerified: true },
      { username: "e2", email: "SHARED@example.com", emailVerified: true },
      { username: "p1", passkeys: [passkey] },
      { username: "p2", passkeys: [passkey] },
      { username: "l1", identities: [{ provider: "github", subject: "9" }] },
      { username: "l2", identities: [{ provider: "github", subject: "9" }] },
      { username: "u1", email: "unverified@example.com" },
      { username: "u2", email: "unverified@example.com" },
    ]);
    expect(refusals.map(({ position, field, reason }) => [position, field, reason])).toEqual([
      [2, "id", "is another user's id"],
      [4, "email", "is verified on another account"],
      [6, "passkeys[0].id", "is registered to another account"],
      [8, "identities[0]", "is linked to another account"],
    ]);
    expect(summary).toMatchObject({ imported: 6, refused: 4 });
    for (const username of ["i2", "e2", "p2", "l2"]) expect(await storage.users.findByUsernameKey(username)).toBeNull();
  });
});

/** Memory storage whose `createAccount` of the users `slow` names lets the event loop turn 20 times first: a write that takes a while. */
function slowWrites(slow: (account: Parameters<Storage["users"]["createAccount"]>[0]) => boolean) {
  const storage = memoryStorage();
  const slowed: Storage = {
    ...storage,
    users: {
      ...storage.users,
      async createAccount(account) {
        if (slow(account)) for (let turn = 0; turn < 20; turn += 1) await new Promise((resolve) => setImmediate(resolve));
        return storage.users.createAccount(account);
      },
    },
  };
  return { storage, auth: makeAuth({ storage: slowed }).auth };
}

describe("importUsers: records that share a key keep the file's order, however slow a write", () => {
  it("IM-1, EV-1, WA-6, OA-7: the first of two records sharing a username, id, verified address, credential id or link is written though its write is slow; the second waits and is skipped or refused", async () => {
    const passkey = await exportedPasskey();
    const { auth, storage } = slowWrites((account) => account.user.roles.includes("first"));
    const first = { roles: ["first"] };
    const refusals: ImportRefusal[] = [];
    const skips: unknown[] = [];
    const summary = await importUsers(
      auth,
      [
        { username: "twin", ...first },
        { username: "twin" },
        { username: "i1", id: "shared-id", ...first },
        { username: "i2", id: "shared-id" },
        { username: "e1", email: "shared@example.com", emailVerified: true, ...first },
        { username: "e2", email: "shared@example.com", emailVerified: true },
        { username: "p1", passkeys: [passkey], ...first },
        { username: "p2", passkeys: [passkey] },
        { username: "l1", identities: [{ provider: "github", subject: "9" }], ...first },
        { username: "l2", identities: [{ provider: "github", subject: "9" }] },
      ],
      { onRefused: (refusal) => refusals.push(refusal), onSkipped: (skip) => skips.push(skip) },
    );
    expect(summary).toMatchObject({ imported: 5, skipped: 1, refused: 4 });
    expect(skips).toEqual([{ position: 2, username: "twin", reason: existsWithOtherData }]);
    expect(refusals.map(({ position, field }) => [position, field])).toEqual([
      [4, "id"],
      [6, "email"],
      [8, "passkeys[0].id"],
      [10, "identities[0]"],
    ]);
    expect((await storage.users.findByUsernameKey("twin"))?.roles).toEqual(["first"]);
  });

  it("IM-1: a record that ends without writing hands its key on: the next record sharing it waits for the one after, not for it", async () => {
    // With two records in hand: a1 (skipped, its username taken) and b, which waits for a1's id
    // claim; once a1 is done, c is read while b's write is slow, and must wait for b.
    const { auth, storage } = slowWrites((account) => account.user.username === "b");
    await importUsers(auth, [{ username: "a1", roles: ["old"] }]);
    const refusals: ImportRefusal[] = [];
    const summary = await importUsers(
      auth,
      [
        { username: "a1", id: "shared-id" },
        { username: "b", id: "shared-id" },
        { username: "c", id: "shared-id" },
      ],
      { concurrency: 2, onRefused: (refusal) => refusals.push(refusal) },
    );
    expect(summary).toMatchObject({ imported: 1, skipped: 1, refused: 1 });
    expect(refusals).toEqual([{ position: 3, field: "id", reason: "is another user's id" }]);
    expect((await storage.users.findById("shared-id"))?.username).toBe("b");
  });
});

describe("importUsers: a user and everything it owns, as one (IM-1)", () => {
  /** A storage whose every separate write of a user or a factor is recorded (the import must make none). */
  function recordingSeparateWrites(storage: Storage, createAccount: Storage["users"]["createAccount"]) {
    const separate: string[] = [];
    const noted =
      <A extends unknown[], R>(name: string, write: (...args: A) => Promise<R>) =>
      (...args: A) => {
        separate.push(name);
        return write(...args);
      };
    const wrapped: Storage = {
      ...storage,
      users: { ...storage.users, create: noted("users.create", storage.users.create), createAccount },
      totp: {
        ...storage.totp,
        putPending: noted("totp.putPending", storage.totp.putPending),
        enable: noted("totp.enable", storage.totp.enable),
      },
      recoveryCodes: { ...storage.recoveryCodes, replace: noted("recoveryCodes.replace", storage.recoveryCodes.replace) },
      passkeys: { ...storage.passkeys, create: noted("passkeys.create", storage.passkeys.create) },
      identities: { ...storage.identities, link: noted("identities.link", storage.identities.link) },
    };
    return { wrapped, separate };
  }

  it("IM-1: each record is written by one users.createAccount holding the user and all its factors; a storage failing there leaves nothing of it", async () => {
    const passkey = await exportedPasskey();
    const record: ImportedUser = {
      ...full,
      id: "alice-1",
      totpSecret,
      recoveryCodes,
      passkeys: [passkey],
      identities: [{ provider: "github", subject: "1" }],
    };
    const storage = memoryStorage();
    const accounts: unknown[] = [];
    const working = recordingSeparateWrites(storage, async (account) => {
      accounts.push(account);
      return storage.users.createAccount(account);
    });
    const { auth } = makeAuth({ storage: working.wrapped });
    expect((await run(auth, [record])).summary.imported).toBe(1);
    expect(working.separate).toEqual([]);
    expect(accounts).toEqual([
      {
        user: expect.objectContaining({ id: "alice-1", username: "Alice", passwordHash: `imported:${bcryptOfGoodPassword}` }),
        totp: {
          secret: expect.objectContaining({ sealed: expect.any(String) }),
          enabled: true,
          lastUsedStep: -1,
          createdAt: auth.now(),
        },
        recoveryCodeHashes: ["ABCDEFGHJKMNPQRS", "0123456789ABCDEF"].map((code) => hashRecoveryCode("alice-1", code)),
        passkeys: [expect.objectContaining({ id: passkey.id, publicKey: passkey.publicKey })],
        identities: [expect.objectContaining({ provider: "github", subject: "1" })],
      },
    ]);
    const userId = "alice-1";
    expect(await storage.totp.get(userId)).toMatchObject({ enabled: true });
    expect(await storage.recoveryCodes.count(userId)).toBe(2);
    expect(await storage.passkeys.listByUser(userId)).toHaveLength(1);
    expect(await storage.identities.listByUser(userId)).toHaveLength(1);

    const empty = memoryStorage();
    const lost = new Error("connection lost");
    const failing = recordingSeparateWrites(empty, async () => {
      throw lost;
    });
    await expect(importUsers(makeAuth({ storage: failing.wrapped }).auth, [record])).rejects.toBe(lost);
    expect(failing.separate).toEqual([]);
    expect(await empty.users.findById("alice-1")).toBeNull();
    expect(await empty.passkeys.findById(passkey.id)).toBeNull();
  });

  it("IM-1: a key another writer takes between the checks and the write (createAccount false) decides the record again: unchanged, refused or other data", async () => {
    const storage = memoryStorage();
    let race: (() => Promise<unknown>) | null = null;
    const racing: Storage = {
      ...storage,
      users: {
        ...storage.users,
        async createAccount(account) {
          const write = race;
          race = null;
          await write?.();
          return storage.users.createAccount(account);
        },
      },
    };
    const { auth } = makeAuth({ storage: racing });
    const other = makeAuth({ storage }).auth;
    // The same record, written by a second import of the same file meanwhile: unchanged.
    race = () => importUsers(other, [{ username: "same", totpSecret }]);
    expect((await run(auth, [{ username: "same", totpSecret }])).summary).toMatchObject({ imported: 0, unchanged: 1 });
    // Another account took its id meanwhile: refused, naming the id.
    race = () => importUsers(other, [{ username: "holder", id: "taken-id" }]);
    const taken = await run(auth, [{ username: "late", id: "taken-id" }]);
    expect(taken.refusals).toEqual([{ position: 1, field: "id", reason: "is another user's id" }]);
    // A store that refuses for a reason the checks cannot see: refused whole, nothing written.
    const refusing: Storage = { ...storage, users: { ...storage.users, createAccount: async () => false } };
    const refused = await run(makeAuth({ storage: refusing }).auth, [{ username: "ghost" }]);
    expect(refused.refusals).toEqual([
      {
        position: 1,
        field: "record",
        reason: "another account took its username, id, address, credential id or link as it was written",
      },
    ]);
    expect(await storage.users.findByUsernameKey("ghost")).toBeNull();
  });

  it("IM-1: an existing account without a factor its record carries is reported as incomplete, naming each missing factor, and left as it is; never 'exists with different data'", async () => {
    const passkey = await exportedPasskey();
    const record: ImportedUser = {
      username: "Alice",
      passwordHash: bcryptOfGoodPassword,
      totpSecret,
      recoveryCodes,
      passkeys: [passkey],
      identities: [
        { provider: "github", subject: "1" },
        { provider: "gitlab", subject: "2" },
      ],
    };
    /** What the previous release could leave when cut after the user row: the user, and the factors named. */
    const cases: [string, (storage: Storage, userId: string) => Promise<unknown>, string[]][] = [
      [
        "the user row alone",
        async (storage, userId) => {
          await storage.totp.remove(userId);
          await storage.recoveryCodes.removeAll(userId);
          await storage.passkeys.delete(userId, passkey.id);
          await storage.identities.unlink(userId, "github", "1");
          await storage.identities.unlink(userId, "gitlab", "2");
        },
        ["totpSecret", "recoveryCodes", "passkeys[0]", "identities[0]", "identities[1]"],
      ],
      [
        "a pending TOTP factor, not yet enabled",
        async (storage, userId) => {
          const totp = await storage.totp.get(userId);
          await storage.totp.remove(userId);
          await storage.totp.putPending({ ...(totp as NonNullable<typeof totp>), enabled: false });
          await storage.recoveryCodes.removeAll(userId);
        },
        ["totpSecret", "recoveryCodes"],
      ],
      ["TOTP without its recovery codes", (storage, userId) => storage.recoveryCodes.removeAll(userId), ["recoveryCodes"]],
      ["all but the last link", (storage, userId) => storage.identities.unlink(userId, "gitlab", "2"), ["identities[1]"]],
    ];
    for (const [what, cut, missing] of cases) {
      const { auth, storage } = makeAuth();
      await run(auth, [record]);
      const userId = (await storage.users.findByUsernameKey("alice"))?.id as string;
      await cut(storage, userId);
      const before = JSON.stringify([
        await storage.users.findById(userId),
        await storage.totp.get(userId),
        await storage.recoveryCodes.count(userId),
        await storage.passkeys.listByUser(userId),
        await storage.identities.listByUser(userId),
      ]);
      for (const dryRun of [true, false]) {
        const reports: ImportIncomplete[] = [];
        const skips: unknown[] = [];
        const summary = await importUsers(auth, [{ username: "bob" }, record], {
          dryRun,
          onIncomplete: (report) => reports.push(report),
          onSkipped: (skip) => skips.push(skip),
        });
        expect(summary, what).toMatchObject({ read: 2, imported: 1, unchanged: 0, skipped: 0, refused: 0, incomplete: 1 });
        expect(reports, what).toEqual([{ position: 2, username: "Alice", reason: existsWithoutItsFactors, missing }]);
        expect(skips).toEqual([]);
      }
      expect(
        JSON.stringify([
          await storage.users.findById(userId),
          await storage.totp.get(userId),
          await storage.recoveryCodes.count(userId),
          await storage.passkeys.listByUser(userId),
          await storage.identities.listByUser(userId),
        ]),
        what,
      ).toBe(before);
    }
  });

  it("IM-1: an incomplete account that signed in since (its password re-hashed to argon2id) is still reported as incomplete", async () => {
    const { auth, storage } = makeAuth();
    await run(auth, [{ username: "alice", passwordHash: bcryptOfGoodPassword, totpSecret, recoveryCodes }]);
    const userId = (await storage.users.findByUsernameKey("alice"))?.id as string;
    await storage.totp.remove(userId);
    await storage.recoveryCodes.removeAll(userId);
    // What made it dangerous: the password alone signs in, and the first sign-in re-hashes it.
    expect((await passwordLogin(auth, "alice")).status).toBe("authenticated");
    expect((await storage.users.findById(userId))?.passwordHash).toMatch(/^\$argon2id\$/);
    const reports: ImportIncomplete[] = [];
    const summary = await importUsers(
      auth,
      [{ username: "alice", passwordHash: bcryptOfGoodPassword, totpSecret, recoveryCodes }],
      { onIncomplete: (report) => reports.push(report) },
    );
    expect(summary).toMatchObject({ incomplete: 1, skipped: 0, skippedByReason: {} });
    expect(reports.map((report) => report.missing)).toEqual([["totpSecret", "recoveryCodes"]]);
  });

  it("IM-1: an account with every factor of its record, or more, is not incomplete; one with other factors in their place is other data", async () => {
    const { auth, storage } = makeAuth();
    await run(auth, [
      { username: "alice", totpSecret, recoveryCodes },
      { username: "bob", id: "bob-1" },
    ]);
    const userId = (await storage.users.findByUsernameKey("alice"))?.id as string;
    // A code used since: the rest remain, nothing is missing.
    await storage.recoveryCodes.consume(userId, hashRecoveryCode(userId, "ABCDEFGHJKMNPQRS"));
    expect((await run(auth, [{ username: "alice", totpSecret, recoveryCodes }])).summary).toMatchObject({
      incomplete: 0,
      skipped: 1,
    });
    // A record with fewer factors than the account holds.
    expect((await run(auth, [{ username: "alice" }])).summary).toMatchObject({ incomplete: 0, skipped: 1 });
    // Another account of the same username (another id, or a directory account): other data, whatever it lacks.
    expect((await run(auth, [{ username: "bob", id: "bob-2", totpSecret }])).summary).toMatchObject({
      incomplete: 0,
      skipped: 1,
    });
  });
});
