import { describe, expect, it } from "vitest";
import { keyedTag } from "../crypto/keyed-tag.js";
import { changeEmail } from "../flows/change-email.js";
import { addUser, goodPassword } from "../flows/fixtures.test-support.js";
import { forgotPassword } from "../flows/forgot-password.js";
import { register } from "../flows/register.js";
import { resetPassword } from "../flows/reset-password.js";
import { memoryStorage } from "../storage/memory.js";
import type { Storage } from "../storage/types.js";
import { emailDeliveriesSettled } from "./deliver.js";
import { type EmailHarness, addUserWithEmail, makeEmailAuth, sentTo, tokenOf } from "./email.test-support.js";
import type { EmailConfig, NoticeReason } from "./email-config.js";
import { sendNotice } from "./notices.js";

/** Three messages an hour per address in these tests: notices of the account's own changes may use six. */
const recipientLimit: EmailConfig["recipientLimit"] = [{ limit: 3, window: "1h" }];

/** Budgets of the flows themselves high enough that only the recipient's budget holds anything back. */
const generous = {
  throttle: {
    passwordResetRequests: [{ limit: 1000, window: "15m" as const }],
    emailChanges: [{ limit: 1000, window: "15m" as const }],
  },
  signUp: { enabled: true },
};

function limitedAuth(storage?: Storage): EmailHarness {
  return makeEmailAuth({ ...generous, ...(storage ? { storage } : {}) }, { recipientLimit });
}

/** The `email.failed` events of messages held back by the recipient's budget. */
const withheld = (harness: EmailHarness) =>
  harness.events.filter((event) => event.type === "email.failed" && event.reason === "recipient_limit");

/** What asks for one message of a kind to one address (`to`, lower-cased). */
interface Trigger {
  name: string;
  to: string;
  /** How many the budget lets through in a window: the tier's limit, twice it for a notice of the account's own change. */
  allowed: number;
  send(harness: EmailHarness, round: number): Promise<unknown>;
}

const accountNotices: NoticeReason[] = [
  "password_changed",
  "password_reset",
  "second_factor_disabled",
  "passkey_added",
  "email_changed",
];

const victimId = async (harness: EmailHarness) => (await harness.storage.users.findByUsernameKey("victim"))?.id as string;

/** A sign-up each round, a new account naming `email`. */
const signUpNaming =
  (email: string) =>
  (harness: EmailHarness, round: number): Promise<unknown> =>
    register(harness.auth, { username: `signer-${round}`, password: goodPassword, email });

/** An address change each round, by a new account, to `email`. */
const changeNaming =
  (email: string) =>
  async (harness: EmailHarness, round: number): Promise<unknown> => {
    const userId = await addUser(harness.auth, `changer-${round}`);
    return changeEmail(harness.auth, { userId, email, password: goodPassword });
  };

const triggers: Trigger[] = [
  {
    name: "password_reset: forgot for the victim's name",
    to: "victim@example.com",
    allowed: 3,
    send: (harness) => forgotPassword(harness.auth, { username: "victim" }),
  },
  {
    name: "email_verification: sign-ups naming an address nobody holds verified",
    to: "unclaimed@example.com",
    allowed: 3,
    send: signUpNaming("Unclaimed@Example.com"),
  },
  {
    name: "email_verification: address changes naming it",
    to: "unclaimed@example.com",
    allowed: 3,
    send: changeNaming("unclaimed@example.com"),
  },
  {
    name: "notice address_in_use: sign-ups naming the victim's verified address",
    to: "victim@example.com",
    allowed: 3,
    send: signUpNaming("VICTIM@example.com"),
  },
  {
    name: "notice address_in_use: address changes naming it",
    to: "victim@example.com",
    allowed: 3,
    send: changeNaming("victim@example.com"),
  },
  ...accountNotices.map((notice) => ({
    name: `notice ${notice}: a change to the victim's own account`,
    to: "victim@example.com",
    allowed: 6,
    send: async (harness: EmailHarness) => sendNotice(harness.auth, await victimId(harness), notice),
  })),
];

/** Every message sent to the address, whatever its case. */
const toVictim = (harness: EmailHarness, address: string) =>
  harness.outbox.filter((message) => message.to.toLowerCase() === address);

describe("EM-1: the messages one address receives are bounded (email.recipientLimit)", () => {
  for (const trigger of triggers) {
    it(`EM-1: ${trigger.name}: ${trigger.allowed} an hour reach the address, the rest are withheld with the same answer, then the window refills`, async () => {
      const harness = limitedAuth();
      await addUserWithEmail(harness.auth, "victim", "victim@example.com");
      const answers: unknown[] = [];
      for (let round = 0; round < trigger.allowed + 4; round += 1) {
        const answer = await trigger.send(harness, round);
        answers.push(answer && typeof answer === "object" && "pending" in answer ? answer : typeof answer);
        await emailDeliveriesSettled(harness.auth);
      }
      // The answer never changes once the budget is spent: nobody learns it from the flow.
      expect(new Set(answers.map((answer) => JSON.stringify(answer))).size).toBe(1);
      expect(toVictim(harness, trigger.to)).toHaveLength(trigger.allowed);
      expect(withheld(harness)).toHaveLength(4);
      expect(JSON.stringify(harness.events)).not.toContain("@example.com");
      harness.clock.advance(60 * 60_000);
      await trigger.send(harness, 100);
      await emailDeliveriesSettled(harness.auth);
      expect(toVictim(harness, trigger.to)).toHaveLength(trigger.allowed + 1);
    });
  }

  it("EM-1: one budget across every kind: links and address_in_use notices others cause stop at the limit, notices of the account's own changes go on to twice it", async () => {
    const harness = limitedAuth();
    const userId = await addUserWithEmail(harness.auth, "victim", "victim@example.com");
    await forgotPassword(harness.auth, { username: "victim" });
    await register(harness.auth, { username: "squatter", password: goodPassword, email: "victim@example.com" });
    await emailDeliveriesSettled(harness.auth);
    sendNotice(harness.auth, userId, "password_changed");
    await emailDeliveriesSettled(harness.auth);
    // Three sent: the budget others can spend is gone.
    await forgotPassword(harness.auth, { username: "victim" });
    await register(harness.auth, { username: "squatter-2", password: goodPassword, email: "victim@example.com" });
    await emailDeliveriesSettled(harness.auth);
    expect(toVictim(harness, "victim@example.com").map((message) => message.notice ?? message.kind)).toEqual([
      "password_reset",
      "address_in_use",
      "password_changed",
    ]);
    // A flood by others never silences the notice of a change to the account itself.
    for (const notice of ["email_changed", "password_reset", "passkey_added"] as const) sendNotice(harness.auth, userId, notice);
    await emailDeliveriesSettled(harness.auth);
    expect(toVictim(harness, "victim@example.com")).toHaveLength(6);
    sendNotice(harness.auth, userId, "second_factor_disabled");
    await emailDeliveriesSettled(harness.auth);
    expect(toVictim(harness, "victim@example.com")).toHaveLength(6);
    expect(withheld(harness).map((event) => (event.type === "email.failed" ? (event.notice ?? event.kind) : ""))).toEqual([
      "password_reset",
      "address_in_use",
      "second_factor_disabled",
    ]);
  });

  it("EM-1: the budget is the normalized address's: case and NFKC forms share it; another address has its own", async () => {
    const harness = limitedAuth();
    for (const [round, email] of [
      "Someone@Example.com",
      "SOMEONE@example.COM",
      "\uFF53omeone@example.com",
      "someone@example.com",
    ].entries()) {
      await register(harness.auth, { username: `writer-${round}`, password: goodPassword, email });
    }
    await register(harness.auth, { username: "other", password: goodPassword, email: "someone-else@example.com" });
    await emailDeliveriesSettled(harness.auth);
    expect(harness.outbox.map((message) => message.to)).toEqual([
      "Someone@Example.com",
      "SOMEONE@example.COM",
      "someone@example.com",
      "someone-else@example.com",
    ]);
  });

  it("EM-1: a withheld link makes no token, so the link sent before it still works and is still the newest", async () => {
    const harness = limitedAuth();
    await addUserWithEmail(harness.auth, "victim", "victim@example.com");
    for (let round = 0; round < 5; round += 1) await forgotPassword(harness.auth, { username: "victim" });
    await emailDeliveriesSettled(harness.auth);
    const links = sentTo(harness, "victim@example.com", "password_reset");
    expect(links).toHaveLength(3);
    // Three tokens and the record naming the newest: the withheld requests stored nothing.
    expect((harness.storage as ReturnType<typeof memoryStorage>).sizes().challenges).toBe(3 + 1);
    expect(await resetPassword(harness.auth, { token: tokenOf(links[2]), newPassword: "a new long passphrase" })).toEqual({
      reset: true,
    });
  });

  it("EM-1: the counter is keyed by a keyed tag of the address, never the address itself, in the shared counters", async () => {
    const storage = memoryStorage();
    const keys: string[] = [];
    const recording: Storage = {
      ...storage,
      counters: {
        ...storage.counters,
        hit: (key, limit, windowMs, now) => {
          keys.push(key);
          return storage.counters.hit(key, limit, windowMs, now);
        },
      },
    };
    const harness = limitedAuth(recording);
    await addUserWithEmail(harness.auth, "victim", "victim@example.com");
    await forgotPassword(harness.auth, { username: "victim" });
    await emailDeliveriesSettled(harness.auth);
    const recipientKeys = keys.filter((key) => key.startsWith("recipient:"));
    expect(recipientKeys).toHaveLength(1);
    // The key is the storage format: kept across versions, so an upgrade keeps every live budget.
    const tag = keyedTag(harness.auth.secretBox, "portcullis email recipient v1", "victim@example.com");
    expect(recipientKeys).toEqual([`recipient:${tag}:0`]);
    expect(keys.join(" ")).not.toMatch(/victim/i);
    // Another instance sharing the storage spends the same budget.
    const second = makeEmailAuth({ ...generous, storage: recording, clock: harness.clock }, { recipientLimit });
    for (let round = 0; round < 3; round += 1) await forgotPassword(second.auth, { username: "victim" });
    await emailDeliveriesSettled(second.auth);
    expect(sentTo(second, "victim@example.com")).toHaveLength(2);
  });
});
