import { randomBytes } from "node:crypto";
import type { SoftwareAuthenticator } from "@portcullis/testing";
import { describe, expect, it, vi } from "vitest";
import { ErrorCode } from "../errors/codes.js";
import { memoryStorage } from "../storage/memory.js";
import type { PasskeyRecord, UserRecord } from "../storage/types.js";
import { startSession } from "../tokens/issue-tokens.js";
import { createUser } from "./create-user.js";
import {
  type Harness,
  addUser,
  authError,
  generousThrottle,
  goodPassword,
  makeAuth,
  outcome,
  signIn,
  slowStorage,
  tally,
} from "./fixtures.test-support.js";
import { setUserDisabled } from "./manage-users.js";
import { listPasskeys, renamePasskey, revokePasskey } from "./passkey-management.js";
import { makeAuthenticator, makePasskeyAuth, passkeySignIn, registerPasskey } from "./passkeys.test-support.js";
import { refresh } from "./refresh.js";
import { expectOnlyCurrentSessionLives, twoSessions } from "./sessions.test-support.js";
import { verifyAccessToken } from "./verify-access-token.js";
import { webauthnRegisterBegin, webauthnRegisterFinish } from "./webauthn-register.js";

const tokenVersionOf = async (harness: Harness, userId: string) =>
  (await harness.storage.users.findById(userId))?.tokenVersion as number;

/** The session id of a sign-in started now, as an OAuth or passkey sign-in would start it. */
async function freshSessionId(harness: Harness, userId: string): Promise<string> {
  const user = (await harness.storage.users.findById(userId)) as UserRecord;
  const tokens = await startSession(harness.auth, user, ["fed"]);
  return (await verifyAccessToken(harness.auth, { token: tokens.accessToken })).sessionId;
}

/** Registers a passkey for an account without a password, proven by a sign-in of a moment ago. */
async function registerWithoutPassword(
  harness: Harness,
  userId: string,
  authenticator: SoftwareAuthenticator = makeAuthenticator(),
  label = "Phone",
) {
  const sessionId = await freshSessionId(harness, userId);
  const { ceremonyId, options } = await webauthnRegisterBegin(harness.auth, { userId, sessionId, label });
  return webauthnRegisterFinish(harness.auth, { userId, ceremonyId, response: authenticator.register(options) });
}

/** A local account created without a password: passkeys (or an external identity) are its only way in. */
async function passwordlessUser(harness: Harness, username: string): Promise<string> {
  const user = await createUser(harness.auth, { username });
  expect(user.hasPassword).toBe(false);
  return user.id;
}

/** A directory account: no local password hash, but it signs in through the directory. */
async function directoryUser(harness: Harness, username: string): Promise<string> {
  const now = harness.clock.now;
  const id = `directory-${username}`;
  const record: UserRecord = {
    id,
    username,
    usernameKey: username,
    passwordHash: null,
    roles: [],
    disabled: false,
    tokenVersion: 0,
    source: "directory",
    email: null,
    emailVerified: false,
    createdAt: now,
    updatedAt: now,
  };
  expect(await harness.storage.users.create(record)).toBe(true);
  return id;
}

async function linkIdentity(harness: Harness, userId: string) {
  const linked = await harness.storage.identities.link({
    provider: "github",
    subject: `subject-of-${userId}`,
    userId,
    email: null,
    emailVerified: false,
    createdAt: harness.clock.now,
    lastUsedAt: null,
  });
  expect(linked).toBe(true);
}

/** A stored passkey record made directly, for tests of ordering only. */
function storedRecord(userId: string, createdAt: number, id = Buffer.from(randomBytes(16)).toString("base64url")): PasskeyRecord {
  return {
    id,
    userId,
    publicKey: Buffer.from(randomBytes(77)).toString("base64url"),
    counter: 0,
    transports: ["internal"],
    label: `made at ${createdAt}`,
    backupEligible: false,
    backupState: false,
    createdAt,
    lastUsedAt: null,
  };
}

const badIds = [
  "abc+def",
  "abc/def",
  "abc=",
  "../etc/passwd",
  "a b",
  "ab\u0000c",
  "Zm9v%3D",
  "A".repeat(1367),
  "A".repeat(100_000),
];

describe("listPasskeys", () => {
  it("WA-6: lists the caller's passkeys oldest first (ties by id), and no one else's", async () => {
    const harness = makePasskeyAuth({ throttle: generousThrottle });
    const userId = await addUser(harness.auth, "lister");
    const otherId = await addUser(harness.auth, "other-lister");
    const t = harness.clock.now;
    const late = storedRecord(userId, t + 3000);
    const early = storedRecord(userId, t + 1000);
    const tieB = storedRecord(userId, t + 2000, "bbbb");
    const tieA = storedRecord(userId, t + 2000, "aaaa");
    for (const record of [late, early, storedRecord(otherId, t), tieB, tieA]) {
      expect(await harness.storage.passkeys.create(record)).toBe(true);
    }
    harness.clock.advance(10_000);
    const real = await registerPasskey(harness.auth, userId, makeAuthenticator());
    const listed = await listPasskeys(harness.auth, { userId });
    expect(listed.map((passkey) => passkey.id)).toEqual([early.id, tieA.id, tieB.id, late.id, real.id]);
    expect(listed[4]).toEqual(real);
    for (const passkey of listed) {
      expect(Object.keys(passkey).sort()).toEqual(
        ["backupEligible", "backupState", "createdAt", "id", "label", "lastUsedAt", "transports"].sort(),
      );
    }
    expect(JSON.stringify(listed)).not.toContain(late.publicKey);
    expect(await listPasskeys(harness.auth, { userId: otherId })).toHaveLength(1);
    expect(await listPasskeys(harness.auth, { userId: await addUser(harness.auth, "nobody-has-one") })).toEqual([]);
  });

  it("WA-6: lastUsedAt is set once the passkey signs in", async () => {
    const harness = makePasskeyAuth();
    const userId = await addUser(harness.auth, "user-of-passkey");
    const authenticator = makeAuthenticator();
    await registerPasskey(harness.auth, userId, authenticator);
    harness.clock.advance(60_000);
    await passkeySignIn(harness.auth, authenticator);
    const [passkey] = await listPasskeys(harness.auth, { userId });
    expect(passkey?.lastUsedAt).toBe(harness.clock.now);
  });
});

describe("renamePasskey", () => {
  it("WA-6: renames the passkey (trimmed, NFC) without raising the token version, and says so in an event", async () => {
    const harness = makePasskeyAuth();
    const userId = await addUser(harness.auth, "renamer");
    const passkey = await registerPasskey(harness.auth, userId, makeAuthenticator());
    const tokens = await signIn(harness, "renamer");
    const version = await tokenVersionOf(harness, userId);
    harness.events.length = 0;
    await renamePasskey(harness.auth, { userId, id: passkey.id, label: "  Cafe\u0301 laptop " });
    expect(harness.events).toEqual([{ type: "passkey.renamed", userId, credentialId: passkey.id, at: harness.clock.now }]);
    expect((await listPasskeys(harness.auth, { userId }))[0]?.label).toBe("Caf\u00e9 laptop");
    expect(await tokenVersionOf(harness, userId)).toBe(version);
    await verifyAccessToken(harness.auth, { token: tokens.accessToken });
    await refresh(harness.auth, { refreshToken: tokens.refreshToken });
  });

  it("WA-6: a label must be 1 to 64 characters without control characters", async () => {
    const harness = makePasskeyAuth();
    const userId = await addUser(harness.auth, "label-rules");
    const passkey = await registerPasskey(harness.auth, userId, makeAuthenticator(), "Original");
    const rename = (label: unknown) => renamePasskey(harness.auth, { userId, id: passkey.id, label: label as string });
    for (const label of ["   ", "\t\n", "x".repeat(65), "Lap\u0007top", "Lap\ntop", "\ud800"]) {
      expect(await outcome(rename(label))).toBe(ErrorCode.ValidationFailed);
    }
    for (const label of [42, ["Laptop"], { $ne: "" }, true]) {
      expect(await outcome(rename(label))).toBe(ErrorCode.MalformedParameter);
    }
    expect(await outcome(rename(""))).toBe(ErrorCode.MissingParameter);
    expect(await outcome(rename(undefined))).toBe(ErrorCode.MissingParameter);
    expect((await harness.storage.passkeys.findById(passkey.id))?.label).toBe("Original");
    await rename("x".repeat(64));
    expect((await harness.storage.passkeys.findById(passkey.id))?.label).toBe("x".repeat(64));
  });

  it("WA-6: a rename to a label with a bidi mark, a zero-width space or a line separator is 42200 and changes nothing", async () => {
    const harness = makePasskeyAuth();
    const userId = await addUser(harness.auth, "invisible-rename");
    const passkey = await registerPasskey(harness.auth, userId, makeAuthenticator(), "Original");
    harness.events.length = 0;
    for (const label of ["Lap\u200Ftop", "Lap\u200Btop", "Lap\u2028top", "Lap\u061Ctop"]) {
      const refused = await authError(renamePasskey(harness.auth, { userId, id: passkey.id, label }));
      expect(refused.code, JSON.stringify(label)).toBe(ErrorCode.ValidationFailed);
    }
    expect((await harness.storage.passkeys.findById(passkey.id))?.label).toBe("Original");
    expect(harness.events).toEqual([]);
  });

  it("ST-2: another user's passkey is not found, and stays as it was", async () => {
    const harness = makePasskeyAuth();
    const ownerId = await addUser(harness.auth, "owner");
    const intruderId = await addUser(harness.auth, "intruder");
    await registerPasskey(harness.auth, intruderId, makeAuthenticator());
    const passkey = await registerPasskey(harness.auth, ownerId, makeAuthenticator(), "Mine");
    const before = await harness.storage.passkeys.findById(passkey.id);
    harness.events.length = 0;
    expect(await outcome(renamePasskey(harness.auth, { userId: intruderId, id: passkey.id, label: "Pwned" }))).toBe(
      ErrorCode.NotFound,
    );
    expect(await harness.storage.passkeys.findById(passkey.id)).toEqual(before);
    expect(harness.events).toEqual([]);
  });

  it("ST-2: an id that is unknown, not base64url or huge is 40400 without a storage write; a non-string is 40002", async () => {
    const harness = makePasskeyAuth();
    const userId = await addUser(harness.auth, "odd-ids");
    await registerPasskey(harness.auth, userId, makeAuthenticator());
    const rename = vi.spyOn(harness.storage.passkeys, "rename");
    for (const id of badIds) {
      expect(await outcome(renamePasskey(harness.auth, { userId, id, label: "New" }))).toBe(ErrorCode.NotFound);
    }
    expect(rename).not.toHaveBeenCalled();
    expect(await outcome(renamePasskey(harness.auth, { userId, id: "dW5rbm93bg", label: "New" }))).toBe(ErrorCode.NotFound);
    expect(await outcome(renamePasskey(harness.auth, { userId, id: 7 as unknown as string, label: "New" }))).toBe(
      ErrorCode.MalformedParameter,
    );
    rename.mockRestore();
  });
});

describe("revokePasskey", () => {
  it("SE-2: revoking with no session given deletes the passkey and ends every session, the token version unmoved", async () => {
    const harness = makePasskeyAuth();
    const userId = await addUser(harness.auth, "revoker");
    const authenticator = makeAuthenticator();
    const passkey = await registerPasskey(harness.auth, userId, authenticator);
    const stored = await harness.storage.passkeys.findById(passkey.id);
    const tokens = await signIn(harness, "revoker");
    const version = await tokenVersionOf(harness, userId);
    harness.events.length = 0;
    await revokePasskey(harness.auth, { userId, id: passkey.id, password: goodPassword });
    expect(harness.events).toEqual([
      { type: "sessions.ended", userId, keptSessionId: null, count: 1, reason: "passkey_revoked", at: harness.clock.now },
      { type: "passkey.revoked", userId, credentialId: passkey.id, at: harness.clock.now },
    ]);
    expect(JSON.stringify(harness.events)).not.toContain(stored?.publicKey);
    expect(await harness.storage.passkeys.findById(passkey.id)).toBeNull();
    expect(await listPasskeys(harness.auth, { userId })).toEqual([]);
    expect(await tokenVersionOf(harness, userId)).toBe(version);
    expect(await outcome(verifyAccessToken(harness.auth, { token: tokens.accessToken }))).toBe(ErrorCode.InvalidToken);
    expect(await outcome(refresh(harness.auth, { refreshToken: tokens.refreshToken }))).toBe(ErrorCode.InvalidToken);
    expect(await outcome(passkeySignIn(harness.auth, authenticator))).toBe(ErrorCode.AuthenticationFailed);
    expect(await outcome(revokePasskey(harness.auth, { userId, id: passkey.id, password: goodPassword }))).toBe(
      ErrorCode.NotFound,
    );
  });

  it("SE-2: revoking from a session ends the user's other sessions; this one's access and refresh tokens go on working", async () => {
    const harness = makePasskeyAuth();
    const userId = await addUser(harness.auth, "se2-revoker");
    const passkey = await registerPasskey(harness.auth, userId, makeAuthenticator());
    const before = await twoSessions(harness, userId, "se2-revoker");
    await revokePasskey(harness.auth, { userId, sessionId: before.current.sessionId, id: passkey.id });
    await expectOnlyCurrentSessionLives(harness, before, "passkey_revoked");
    expect(await harness.storage.passkeys.findById(passkey.id)).toBeNull();
  });

  it("ST-2: another user's passkey is not found; nothing changes for either user", async () => {
    const harness = makePasskeyAuth();
    const ownerId = await addUser(harness.auth, "keeper");
    const intruderId = await addUser(harness.auth, "thief");
    const passkey = await registerPasskey(harness.auth, ownerId, makeAuthenticator());
    await registerPasskey(harness.auth, intruderId, makeAuthenticator());
    const before = await harness.storage.passkeys.findById(passkey.id);
    const versions = [await tokenVersionOf(harness, ownerId), await tokenVersionOf(harness, intruderId)];
    harness.events.length = 0;
    const proven = { userId: intruderId, id: passkey.id, password: goodPassword };
    expect(await outcome(revokePasskey(harness.auth, proven))).toBe(ErrorCode.NotFound);
    expect(await harness.storage.passkeys.findById(passkey.id)).toEqual(before);
    expect([await tokenVersionOf(harness, ownerId), await tokenVersionOf(harness, intruderId)]).toEqual(versions);
    expect(harness.events).toEqual([]);
  });

  it("ST-2: the other user's passkey is not found even when the caller's passkeys are its only way in", async () => {
    const harness = makePasskeyAuth();
    const ownerId = await passwordlessUser(harness, "owner-no-password");
    const intruderId = await passwordlessUser(harness, "intruder-no-password");
    const passkey = await registerWithoutPassword(harness, ownerId);
    await registerWithoutPassword(harness, ownerId);
    await registerWithoutPassword(harness, intruderId);
    await registerWithoutPassword(harness, intruderId);
    const sessionId = await freshSessionId(harness, intruderId);
    expect(await outcome(revokePasskey(harness.auth, { userId: intruderId, sessionId, id: passkey.id }))).toBe(
      ErrorCode.NotFound,
    );
    expect(await harness.storage.passkeys.findById(passkey.id)).not.toBeNull();
    expect(await harness.storage.passkeys.listByUser(intruderId)).toHaveLength(2);
  });

  it("ST-2: an id that is unknown, not base64url or huge is 40400 without a storage write; a non-string is 40002", async () => {
    const harness = makePasskeyAuth();
    const userId = await addUser(harness.auth, "odd-revocations");
    await registerPasskey(harness.auth, userId, makeAuthenticator());
    const version = await tokenVersionOf(harness, userId);
    const remove = vi.spyOn(harness.storage.passkeys, "delete");
    const removeUnlessLast = vi.spyOn(harness.storage.passkeys, "deleteUnlessLast");
    for (const id of badIds) {
      expect(await outcome(revokePasskey(harness.auth, { userId, id, password: goodPassword }))).toBe(ErrorCode.NotFound);
    }
    expect(remove).not.toHaveBeenCalled();
    expect(removeUnlessLast).not.toHaveBeenCalled();
    expect(await outcome(revokePasskey(harness.auth, { userId, id: "dW5rbm93bg", password: goodPassword }))).toBe(
      ErrorCode.NotFound,
    );
    expect(await outcome(revokePasskey(harness.auth, { userId, id: { $ne: "" } as unknown as string }))).toBe(
      ErrorCode.MalformedParameter,
    );
    expect(await outcome(revokePasskey(harness.auth, { userId, id: "" }))).toBe(ErrorCode.MissingParameter);
    expect(await tokenVersionOf(harness, userId)).toBe(version);
    expect(await harness.storage.passkeys.listByUser(userId)).toHaveLength(1);
    remove.mockRestore();
    removeUnlessLast.mockRestore();
  });

  describe("the last way to sign in", () => {
    it("WA-6: the last passkey of an account with no password and no external identity is kept (40900)", async () => {
      const harness = makePasskeyAuth();
      const userId = await passwordlessUser(harness, "passkey-only");
      const authenticator = makeAuthenticator();
      const passkey = await registerWithoutPassword(harness, userId, authenticator);
      const version = await tokenVersionOf(harness, userId);
      harness.events.length = 0;
      const sessionId = await freshSessionId(harness, userId);
      harness.events.length = 0;
      const refused = revokePasskey(harness.auth, { userId, sessionId, id: passkey.id });
      expect(await outcome(refused)).toBe(ErrorCode.Conflict);
      expect(await harness.storage.passkeys.findById(passkey.id)).not.toBeNull();
      expect(await tokenVersionOf(harness, userId)).toBe(version);
      expect(harness.events).toEqual([]);
      expect((await passkeySignIn(harness.auth, authenticator)).status).toBe("authenticated");
    });

    it("WA-6: the same account with an external identity may revoke its last passkey", async () => {
      const harness = makePasskeyAuth();
      const userId = await passwordlessUser(harness, "federated");
      const passkey = await registerWithoutPassword(harness, userId);
      await linkIdentity(harness, userId);
      await revokePasskey(harness.auth, { userId, sessionId: await freshSessionId(harness, userId), id: passkey.id });
      expect(await harness.storage.passkeys.listByUser(userId)).toEqual([]);
    });

    it("WA-6, PL-1: with email sign-in on, an account whose address is verified may revoke its last passkey; unverified, it may not", async () => {
      const harness = makePasskeyAuth({
        email: { send: async () => {}, resetUrl: "https://app.example.com/reset", verifyUrl: "https://app.example.com/verify" },
        emailSignIn: { enabled: true },
      });
      const verified = await createUser(harness.auth, { username: "by-mail", email: "mail@example.com", emailVerified: true });
      const passkey = await registerWithoutPassword(harness, verified.id);
      await revokePasskey(harness.auth, {
        userId: verified.id,
        sessionId: await freshSessionId(harness, verified.id),
        id: passkey.id,
      });
      expect(await harness.storage.passkeys.listByUser(verified.id)).toEqual([]);
      const off = makePasskeyAuth();
      const offUser = await createUser(off.auth, { username: "mail-off", email: "off@example.com", emailVerified: true });
      const offKey = await registerWithoutPassword(off, offUser.id);
      const offSession = await freshSessionId(off, offUser.id);
      expect(await outcome(revokePasskey(off.auth, { userId: offUser.id, sessionId: offSession, id: offKey.id }))).toBe(
        ErrorCode.Conflict,
      );
      const unverified = await createUser(harness.auth, { username: "unverified", email: "other@example.com" });
      const kept = await registerWithoutPassword(harness, unverified.id);
      const sessionId = await freshSessionId(harness, unverified.id);
      expect(await outcome(revokePasskey(harness.auth, { userId: unverified.id, sessionId, id: kept.id }))).toBe(
        ErrorCode.Conflict,
      );
    });

    it("WA-6: with two passkeys one may go; then the last is kept", async () => {
      const harness = makePasskeyAuth();
      const userId = await passwordlessUser(harness, "two-keys");
      const first = await registerWithoutPassword(harness, userId);
      const second = await registerWithoutPassword(harness, userId);
      const sessionId = await freshSessionId(harness, userId);
      await revokePasskey(harness.auth, { userId, sessionId, id: first.id });
      expect(await outcome(revokePasskey(harness.auth, { userId, sessionId, id: second.id }))).toBe(ErrorCode.Conflict);
      expect((await listPasskeys(harness.auth, { userId })).map((passkey) => passkey.id)).toEqual([second.id]);
    });

    it("WA-6: concurrent revocations of an account's last two passkeys: exactly one succeeds", async () => {
      const harness = makePasskeyAuth({ storage: slowStorage(memoryStorage()) });
      for (let round = 0; round < 3; round += 1) {
        const userId = await passwordlessUser(harness, `racing-${round}`);
        const passkeys = [await registerWithoutPassword(harness, userId), await registerWithoutPassword(harness, userId)];
        const sessionId = await freshSessionId(harness, userId);
        const results = await tally(
          passkeys.map((passkey) => revokePasskey(harness.auth, { userId, sessionId, id: passkey.id })),
        );
        expect(results).toEqual(
          new Map<number | "fulfilled", number>([
            ["fulfilled", 1],
            [ErrorCode.Conflict, 1],
          ]),
        );
        expect(await harness.storage.passkeys.listByUser(userId)).toHaveLength(1);
      }
    });

    it("WA-6: an account with a password may revoke its last passkey", async () => {
      const harness = makePasskeyAuth();
      const userId = await addUser(harness.auth, "has-password");
      const passkey = await registerPasskey(harness.auth, userId, makeAuthenticator());
      await revokePasskey(harness.auth, { userId, id: passkey.id, password: goodPassword });
      expect(await harness.storage.passkeys.listByUser(userId)).toEqual([]);
      await signIn(harness, "has-password", goodPassword);
    });

    it("WA-6: a directory account may revoke its last passkey", async () => {
      const harness = makePasskeyAuth();
      const userId = await directoryUser(harness, "directory-person");
      const passkey = await registerWithoutPassword(harness, userId);
      await revokePasskey(harness.auth, { userId, sessionId: await freshSessionId(harness, userId), id: passkey.id });
      expect(await harness.storage.passkeys.listByUser(userId)).toEqual([]);
    });
  });
});

describe("signed-in user and configuration", () => {
  it("WA-6: a disabled or unknown user gets 40101 from list, rename and revoke, and nothing changes", async () => {
    const harness = makePasskeyAuth();
    const userId = await addUser(harness.auth, "disabled-later");
    const passkey = await registerPasskey(harness.auth, userId, makeAuthenticator(), "Kept");
    await setUserDisabled(harness.auth, { userId, disabled: true });
    for (const who of [userId, "no-such-user"]) {
      expect(await outcome(listPasskeys(harness.auth, { userId: who }))).toBe(ErrorCode.InvalidToken);
      expect(await outcome(renamePasskey(harness.auth, { userId: who, id: passkey.id, label: "Renamed" }))).toBe(
        ErrorCode.InvalidToken,
      );
      expect(await outcome(revokePasskey(harness.auth, { userId: who, id: passkey.id }))).toBe(ErrorCode.InvalidToken);
    }
    expect(await harness.storage.passkeys.findById(passkey.id)).toMatchObject({ label: "Kept", userId });
  });

  it("passkeys not configured: list, rename and revoke are 40400", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "unconfigured");
    expect(await outcome(listPasskeys(harness.auth, { userId }))).toBe(ErrorCode.NotFound);
    expect(await outcome(renamePasskey(harness.auth, { userId, id: "abcd", label: "x" }))).toBe(ErrorCode.NotFound);
    expect(await outcome(revokePasskey(harness.auth, { userId, id: "abcd" }))).toBe(ErrorCode.NotFound);
  });
});

describe("management answers, word for word", () => {
  it("ST-2, PW-5: a missing id is 40001 naming it, an unknown one 40400 No such passkey, the last way in 40900 saying why", async () => {
    const harness = makePasskeyAuth();
    const { id: userId } = await createUser(harness.auth, { username: "words" });
    const passkey = await registerWithoutPassword(harness, userId);
    const answer = async (promise: Promise<unknown>) => {
      try {
        await promise;
        return "fulfilled";
      } catch (error) {
        const { code, message } = error as { code: number; message: string };
        return { code, message };
      }
    };
    expect(await answer(revokePasskey(harness.auth, { userId, id: undefined as unknown as string }))).toEqual({
      code: 40001,
      message: "id is required",
    });
    expect(await answer(renamePasskey(harness.auth, { userId, id: "AAAA", label: "Other" }))).toEqual({
      code: 40400,
      message: "No such passkey",
    });
    const sessionId = await freshSessionId(harness, userId);
    expect(await answer(revokePasskey(harness.auth, { userId, sessionId, id: passkey.id }))).toEqual({
      code: 40900,
      message: "This passkey is the only way to sign in to the account; add another first",
    });
  });
});
