import { describe, expect, it } from "vitest";
import { emailDeliveriesSettled } from "../email/deliver.js";
import { addUserWithEmail, makeEmailAuth } from "../email/email.test-support.js";
import { ErrorCode } from "../errors/codes.js";
import {
  type Harness,
  addUser,
  authError,
  enrolTotp,
  goodPassword,
  makeAuth,
  nextCode,
  signIn,
  tokensOf,
} from "../flows/fixtures.test-support.js";
import { login } from "../flows/login.js";
import { makeAuthenticator, makePasskeyAuth, passkeySignIn, passkeys } from "../flows/passkeys.test-support.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { verifyTotp } from "../flows/verify-totp.js";
import { webauthnRegisterBegin, webauthnRegisterFinish } from "../flows/webauthn-register.js";
import type { TokenSet } from "../tokens/issue-tokens.js";
import { resolvePasskeyConfig } from "../webauthn/passkey-config.js";
import { beginEmailSignIn } from "./begin-email-sign-in.js";
import { finishEmailSignIn } from "./finish-email-sign-in.js";
import { declinePasskeyOffer, passkeyOfferDue } from "./passkey-offer.js";

const day = 86_400_000;

/** Registers a passkey relying on the sign-in of `tokens` alone: no password, no code (PL-13). */
async function registerRightAfter(harness: Harness, tokens: TokenSet, authenticator = makeAuthenticator()) {
  const { userId, sessionId } = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
  const { ceremonyId, options } = await webauthnRegisterBegin(harness.auth, { userId, sessionId, label: "This laptop" });
  return webauthnRegisterFinish(harness.auth, { userId, sessionId, ceremonyId, response: authenticator.register(options) });
}

describe("passkey offer options", () => {
  it("PL-13: offered after sign-in by default, a decline remembered 90 days", () => {
    const config = resolvePasskeyConfig(passkeys);
    expect(config?.offerAfterSignIn).toBe(true);
    expect(config?.offerDeclinedForSeconds).toBe(90 * 86_400);
  });

  it("PL-14: a decline is remembered from 1 day to 366 days; anything else is refused by name", () => {
    expect(resolvePasskeyConfig({ ...passkeys, offerDeclinedFor: "1d" })?.offerDeclinedForSeconds).toBe(86_400);
    expect(resolvePasskeyConfig({ ...passkeys, offerDeclinedFor: "366d" })?.offerDeclinedForSeconds).toBe(366 * 86_400);
    expect(() => resolvePasskeyConfig({ ...passkeys, offerDeclinedFor: "23h" })).toThrow(/offerDeclinedFor must be from 1d/);
    expect(() => resolvePasskeyConfig({ ...passkeys, offerDeclinedFor: "367d" })).toThrow(/offerDeclinedFor must be from 1d/);
    expect(() => resolvePasskeyConfig({ ...passkeys, offerAfterSignIn: "yes" as never })).toThrow(
      /offerAfterSignIn must be true or false/,
    );
  });
});

describe("the passkey offer of a sign-in (PL-13)", () => {
  it("PL-13: a password sign-in of an account without a passkey says to offer one; with one it does not", async () => {
    const harness = makePasskeyAuth();
    await addUser(harness.auth, "alice");
    const first = await signIn(harness, "alice");
    expect(first.offerPasskey).toBe(true);
    await registerRightAfter(harness, first);
    expect((await signIn(harness, "alice")).offerPasskey).toBe(false);
  });

  it("PL-13: a registration right after the sign-in needs no password again, and ends the offer", async () => {
    const harness = makePasskeyAuth();
    const userId = await addUser(harness.auth, "bob");
    const tokens = await signIn(harness, "bob");
    const passkey = await registerRightAfter(harness, tokens);
    expect(passkey.label).toBe("This laptop");
    expect(harness.events.filter((event) => event.type === "passkey.registered")).toEqual([
      expect.objectContaining({ userId, credentialId: passkey.id }),
    ]);
  });

  it("PL-13: after the TOTP step the offer stands, and the registration right after needs no code either", async () => {
    const harness = makePasskeyAuth();
    const userId = await addUser(harness.auth, "carol");
    const { secret } = await enrolTotp(harness.auth, userId);
    const step = await login(harness.auth, { username: "carol", password: goodPassword });
    if (step.status !== "totp_required") throw new Error(`expected the TOTP step, got ${step.status}`);
    const tokens = await verifyTotp(harness.auth, { tempToken: step.tempToken, code: nextCode(harness, secret) });
    expect(tokens.offerPasskey).toBe(true);
    await registerRightAfter(harness, tokens);
  });

  it("PL-13: an email sign-in says to offer one, and the registration right after needs no password", async () => {
    const harness = makeEmailAuth(
      { passkeys, emailSignIn: { enabled: true } },
      { signInUrl: "https://app.example.com/email-sign-in" },
    );
    await addUserWithEmail(harness.auth, "dana", "dana@example.com");
    const { binding } = await beginEmailSignIn(harness.auth, { email: "dana@example.com" });
    await emailDeliveriesSettled(harness.auth);
    const code = harness.outbox.at(-1)?.code as string;
    const tokens = tokensOf(await finishEmailSignIn(harness.auth, { binding, code }));
    expect(tokens.offerPasskey).toBe(true);
    await registerRightAfter(harness, tokens);
  });

  it("PL-13: a passkey sign-in is not followed by an offer, nor any sign-in with offerAfterSignIn off", async () => {
    const harness = makePasskeyAuth();
    const userId = await addUser(harness.auth, "erin");
    const authenticator = makeAuthenticator();
    await registerRightAfter(harness, await signIn(harness, "erin"), authenticator);
    expect(tokensOf(await passkeySignIn(harness.auth, authenticator)).offerPasskey).toBe(false);
    const user = await harness.storage.users.findById(userId);
    if (!user) throw new Error("the user is gone");
    await harness.storage.passkeys.delete(userId, (await harness.storage.passkeys.listByUser(userId))[0]?.id as string);
    expect(await passkeyOfferDue(harness.auth, user, ["hwk", "user"])).toBe(false);
    expect(await passkeyOfferDue(harness.auth, user, ["fed"])).toBe(false);
    expect(await passkeyOfferDue(harness.auth, user, ["ldap"])).toBe(true);
    expect(await passkeyOfferDue(harness.auth, user, ["email"])).toBe(true);

    const off = makePasskeyAuth({}, { offerAfterSignIn: false });
    await addUser(off.auth, "erin");
    expect((await signIn(off, "erin")).offerPasskey).toBe(false);
  });

  it("PL-13: without passkeys a sign-in's answer has no offerPasskey at all, and no offer is ever due", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "frank");
    expect(Object.keys(await signIn(harness, "frank"))).not.toContain("offerPasskey");
    const user = await harness.storage.users.findById(userId);
    if (!user) throw new Error("the user is gone");
    expect(await passkeyOfferDue(harness.auth, user, ["pwd"])).toBe(false);
  });
});

describe("declining the passkey offer (PL-14)", () => {
  it("PL-14: a decline holds for offerDeclinedFor, for that account only, and a second decline does not extend it", async () => {
    const harness = makePasskeyAuth({}, { offerDeclinedFor: "30d" });
    const alice = await addUser(harness.auth, "alice");
    await addUser(harness.auth, "bob");
    await declinePasskeyOffer(harness.auth, { userId: alice });
    expect((await signIn(harness, "alice")).offerPasskey).toBe(false);
    expect((await signIn(harness, "bob")).offerPasskey).toBe(true);

    harness.clock.advance(20 * day);
    await declinePasskeyOffer(harness.auth, { userId: alice });
    harness.clock.advance(10 * day - 1);
    expect((await signIn(harness, "alice")).offerPasskey).toBe(false);
    harness.clock.advance(1);
    expect((await signIn(harness, "alice")).offerPasskey).toBe(true);
  });

  it("PL-14: a decline is shared by every instance on the storage", async () => {
    const first = makePasskeyAuth();
    const second = makePasskeyAuth({ storage: first.storage, clock: first.clock });
    const userId = await addUser(first.auth, "gina");
    await declinePasskeyOffer(first.auth, { userId });
    expect((await signIn(second, "gina")).offerPasskey).toBe(false);
  });

  it("PL-14: 40400 without passkeys; 40101 for a disabled user, whose offer is then not declined", async () => {
    const plain = makeAuth();
    const someone = await addUser(plain.auth, "hank");
    expect((await authError(declinePasskeyOffer(plain.auth, { userId: someone }))).code).toBe(ErrorCode.NotFound);

    const harness = makePasskeyAuth();
    const userId = await addUser(harness.auth, "ivy");
    await harness.storage.users.update(userId, { disabled: true }, harness.clock.now);
    expect((await authError(declinePasskeyOffer(harness.auth, { userId }))).code).toBe(ErrorCode.InvalidToken);
    await harness.storage.users.update(userId, { disabled: false }, harness.clock.now);
    expect((await signIn(harness, "ivy")).offerPasskey).toBe(true);
  });
});
