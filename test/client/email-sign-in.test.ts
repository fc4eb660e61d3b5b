// Email sign-in through @portcullis/client against real servers (Express 5, Hono and Fastify, both
// status modes). Node's fetch keeps no cookies: the client sends the begin's binding itself, as a
// native app does. A code or a link's token (read with tokenFromLink) signs in with the same steps
// as client.login, the 40102 step included (PL-4); another client, without the binding, is refused (PL-2).
import { tokenFromLink } from "@portcullis/client";
import { type EmailMessage, emailDeliveriesSettled } from "@portcullis/core";
import { describe, expect, it } from "vitest";
import { createTotpUser, createUserWithVerifiedEmail, nextTotpCode } from "../fixtures/auth.js";
import { type ClientTestServer, clientTargets, recordEvents, rejection, servedPerTest } from "./client-servers.js";

const signInUrl = "https://app.example.com/email-sign-in";

describe.each(clientTargets)("client.emailSignIn against %s", (_name, start, statusMode) => {
  const serve = servedPerTest(start, statusMode);

  /** A server with email sign-in by code and link, whose messages land in `outbox`. */
  async function serveWithEmailSignIn(): Promise<ClientTestServer & { newest(to: string): Promise<EmailMessage> }> {
    const outbox: EmailMessage[] = [];
    const harness = await serve({
      email: {
        send: (message) => void outbox.push(message),
        resetUrl: "https://app.example.com/reset-password",
        verifyUrl: "https://app.example.com/verify-email",
        signInUrl,
      },
      emailSignIn: { enabled: true, method: "both" },
    });
    const newest = async (to: string) => {
      await emailDeliveriesSettled(harness.auth);
      const message = outbox.filter((sent) => sent.to === to).at(-1);
      expect(message?.kind).toBe("sign_in");
      return message as EmailMessage;
    };
    return { ...harness, newest };
  }

  it("PL-1: begin, then finish with the code: signed in, signedIn emitted; a wrong code first is 40100 and the binding is kept for the right one", async () => {
    const harness = await serveWithEmailSignIn();
    await createUserWithVerifiedEmail(harness.auth, "alice");
    const client = harness.client();
    const events = recordEvents(client);
    expect(await client.emailSignIn.begin("alice@example.com")).toEqual({ expiresIn: 600 });
    const { code } = await harness.newest("alice@example.com");
    const wrong = code === "000000" ? "000001" : "000000";
    expect((await rejection(client.emailSignIn.finish({ code: wrong }))).code).toBe(40100);
    const step = await client.emailSignIn.finish({ code: code as string });
    expect(step.status).toBe("authenticated");
    expect((await client.currentUser())?.username).toBe("alice");
    expect(events.map(([name]) => name)).toEqual(["signedIn"]);
  });

  it("PL-2: the link's token signs in the client that asked; another client, without the binding, gets 40001", async () => {
    const harness = await serveWithEmailSignIn();
    await createUserWithVerifiedEmail(harness.auth, "bob");
    const asker = harness.client();
    await asker.emailSignIn.begin("bob@example.com");
    const message = await harness.newest("bob@example.com");
    const token = tokenFromLink(message.link as string) as string;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await rejection(harness.client().emailSignIn.finish({ token }))).code).toBe(40001);
    expect((await asker.emailSignIn.finish({ token })).status).toBe("authenticated");
  });

  it("PL-4: a TOTP user's finish answers totp_required, and verifyTotp signs in", async () => {
    const harness = await serveWithEmailSignIn();
    const user = await createTotpUser(harness.auth, "carol");
    await harness.auth.storage.users.setEmail(user.id, { email: "carol@example.com", verified: true }, harness.auth.now());
    const client = harness.client();
    await client.emailSignIn.begin("carol@example.com");
    const { code } = await harness.newest("carol@example.com");
    const step = await client.emailSignIn.finish({ code: code as string });
    if (step.status !== "totp_required") throw new Error(`expected totp_required, got ${step.status}`);
    const signedIn = await step.verifyTotp(await nextTotpCode(harness, user.secret));
    expect(signedIn.user.username).toBe("carol");
  });
});
