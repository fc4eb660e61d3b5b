// Issue 24's reset and verification flows on every store (memory, PGlite, PostgreSQL, MariaDB):
// one reset per token under concurrency and the newest token voiding older ones (PR-2), one
// account holding an address that two verify at once (EV-1), and nothing lost when a step fails.
import {
  type Auth,
  type AuthEvent,
  type EmailConfig,
  type EmailMessage,
  type Storage,
  changeEmail,
  changePassword,
  createAuth,
  createUser,
  emailDeliveriesSettled,
  forgotPassword,
  login,
  resetPassword,
  verifyEmail,
} from "@portcullis/core";
import type { KyselyStorage } from "@portcullis/kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTotpUser, testAudience, testIssuer, testPassword, totpCodeAt } from "../fixtures/auth.js";
import { describeNeedingService } from "../fixtures/required-service.js";
import { codeOf } from "./flow-code.js";
import { type Store, stores } from "./stores.js";

const newPassword = "a brand new passphrase for the test";
const throttle = {
  account: [{ limit: 1000, window: "15m" as const }],
  ip: [{ limit: 100_000, window: "15m" as const }],
  passwordResetRequests: [{ limit: 1000, window: "15m" as const }],
  emailChanges: [{ limit: 1000, window: "15m" as const }],
};

/** The token of a message's link: what follows `#token=`. */
function tokenOf(message: EmailMessage | undefined): string {
  const match = /#token=([A-Za-z0-9_-]+)$/.exec(message?.link ?? "");
  if (!match) throw new Error(`no link with a token in ${JSON.stringify(message)}`);
  return match[1] as string;
}

for (const store of stores) {
  const describeStore = describeNeedingService("test/storage/email.test.ts", await store.missing());

  describeStore(`email reset and verification on ${store.name}`, () => {
    let opened: Awaited<ReturnType<Store["open"]>> | undefined;
    let auth: Auth;
    const clock = { now: Date.parse("2030-01-01T00:00:00Z") };
    const outbox: EmailMessage[] = [];
    const events: AuthEvent[] = [];
    const internalErrors: unknown[] = [];
    /** When set, `email.send` throws after taking the message: a mail server that refused it. */
    let sendFails = false;

    /** An auth instance on the store's storage, on this file's clock and secrets; instances made by it share everything stored. */
    const instance = (email: Pick<EmailConfig, "send" | "recipientLimit">) =>
      createAuth({
        storage: opened?.storage as Storage,
        issuer: testIssuer,
        audience: testAudience,
        secrets: {
          signing: "email-storage-signing-secret-0123456789abcdef0123",
          encryption: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        },
        now: () => clock.now,
        throttle,
        onInternalError: (error) => internalErrors.push(error),
        email: {
          resetUrl: "https://app.example.com/reset-password",
          verifyUrl: "https://app.example.com/verify-email",
          ...email,
        },
      });

    beforeAll(async () => {
      opened = await store.open();
      auth = instance({
        send: (message) => {
          outbox.push(message);
          if (sendFails) throw new Error("550 mailbox unavailable");
        },
      });
      for (const type of ["email.sent", "email.failed", "email.verified", "password.reset"] as const) {
        auth.events.on(type, (event) => {
          events.push(event);
        });
      }
    });

    afterAll(async () => {
      if (auth) await emailDeliveriesSettled(auth);
      await opened?.close();
    });

    /** A local user with a verified address. */
    const addUser = (username: string) =>
      createUser(auth, { username, password: testPassword, email: `${username}@example.com`, emailVerified: true });

    /** Asks for a reset link for `username` and returns its token. */
    async function resetToken(username: string): Promise<string> {
      outbox.length = 0;
      expect(await forgotPassword(auth, { username })).toEqual({});
      await emailDeliveriesSettled(auth);
      expect(outbox.map(({ kind, to }) => ({ kind, to }))).toEqual([{ kind: "password_reset", to: `${username}@example.com` }]);
      return tokenOf(outbox[0]);
    }

    /** Asks for a verification link of `email` for a user and returns its token. */
    async function verificationToken(userId: string, email: string): Promise<string> {
      outbox.length = 0;
      expect(await changeEmail(auth, { userId, email, password: testPassword })).toEqual({ pending: true });
      await emailDeliveriesSettled(auth);
      const links = outbox.filter((message) => message.kind === "email_verification");
      expect(links.map(({ to }) => to)).toEqual([email]);
      return tokenOf(links[0]);
    }

    const signsIn = (username: string, password: string) => codeOf(login(auth, { username, password }));

    it("PR-2: 20 concurrent resets with one token give exactly one success; the others 40101", async () => {
      await addUser("racer");
      const token = await resetToken("racer");
      const codes = await Promise.all(Array.from({ length: 20 }, () => codeOf(resetPassword(auth, { token, newPassword }))));
      expect(codes.filter((code) => code === 0)).toHaveLength(1);
      expect(codes.filter((code) => code === 40101)).toHaveLength(19);
      expect(await signsIn("racer", newPassword)).toBe(0);
      expect(await signsIn("racer", testPassword)).toBe(40100);
      expect(await codeOf(resetPassword(auth, { token, newPassword: `${newPassword}!` }))).toBe(40101);
    });

    it("PR-2: a newer link voids the older one, and a password change voids the newest", async () => {
      await addUser("twice");
      const older = await resetToken("twice");
      const newer = await resetToken("twice");
      expect(await codeOf(resetPassword(auth, { token: older, newPassword }))).toBe(40101);
      expect(await codeOf(resetPassword(auth, { token: newer, newPassword }))).toBe(0);
      expect(await signsIn("twice", newPassword)).toBe(0);

      await addUser("changer");
      const beforeChange = await resetToken("changer");
      const user = await auth.storage.users.findByUsernameKey("changer");
      await changePassword(auth, { userId: user?.id as string, currentPassword: testPassword, newPassword });
      expect(await codeOf(resetPassword(auth, { token: beforeChange, newPassword: `${newPassword}!` }))).toBe(40101);
      expect(await signsIn("changer", newPassword)).toBe(0);
    });

    it("PR-2: a reset link mailed to the old address is void once the user changed to a new one and verified it", async () => {
      const user = await addUser("relocated");
      const oldLink = await resetToken("relocated");
      const chosen = await verificationToken(user.id, "relocated-new@example.com");
      expect(await codeOf(verifyEmail(auth, { token: chosen }))).toBe(0);
      expect(await codeOf(resetPassword(auth, { token: oldLink, newPassword }))).toBe(40101);
      expect(await signsIn("relocated", testPassword)).toBe(0);

      // A verification link the account's address changed under is void too, however it changed.
      const pending = await verificationToken(user.id, "pending@example.com");
      await auth.storage.users.setEmail(user.id, { email: "set-by-service@example.com", verified: true }, auth.now());
      expect(await codeOf(verifyEmail(auth, { token: pending }))).toBe(40101);
      expect((await auth.storage.users.findById(user.id))?.email).toBe("set-by-service@example.com");
    });

    it("EM-1: two instances on the storage share one address's budget, kept under a keyed tag: past it, neither sends, and forgot answers as before", async () => {
      const sent: EmailMessage[] = [];
      const withheld: AuthEvent[] = [];
      const limited = () => {
        const other = instance({
          recipientLimit: [{ limit: 3, window: "1h" }],
          send: (message) => {
            sent.push(message);
          },
        });
        other.events.on("email.failed", (event) => {
          withheld.push(event);
        });
        return other;
      };
      const [first, second] = [limited(), limited()];
      await createUser(first, {
        username: "shared-inbox",
        password: testPassword,
        email: "Shared-Inbox@example.com",
        emailVerified: true,
      });
      for (let round = 0; round < 6; round += 1) {
        const by = round % 2 === 0 ? first : second;
        expect(await forgotPassword(by, { email: round < 3 ? "shared-inbox@example.com" : "SHARED-INBOX@example.com" })).toEqual(
          {},
        );
        await emailDeliveriesSettled(by);
      }
      expect(sent.map(({ kind, to }) => ({ kind, to }))).toEqual(
        Array.from({ length: 3 }, () => ({ kind: "password_reset", to: "Shared-Inbox@example.com" })),
      );
      expect(withheld.map((event) => (event.type === "email.failed" ? event.reason : event.type))).toEqual([
        "recipient_limit",
        "recipient_limit",
        "recipient_limit",
      ]);
      // The counters hold neither the address nor its key.
      if ("db" in (opened?.storage ?? {})) {
        const storage = opened?.storage as unknown as KyselyStorage;
        const keys = await storage.db.selectFrom(storage.tables.counters).select("counter_key").execute();
        const recipientKeys = keys.map((row) => String(row.counter_key)).filter((key) => key.startsWith("recipient:"));
        expect(recipientKeys.length).toBeGreaterThan(0);
        for (const key of recipientKeys) expect(key).toMatch(/^recipient:[A-Za-z0-9_-]{22}:\d$/);
        expect(JSON.stringify(keys)).not.toMatch(/@|shared-inbox/i);
      }
    });

    it("PR-2: a link expires after email.tokenLifetime (30 minutes by default)", async () => {
      await addUser("late");
      const token = await resetToken("late");
      clock.now += 30 * 60_000 + 1;
      expect(await codeOf(resetPassword(auth, { token, newPassword }))).toBe(40101);
      expect(await signsIn("late", testPassword)).toBe(0);
      const fresh = await resetToken("late");
      clock.now += 29 * 60_000;
      expect(await codeOf(resetPassword(auth, { token: fresh, newPassword }))).toBe(0);
    });

    it("EV-1: two accounts verifying one address (case-different) at once: exactly one holds it, the other keeps what it had", async () => {
      for (let round = 0; round < 5; round += 1) {
        const first = await createUser(auth, { username: `first-${round}`, password: testPassword });
        const second = await createUser(auth, {
          username: `second-${round}`,
          password: testPassword,
          email: `second-${round}@example.com`,
          emailVerified: true,
        });
        const upper = await verificationToken(first.id, `Shared-${round}@Example.COM`);
        const lower = await verificationToken(second.id, `shared-${round}@example.com`);
        const codes = await Promise.all([upper, lower].map((token) => codeOf(verifyEmail(auth, { token }))));
        expect([...codes].sort()).toEqual([0, 40900]);
        const winner = codes[0] === 0 ? first : second;
        const holder = await auth.storage.users.findByVerifiedEmail(`shared-${round}@example.com`);
        expect(holder?.id).toBe(winner.id);
        const firstAfter = await auth.storage.users.findById(first.id);
        const secondAfter = await auth.storage.users.findById(second.id);
        if (winner === first) {
          expect({ email: firstAfter?.email, verified: firstAfter?.emailVerified }).toEqual({
            email: `Shared-${round}@Example.COM`,
            verified: true,
          });
          // Nothing lost: the loser keeps the address it had verified.
          expect({ email: secondAfter?.email, verified: secondAfter?.emailVerified }).toEqual({
            email: `second-${round}@example.com`,
            verified: true,
          });
        } else {
          expect({ email: secondAfter?.email, verified: secondAfter?.emailVerified }).toEqual({
            email: `shared-${round}@example.com`,
            verified: true,
          });
          expect({ email: firstAfter?.email ?? null, verified: firstAfter?.emailVerified }).toEqual({
            email: null,
            verified: false,
          });
        }
      }
    });

    it("EV-1: a newer verification link voids the older one; the address counts only once its own link is used", async () => {
      const user = await createUser(auth, { username: "mover", password: testPassword });
      const older = await verificationToken(user.id, "old-choice@example.com");
      const newer = await verificationToken(user.id, "new-choice@example.com");
      expect((await auth.storage.users.findById(user.id))?.emailVerified).toBe(false);
      expect(await auth.storage.users.findByVerifiedEmail("new-choice@example.com")).toBeNull();
      expect(await codeOf(verifyEmail(auth, { token: older }))).toBe(40101);
      expect(await codeOf(verifyEmail(auth, { token: newer }))).toBe(0);
      expect(await codeOf(verifyEmail(auth, { token: newer }))).toBe(40101);
      expect((await auth.storage.users.findByVerifiedEmail("new-choice@example.com"))?.id).toBe(user.id);
      expect(await auth.storage.users.findByVerifiedEmail("old-choice@example.com")).toBeNull();
    });

    it("nothing lost on failure: a refused password and a wrong second factor leave the link and the old password working", async () => {
      await addUser("careful");
      const token = await resetToken("careful");
      expect(await codeOf(resetPassword(auth, { token, newPassword: "short" }))).toBe(42200);
      expect(await signsIn("careful", testPassword)).toBe(0);
      expect(await codeOf(resetPassword(auth, { token, newPassword }))).toBe(0);

      const totpUser = await createTotpUser(auth, "careful-totp");
      await auth.storage.users.setEmail(totpUser.id, { email: "careful-totp@example.com", verified: true }, auth.now());
      const totpToken = await resetToken("careful-totp");
      expect(await codeOf(resetPassword(auth, { token: totpToken, newPassword }))).toBe(40103);
      expect(await codeOf(resetPassword(auth, { token: totpToken, newPassword, totpCode: "000000" }))).toBe(40103);
      expect(await codeOf(resetPassword(auth, { token: totpToken, newPassword, recoveryCode: "not-a-code" }))).toBe(40103);
      expect(await signsIn("careful-totp", testPassword)).toBe(0);
      clock.now += 30_000;
      const totpCode = await totpCodeAt(auth, totpUser.secret);
      expect(await codeOf(resetPassword(auth, { token: totpToken, newPassword, totpCode }))).toBe(0);
      expect(await signsIn("careful-totp", testPassword)).toBe(40100);
    });

    it("nothing lost on failure: a send that fails is reported (email.failed), the account is untouched, and the link it carried still works", async () => {
      const user = await addUser("unlucky");
      events.length = 0;
      internalErrors.length = 0;
      outbox.length = 0;
      sendFails = true;
      try {
        expect(await forgotPassword(auth, { username: "unlucky" })).toEqual({});
        await emailDeliveriesSettled(auth);
      } finally {
        sendFails = false;
      }
      expect(events).toEqual([
        { type: "email.failed", kind: "password_reset", userId: user.id, reason: "failed", at: clock.now },
      ]);
      expect(internalErrors).toHaveLength(1);
      expect(String(internalErrors[0])).not.toContain("unlucky@example.com");
      expect(await signsIn("unlucky", testPassword)).toBe(0);
      expect(await codeOf(resetPassword(auth, { token: tokenOf(outbox[0]), newPassword }))).toBe(0);
      expect(await signsIn("unlucky", newPassword)).toBe(0);
    });
  });
}
