// Password reset by email and verified addresses, through @portcullis/client against real servers
// (Express 5 and Hono, both status modes): the link's token read with tokenFromLink, a reset that
// asks a TOTP user for a code, a used link refused without touching the client's session, and an
// address changed and verified.
import { tokenFromLink } from "@portcullis/client";
import { type EmailMessage, createUser, emailDeliveriesSettled } from "@portcullis/core";
import { describe, expect, it } from "vitest";
import { createTotpUser, testPassword, totpCodeAt } from "../fixtures/auth.js";
import {
  type ClientTestServer,
  clientTargets,
  reauthenticateWith,
  recordEvents,
  rejection,
  servedPerTest,
  signInGrowsOld,
  signedInClient,
  statusIn,
} from "./client-servers.js";

const resetUrl = "https://app.example.com/reset-password";
const verifyUrl = "https://app.example.com/verify-email";
const newPassword = "a brand new passphrase for alice";

describe.each(clientTargets)("client.email against %s", (_name, start, statusMode) => {
  const serve = servedPerTest(start, statusMode);

  /** A server with `email` configured, whose messages land in `outbox`. */
  async function serveWithEmail(): Promise<ClientTestServer & { outbox: EmailMessage[]; delivered(): Promise<EmailMessage[]> }> {
    const outbox: EmailMessage[] = [];
    const harness = await serve({ email: { send: (message) => void outbox.push(message), resetUrl, verifyUrl } });
    return {
      ...harness,
      outbox,
      delivered: async () => {
        await emailDeliveriesSettled(harness.auth);
        return outbox;
      },
    };
  }

  /** The token of the newest message of `kind` to `to`, read from its link as a page reads it from `location.hash`. */
  async function linkToken(
    harness: { delivered(): Promise<EmailMessage[]> },
    to: string,
    kind: EmailMessage["kind"],
  ): Promise<string> {
    const message = (await harness.delivered()).filter((sent) => sent.to === to && sent.kind === kind).at(-1);
    expect(message?.link).toBeDefined();
    const link = new URL(message?.link as string);
    expect(link.origin + link.pathname).toBe(kind === "password_reset" ? resetUrl : verifyUrl);
    const token = tokenFromLink(link.hash);
    expect(token).toEqual(expect.any(String));
    return token as string;
  }

  it("PR-1, PR-2, PR-4: forgot by address or username sends a link; its token sets the new password once, and the user signs in with it", async () => {
    const harness = await serveWithEmail();
    await createUser(harness.auth, {
      username: "alice",
      password: testPassword,
      email: "alice@example.com",
      emailVerified: true,
    });
    const client = harness.client();

    await client.email.forgotPassword({ email: "alice@example.com" });
    await client.email.resetPassword({ token: await linkToken(harness, "alice@example.com", "password_reset"), newPassword });
    expect(await client.currentUser()).toBeNull();
    expect((await client.login({ username: "alice", password: newPassword })).status).toBe("authenticated");

    // A used link is 40101: the signed-in client keeps its session, sends no refresh and no logout.
    await client.email.forgotPassword({ username: "alice" });
    const token = await linkToken(harness, "alice@example.com", "password_reset");
    await client.email.resetPassword({ token, newPassword: `${newPassword} again` });
    expect((await client.login({ username: "alice", password: `${newPassword} again` })).status).toBe("authenticated");
    const events = recordEvents(client);
    const refreshes = harness.refreshesSent();
    const used = await rejection(client.email.resetPassword({ token, newPassword: "yet another passphrase" }));
    expect(used).toMatchObject({ kind: "server", code: 40101, status: statusIn(statusMode, 401) });
    expect(harness.refreshesSent()).toBe(refreshes);
    expect(harness.countSent("POST", "/api/v1/auth/logout")).toBe(0);
    expect(events).toEqual([]);
    expect((await client.me()).username).toBe("alice");
  });

  it("PR-1: an unknown account and an address nobody verified answer the same, and nothing is sent", async () => {
    const harness = await serveWithEmail();
    await createUser(harness.auth, { username: "bob", password: testPassword, email: "bob@example.com", emailVerified: false });
    const client = harness.client();
    await client.email.forgotPassword({ username: "nobody" });
    await client.email.forgotPassword({ email: "bob@example.com" });
    await client.email.forgotPassword({ username: "bob" });
    expect(await harness.delivered()).toEqual([]);
  });

  it("PR-3, PR-4: a TOTP user's reset is 40103 without a code and goes through with one; the user's signed-in client is then signed out at its next call", async () => {
    const harness = await serveWithEmail();
    const user = await createTotpUser(harness.auth, "carol");
    await harness.auth.storage.users.setEmail(user.id, { email: "carol@example.com", verified: true }, harness.clock.now);
    const signedIn = harness.client();
    const step = await signedIn.login({ username: "carol", password: testPassword });
    if (step.status !== "totp_required") throw new Error("expected the second factor");
    await step.verifyTotp(await totpCodeAt(harness.auth, user.secret));
    const events = recordEvents(signedIn);

    const client = harness.client();
    await client.email.forgotPassword({ username: "carol" });
    const token = await linkToken(harness, "carol@example.com", "password_reset");
    const withoutCode = await rejection(client.email.resetPassword({ token, newPassword }));
    expect(withoutCode).toMatchObject({ code: 40103, status: statusIn(statusMode, 401) });
    harness.clock.advance(30_000);
    await client.email.resetPassword({ token, newPassword, totpCode: await totpCodeAt(harness.auth, user.secret) });

    expect((await rejection(signedIn.me())).code).toBe(40101);
    expect(events).toEqual([["signedOut", { reason: "session_ended" }]]);
    const again = await client.login({ username: "carol", password: newPassword });
    expect(again.status).toBe("totp_required");
  });

  it("EV-1: changeEmail after an older sign-in asks reauthenticate, the link verifies the address, and me() shows it verified", async () => {
    const harness = await serveWithEmail();
    const { reauthenticate, asked } = reauthenticateWith(() => ({ password: testPassword }));
    const { client } = await signedInClient(harness, "dave", { reauthenticate });
    signInGrowsOld(harness);

    await client.email.changeEmail({ email: "dave@example.com" });
    expect(asked).toEqual([{ operation: "email.change", accepts: ["password", "totpCode"], reauthenticateWith: ["password"] }]);
    expect(await client.me()).toMatchObject({ email: null, emailVerified: false });

    const token = await linkToken(harness, "dave@example.com", "email_verification");
    await client.email.verifyEmail({ token });
    expect(await client.me()).toMatchObject({ email: "dave@example.com", emailVerified: true });
    expect(await client.currentUser()).toMatchObject({ email: "dave@example.com", emailVerified: true });

    const used = await rejection(client.email.verifyEmail({ token }));
    expect(used).toMatchObject({ code: 40101 });
    expect(await client.accessToken()).not.toBeNull();
  });

  it("EV-1: a sign-up with an address stores it unverified and sends it a link, which verifies it", async () => {
    const outbox: EmailMessage[] = [];
    const harness = await serve({
      signUp: { enabled: true },
      email: { send: (message) => void outbox.push(message), resetUrl, verifyUrl },
    });
    const client = harness.client();
    const signedUp = await client.register({ username: "erin", password: testPassword, email: "erin@example.com" });
    if (signedUp.status !== "authenticated") throw new Error(signedUp.status);
    const { user } = signedUp;
    expect(user).toMatchObject({ email: "erin@example.com", emailVerified: false });
    await emailDeliveriesSettled(harness.auth);
    const token = await linkToken({ delivered: async () => outbox }, "erin@example.com", "email_verification");
    await client.email.verifyEmail({ token });
    expect(await client.me()).toMatchObject({ email: "erin@example.com", emailVerified: true });
  });

  it("without email configured the routes are 40400", async () => {
    const harness = await serve();
    const client = harness.client();
    expect(await rejection(client.email.forgotPassword({ username: "alice" }))).toMatchObject({
      code: 40400,
      status: statusIn(statusMode, 404),
    });
    expect(await rejection(client.email.verifyEmail({ token: "x" }))).toMatchObject({ code: 40400 });
  });
});
