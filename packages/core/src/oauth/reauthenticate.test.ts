import type { LocalProviderAuthentication } from "@portcullis/testing";
import { driveAuthorization } from "@portcullis/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OidcProviderOptions, type OidcTestProvider, startOidcProvider } from "../../../../test/fixtures/oidc-provider.js";
import { authError, codeAt, enrolTotp, makeClock, tokensOf, wrongCodeAt } from "../flows/fixtures.test-support.js";
import { oauthCallback } from "../flows/oauth-sign-in.js";
import { refresh } from "../flows/refresh.js";
import { useRecoveryCode } from "../flows/use-recovery-code.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { beginOAuthSignIn } from "./authorize.js";
import { authWithProviders, discoveredProvider, plainOAuthProvider } from "./oauth.test-support.js";
import type { OAuthProviderConfig } from "./provider-config.js";
import { beginOAuthReauthentication } from "./reauthenticate.js";

/** What the provider records of its next sign-ins: tests change it between sign-ins. */
let recorded: LocalProviderAuthentication = {};
let idp: OidcTestProvider;
const providers: OidcTestProvider[] = [];

async function provider(options: OidcProviderOptions = {}): Promise<OidcTestProvider> {
  const started = await startOidcProvider({ requireAuthTime: true, authentication: () => recorded, ...options });
  providers.push(started);
  return started;
}

beforeAll(async () => {
  idp = await provider();
});

afterAll(async () => {
  await Promise.all(providers.map((started) => started.close()));
});

const hourAgo = () => Math.floor(Date.now() / 1000) - 3600;

/** A harness whose `corp` is the test provider; its clock at the real time less `behindMs`, so TOTP steps can move it on. */
function harnessWith(changes: Partial<OAuthProviderConfig> = {}, behindMs = 0) {
  return authWithProviders({ corp: discoveredProvider(idp, changes) }, { clock: makeClock(Date.now() - behindMs) });
}

type Harness = ReturnType<typeof harnessWith>;

/**
 * Signs `username` in through the provider, the provider stating a sign-in an hour old (and the
 * `recoveryCode` where the user has TOTP): the user's id, the session, and what its token says.
 */
async function signedInThroughProvider(harness: Harness, username = "alice", recoveryCode?: string) {
  const statedAuthTime = hourAgo();
  recorded = { authTime: statedAuthTime };
  const { authUrl, browserBinding } = await beginOAuthSignIn(harness.auth, { provider: "corp" });
  const callback = await driveAuthorization(authUrl, { username });
  const result = await oauthCallback(harness.auth, { provider: "corp", query: callback.search, browserBinding });
  const tokens =
    result.status === "totp_required" && recoveryCode !== undefined
      ? await useRecoveryCode(harness.auth, { tempToken: result.tempToken, recoveryCode })
      : tokensOf(result as Parameters<typeof tokensOf>[0]);
  const access = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
  return { userId: access.userId, sessionId: access.sessionId, tokens, access, statedAuthTime };
}

/** Re-authenticates a session through the provider as `username`: the authorization URL and the callback's answer. */
async function reauthenticateAs(
  harness: Harness,
  session: { userId: string; sessionId: string },
  username = "alice",
  totpCode?: string,
) {
  const begun = await beginOAuthReauthentication(harness.auth, { provider: "corp", redirect: "/settings", totpCode, ...session });
  const callback = await driveAuthorization(begun.authUrl, { username });
  const answer = oauthCallback(harness.auth, {
    provider: "corp",
    query: callback.search,
    browserBinding: begun.browserBinding,
    userAgent: "Back from the provider",
  });
  return { authUrl: new URL(begun.authUrl), answer };
}

describe("STUP-5: re-authenticating a session through its provider", () => {
  it("STUP-5, ASVS 7.6.1, 7.2.4: the provider is asked for max_age=0 and prompt=login; a fresh sign-in ends the session and answers the tokens of a new one: auth_time now, amr fed", async () => {
    const harness = harnessWith();
    const session = await signedInThroughProvider(harness);
    expect(session.access.authTime, "the provider's hour-old sign-in").toBe(session.statedAuthTime);
    recorded = {};
    const { authUrl, answer } = await reauthenticateAs(harness, session);
    expect(authUrl.searchParams.get("max_age")).toBe("0");
    expect(authUrl.searchParams.get("prompt")).toBe("login");
    const result = await answer;
    if (result.status !== "reauthenticated") throw new Error(result.status);
    expect(result.returnPath).toBe("/settings");
    expect(Object.keys(result.tokens).sort()).toEqual(["accessToken", "expiresIn", "refreshToken", "tokenType", "user"]);
    const raised = await verifyAccessToken(harness.auth, { token: result.tokens.accessToken });
    expect(raised).toMatchObject({ userId: session.userId, authTime: Math.floor(harness.clock.now / 1000), amr: ["fed"] });
    expect(raised.sessionId).not.toBe(session.sessionId);
    const ended = await harness.storage.sessions.findSession(session.sessionId);
    expect(await harness.storage.sessions.findSession(raised.sessionId)).toMatchObject({
      amr: ["fed"],
      createdAt: harness.clock.now,
      expiresAt: ended?.expiresAt,
      userAgent: "Back from the provider",
    });
    expect(ended?.revokedAt).toBe(harness.clock.now);
    expect(harness.events.filter((event) => event.type === "session.reauthenticated")).toEqual([
      expect.objectContaining({
        userId: session.userId,
        sessionId: raised.sessionId,
        replacedSessionId: session.sessionId,
        amr: ["fed"],
      }),
    ]);
    expect((await authError(verifyAccessToken(harness.auth, { token: session.tokens.accessToken }))).code).toBe(40101);
    expect((await authError(refresh(harness.auth, { refreshToken: session.tokens.refreshToken }))).code).toBe(40101);
    const next = await refresh(harness.auth, { refreshToken: result.tokens.refreshToken });
    expect((await verifyAccessToken(harness.auth, { token: next.accessToken })).sessionId).toBe(raised.sessionId);
  });

  it("STUP-5, ASVS 7.6.1: a provider that answers with an earlier sign-in of its own (auth_time 31 s or an hour old) is refused, and the session stays as it was", async () => {
    const harness = harnessWith();
    const session = await signedInThroughProvider(harness);
    for (const stale of [{ authTime: Math.floor(harness.clock.now / 1000) - 31 }, { authTime: hourAgo() }]) {
      recorded = stale;
      const error = await authError(reauthenticateAs(harness, session).then(({ answer }) => answer));
      expect(error, JSON.stringify(stale)).toMatchObject({
        code: 40100,
        message: "The provider did not sign you in again: it answered with an earlier sign-in",
      });
    }
    const stored = await harness.storage.sessions.findSession(session.sessionId);
    expect(stored).toMatchObject({ authTime: session.access.authTime * 1000, amr: ["fed"] });
    expect(harness.events.some((event) => event.type === "session.reauthenticated")).toBe(false);
  });

  it("STUP-5, ASVS 7.6.1: an ID token that states no auth_time, though max_age asked for it, is refused", async () => {
    const silent = await provider({
      tamperIdTokenClaims: ({ auth_time: _dropped, ...claims }) => claims,
    });
    const harness = authWithProviders({ corp: discoveredProvider(silent) }, { clock: makeClock(Date.now()) });
    const session = await signedInThroughProvider(harness);
    expect(session.access.authTime, "no auth_time: the sign-in's own time").toBe(Math.floor(harness.clock.now / 1000));
    recorded = {};
    const error = await authError(reauthenticateAs(harness, session).then(({ answer }) => answer));
    expect(error).toMatchObject({
      code: 40100,
      message: "The provider did not sign you in again: it answered with an earlier sign-in",
    });
  });

  it("STUP-5: another provider account than the one linked to the user is refused (40100): a stolen access token cannot be raised with the thief's", async () => {
    const harness = harnessWith();
    const session = await signedInThroughProvider(harness, "alice");
    const bob = await signedInThroughProvider(harness, "bob");
    recorded = {};
    const error = await authError(reauthenticateAs(harness, session, "bob").then(({ answer }) => answer));
    expect(error).toMatchObject({ code: 40100, message: "This is not the provider account linked to yours" });
    expect(await harness.storage.identities.unlink(bob.userId, "corp", idp.accounts.bob?.sub as string)).toBe(true);
    const unlinked = await authError(reauthenticateAs(harness, session, "bob").then(({ answer }) => answer));
    expect(unlinked, "a provider account linked to nobody").toMatchObject({
      code: 40100,
      message: "This is not the provider account linked to yours",
    });
  });

  it("STUP-5, ASVS 6.8.4: a TOTP user re-authenticates with a TOTP code beside an untrusted provider (40001 without it), and the session then holds both", async () => {
    const harness = harnessWith({}, 25_000);
    const session = await signedInThroughProvider(harness);
    await harness.storage.users.update(
      session.userId,
      { passwordHash: await harness.auth.passwords.hash("a password") },
      harness.clock.now,
    );
    const { secret, recoveryCodes } = await enrolTotp(harness.auth, session.userId, "a password");
    const fresh = await signedInThroughProvider(harness, "alice", recoveryCodes[0]);
    expect(fresh.access.amr).toEqual(["fed", "otp", "mfa"]);
    recorded = {};
    const missing = await authError(beginOAuthReauthentication(harness.auth, { provider: "corp", ...fresh }));
    expect(missing).toMatchObject({ code: 40001 });
    const wrong = await authError(
      beginOAuthReauthentication(harness.auth, { provider: "corp", totpCode: wrongCodeAt(secret, harness.clock.now), ...fresh }),
    );
    expect(wrong.code).toBe(40103);
    const code = codeAt(secret, harness.clock.advance(30_000));
    const result = await (await reauthenticateAs(harness, fresh, "alice", code)).answer;
    if (result.status !== "reauthenticated") throw new Error(result.status);
    expect((await verifyAccessToken(harness.auth, { token: result.tokens.accessToken })).amr).toEqual(["fed", "otp", "mfa"]);
  });

  it("STUP-5, ASVS 6.8.4: beside a trusted provider no code is needed when it asserts a second factor; when it asserts none the callback is refused", async () => {
    const harness = harnessWith({ trustedForSecondFactor: true }, 25_000);
    const session = await signedInThroughProvider(harness);
    await harness.storage.users.update(
      session.userId,
      { passwordHash: await harness.auth.passwords.hash("a password") },
      harness.clock.now,
    );
    const { secret } = await enrolTotp(harness.auth, session.userId, "a password");
    harness.clock.advance(30_000);
    recorded = { authTime: hourAgo(), amr: ["pwd", "otp"] };
    const { authUrl, browserBinding } = await beginOAuthSignIn(harness.auth, { provider: "corp" });
    const signedIn = await oauthCallback(harness.auth, {
      provider: "corp",
      query: (await driveAuthorization(authUrl, { username: "alice" })).search,
      browserBinding,
    });
    const fresh = await verifyAccessToken(harness.auth, {
      token: tokensOf(signedIn as Parameters<typeof tokensOf>[0]).accessToken,
    });
    const wrong = await authError(
      beginOAuthReauthentication(harness.auth, { provider: "corp", totpCode: wrongCodeAt(secret, harness.clock.now), ...fresh }),
    );
    expect(wrong.code, "a code sent beside a trusted provider is checked all the same").toBe(40103);
    recorded = {};
    const refused = await authError(reauthenticateAs(harness, fresh).then(({ answer }) => answer));
    expect(refused).toMatchObject({
      code: 40100,
      message: "The provider did not assert a second factor, and the account has one: begin again with a TOTP code",
    });
    recorded = { amr: ["pwd", "otp"] };
    const result = await (await reauthenticateAs(harness, fresh)).answer;
    if (result.status !== "reauthenticated") throw new Error(result.status);
    const renewed = await verifyAccessToken(harness.auth, { token: result.tokens.accessToken });
    expect(renewed.amr).toEqual(["fed", "pwd", "otp", "mfa"]);
    expect(renewed.sessionId).not.toBe(fresh.sessionId);
    expect((await harness.storage.sessions.findSession(renewed.sessionId))?.amr, "the provider's methods, nothing else").toEqual([
      "fed",
      "pwd",
      "otp",
      "mfa",
    ]);
  });

  it("STUP-5: a provider not linked to the user is 40900, a plain OAuth 2.0 provider 40400, a session no longer live 40101 at the callback", async () => {
    const harness = harnessWith();
    const session = await signedInThroughProvider(harness);
    const plain = authWithProviders(
      { corp: await plainOAuthProvider(idp, { profile: (info) => ({ subject: String(info.sub) }) }) },
      { clock: harness.clock },
    );
    expect(await authError(beginOAuthReauthentication(plain.auth, { provider: "corp", ...session }))).toMatchObject({
      code: 40400,
      message: "This provider cannot re-authenticate a session: it is not an OpenID Connect provider",
    });
    const other = authWithProviders({ corp: discoveredProvider(idp) }, { clock: harness.clock });
    const stranger = await signedInThroughProvider(other, "bob");
    const unlinked = authWithProviders(
      { corp: discoveredProvider(idp), partner: discoveredProvider(idp) },
      { clock: harness.clock, storage: harness.storage },
    );
    expect(await authError(beginOAuthReauthentication(unlinked.auth, { provider: "partner", ...session }))).toMatchObject({
      code: 40900,
      message: "No account of this provider is linked to yours",
    });
    expect(stranger.userId).not.toBe(session.userId);
    recorded = {};
    const begun = await beginOAuthReauthentication(harness.auth, { provider: "corp", ...session });
    await harness.storage.sessions.revokeSession(session.sessionId, harness.clock.now);
    const callback = await driveAuthorization(begun.authUrl, { username: "alice" });
    const ended = await authError(
      oauthCallback(harness.auth, { provider: "corp", query: callback.search, browserBinding: begun.browserBinding }),
    );
    expect(ended.code).toBe(40101);
  });

  it("STUP-5: a user linked at two providers re-authenticates through either; without the session to raise it is 40001", async () => {
    const harness = authWithProviders(
      { corp: discoveredProvider(idp), partner: discoveredProvider(idp) },
      { clock: makeClock(Date.now()) },
    );
    const session = await signedInThroughProvider(harness);
    const now = harness.clock.now;
    const link = {
      subject: "alice-at-partner",
      userId: session.userId,
      email: null,
      emailVerified: false,
      createdAt: now,
      lastUsedAt: now,
    };
    expect(await harness.storage.identities.link({ provider: "partner", ...link })).toBe(true);
    for (const name of ["corp", "partner"]) {
      const begun = await beginOAuthReauthentication(harness.auth, { provider: name, ...session });
      expect(new URL(begun.authUrl).searchParams.get("max_age"), name).toBe("0");
    }
    expect(
      await authError(beginOAuthReauthentication(harness.auth, { provider: "corp", userId: session.userId, sessionId: "" })),
    ).toMatchObject({ code: 40001, message: "sessionId is required" });
  });
});
