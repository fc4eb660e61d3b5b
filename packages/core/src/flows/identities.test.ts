import { driveAuthorization } from "@portcullis/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OidcTestProvider, startOidcProvider } from "../../../../test/fixtures/oidc-provider.js";
import { authWithProviders, discoveredProvider } from "../oauth/oauth.test-support.js";
import { createUser } from "./create-user.js";
import { addUser, authError, goodPassword, outcome } from "./fixtures.test-support.js";
import { linkIdentity, listIdentities, unlinkIdentity } from "./identities.js";
import { oauthAuthorize, oauthCallback } from "./oauth-sign-in.js";
import { refresh } from "./refresh.js";
import { expectOnlyCurrentSessionLives, twoSessions } from "./sessions.test-support.js";
import { verifyAccessToken } from "./verify-access-token.js";

let provider: OidcTestProvider;

beforeAll(async () => {
  provider = await startOidcProvider();
});

afterAll(async () => {
  await provider.close();
});

function harness() {
  return authWithProviders({ corp: discoveredProvider(provider) });
}

type Harness = ReturnType<typeof harness>;

async function finish(h: Harness, begun: { authUrl: string; browserBinding: string }, username = "alice") {
  const callback = await driveAuthorization(begun.authUrl, { username });
  return oauthCallback(h.auth, { provider: "corp", query: callback.search, browserBinding: begun.browserBinding });
}

describe("linking provider accounts", () => {
  it("OA-7: a signed-in user who proves the password links a provider account; it then signs in to that user", async () => {
    const h = harness();
    const userId = await addUser(h.auth, "carol");
    const before = (await h.storage.users.findById(userId))?.tokenVersion as number;
    const linked = await finish(h, await linkIdentity(h.auth, { userId, provider: "corp", password: goodPassword }));
    if (linked.status !== "authenticated") throw new Error(linked.status);
    expect(linked.tokens.user.id).toBe(userId);
    expect((await h.storage.users.findById(userId))?.tokenVersion).toBe(before);
    expect(await listIdentities(h.auth, { userId })).toEqual([
      expect.objectContaining({ provider: "corp", subject: provider.accounts.alice?.sub, email: provider.accounts.alice?.email }),
    ]);
    expect(h.events.map((event) => event.type)).toContain("identity.linked");
    expect(linked.returnPath).toBe("/");
    const again = await finish(h, await oauthAuthorize(h.auth, { provider: "corp", redirect: "/settings#keys" }));
    if (again.status !== "authenticated") throw new Error(again.status);
    expect(again.tokens.user.id).toBe(userId);
    expect(again.returnPath).toBe("/settings#keys");
  });

  it("SE-2: a link finished at the callback ends the user's sessions from before, the one it began from too, and not the session it signs in; the token version stays", async () => {
    const h = harness();
    const userId = await addUser(h.auth, "se2-linker");
    const { current, other, tokenVersion } = await twoSessions(h, userId, "se2-linker");
    h.events.length = 0;
    const linked = await finish(h, await linkIdentity(h.auth, { userId, provider: "corp", sessionId: current.sessionId }));
    if (linked.status !== "authenticated") throw new Error(linked.status);
    for (const session of [current, other]) {
      expect(await outcome(verifyAccessToken(h.auth, { token: session.tokens.accessToken }))).toBe(40101);
    }
    await verifyAccessToken(h.auth, { token: linked.tokens.accessToken });
    await refresh(h.auth, { refreshToken: linked.tokens.refreshToken });
    expect((await h.storage.users.findById(userId))?.tokenVersion).toBe(tokenVersion);
    expect(h.events.filter((event) => event.type === "sessions.ended")).toEqual([
      expect.objectContaining({ userId, keptSessionId: null, count: 2, reason: "identity_linked" }),
    ]);
  });

  it("WA-6 rule for providers: without re-authentication linking is 40001; a provider account linked to someone else is 40900", async () => {
    const h = harness();
    const userId = await addUser(h.auth, "dave");
    expect((await authError(linkIdentity(h.auth, { userId, provider: "corp" }))).code).toBe(40001);
    const first = await finish(h, await oauthAuthorize(h.auth, { provider: "corp" }), "bob");
    expect(first.status).toBe("authenticated");
    const error = await authError(
      finish(h, await linkIdentity(h.auth, { userId, provider: "corp", password: goodPassword }), "bob"),
    );
    expect(error).toMatchObject({ code: 40900, message: "This provider account is linked to another user" });
  });

  it("SE-2: unlinking leaves the token version; the last way in is kept (40900); an unknown link is 40400", async () => {
    const h = harness();
    const provisioned = await finish(h, await oauthAuthorize(h.auth, { provider: "corp" }), "bob");
    if (provisioned.status !== "authenticated") throw new Error(provisioned.status);
    const bob = provisioned.tokens.user.id;
    const subject = provider.accounts.bob?.sub as string;
    expect(await authError(unlinkIdentity(h.auth, { userId: bob, provider: "corp", subject }))).toMatchObject({ code: 40900 });
    expect((await authError(unlinkIdentity(h.auth, { userId: bob, provider: "corp", subject: "other" }))).code).toBe(40400);

    const userId = await addUser(h.auth, "erin");
    await finish(h, await linkIdentity(h.auth, { userId, provider: "corp", password: goodPassword }), "alice");
    const before = (await h.storage.users.findById(userId))?.tokenVersion as number;
    await unlinkIdentity(h.auth, { userId, provider: "corp", subject: provider.accounts.alice?.sub as string });
    expect(await listIdentities(h.auth, { userId })).toEqual([]);
    expect((await h.storage.users.findById(userId))?.tokenVersion).toBe(before);
  });
});

describe("listIdentities and unlinkIdentity, on stored links", () => {
  const link = (h: Harness, userId: string, provider: string, createdAt: number) =>
    h.storage.identities.link({
      provider,
      subject: `${provider}-sub`,
      userId,
      email: null,
      emailVerified: false,
      createdAt,
      lastUsedAt: null,
    });

  it("SE-2: unlinking from a session ends the user's other sessions; this one's access and refresh tokens go on working", async () => {
    const h = harness();
    const userId = await addUser(h.auth, "se2-unlinker");
    await link(h, userId, "one", 1);
    const before = await twoSessions(h, userId, "se2-unlinker");
    await unlinkIdentity(h.auth, { userId, sessionId: before.current.sessionId, provider: "one", subject: "one-sub" });
    await expectOnlyCurrentSessionLives(h, before, "identity_unlinked");
  });

  it("OA-7: links are listed oldest first", async () => {
    const h = harness();
    const userId = await addUser(h.auth, "gina");
    await link(h, userId, "late", 2_000);
    await link(h, userId, "early", 1_000);
    expect((await listIdentities(h.auth, { userId })).map((identity) => identity.provider)).toEqual(["early", "late"]);
  });

  it("SE-2, PL-1: with email sign-in on, a passwordless account with a verified address may unlink its only link", async () => {
    const h = authWithProviders(
      { corp: discoveredProvider(provider) },
      {
        email: { send: async () => {}, resetUrl: "https://app.example.com/reset", verifyUrl: "https://app.example.com/verify" },
        emailSignIn: { enabled: true },
      },
    );
    const verified = await createUser(h.auth, { username: "ivy", email: "ivy@example.com", emailVerified: true });
    await link(h, verified.id, "one", 1);
    await unlinkIdentity(h.auth, { userId: verified.id, provider: "one", subject: "one-sub" });
    expect(await listIdentities(h.auth, { userId: verified.id })).toEqual([]);
    const unverified = await createUser(h.auth, { username: "jo", email: "jo@example.com" });
    await link(h, unverified.id, "one", 1);
    expect((await authError(unlinkIdentity(h.auth, { userId: unverified.id, provider: "one", subject: "one-sub" }))).code).toBe(
      40900,
    );
  });

  it("SE-2: a passwordless account may unlink one of two links, or its only link when it has a passkey; the event names the provider", async () => {
    const h = harness();
    const { id: userId } = await createUser(h.auth, { username: "hana" });
    await link(h, userId, "one", 1);
    await link(h, userId, "two", 2);
    await unlinkIdentity(h.auth, { userId, provider: "one", subject: "one-sub" });
    expect(h.events.at(-1)).toEqual({ type: "identity.unlinked", userId, provider: "one", at: h.clock.now });
    expect(h.events.map((event) => event.type)).not.toContain("token_version.raised");
    expect(await authError(unlinkIdentity(h.auth, { userId, provider: "two", subject: "two-sub" }))).toMatchObject({
      code: 40900,
      message: "This linked account is the only way to sign in to the account; add another first",
    });
    await h.storage.passkeys.create({
      id: "AAAA",
      userId,
      publicKey: "AAAA",
      counter: 0,
      transports: [],
      label: "Key",
      backupEligible: false,
      backupState: false,
      createdAt: 1,
      lastUsedAt: null,
    });
    await unlinkIdentity(h.auth, { userId, provider: "two", subject: "two-sub" });
    expect(await listIdentities(h.auth, { userId })).toEqual([]);
  });

  it("PW-5, ST-2: missing fields are 40001 naming them; another user's link, or one removed meanwhile, is 40400", async () => {
    const h = harness();
    const userId = await addUser(h.auth, "ivan");
    const other = await addUser(h.auth, "jane");
    await link(h, other, "corp", 1);
    for (const [input, message] of [
      [{ userId, subject: "x" }, "provider is required"],
      [{ userId, provider: "corp" }, "subject is required"],
    ] as const) {
      expect(await authError(unlinkIdentity(h.auth, input as never))).toMatchObject({ code: 40001, message });
    }
    const missing = { code: 40400, message: "No such linked account" };
    expect(await authError(unlinkIdentity(h.auth, { userId, provider: "corp", subject: "corp-sub" }))).toMatchObject(missing);
    await link(h, userId, "mine", 1);
    h.storage.identities.unlink = async () => false;
    expect(await authError(unlinkIdentity(h.auth, { userId, provider: "mine", subject: "mine-sub" }))).toMatchObject(missing);
  });
});
