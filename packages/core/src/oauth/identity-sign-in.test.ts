import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { fakeDirectory, groupsDn, person, workingPolicy } from "../directory/directory.test-support.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { createUser } from "../flows/create-user.js";
import { saveDirectoryPolicy } from "../flows/directory-policy.js";
import {
  addUser,
  authError,
  codeAt,
  decodeBase32,
  enrolTotp,
  makeAuth,
  nextCode,
  slowStorage,
  tokensOf,
} from "../flows/fixtures.test-support.js";
import { login } from "../flows/login.js";
import { setUserDisabled } from "../flows/manage-users.js";
import { refresh } from "../flows/refresh.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { verifyTotp } from "../flows/verify-totp.js";
import { beginTotpEnrolment, finishTotpEnrolment } from "../required-factor/enrol-totp.js";
import { memoryStorage } from "../storage/memory.js";
import { linkAndSignIn, signInWithIdentity } from "./identity-sign-in.js";
import { resolvedProvider } from "./oauth.test-support.js";
import { type ProviderAuthentication, notStated } from "./provider-authentication.js";
import type { OAuthProviderConfig } from "./provider-config.js";

const base: OAuthProviderConfig = {
  issuer: "https://id.example.com",
  clientId: "portcullis",
  redirectUri: "https://app.example.com/callback",
};

const providerWith = resolvedProvider;

/** An auth with three providers: `corp` and `partner` link by verified email, `loose` does not. */
function emailLinking(changes: { partner?: Partial<OAuthProviderConfig> } = {}) {
  const harness = makeAuth({
    oauth: {
      providers: {
        corp: { ...base, linkByVerifiedEmail: true },
        partner: { ...base, issuer: "https://partner.example", linkByVerifiedEmail: true, ...changes.partner },
        loose: { ...base, issuer: "https://loose.example" },
      },
    },
  });
  const named = (name: string) => harness.auth.config.oauthProviders.get(name) as ReturnType<typeof providerWith>;
  const signedInAs = async (name: string, profile: Parameters<typeof signInWithIdentity>[2]) => {
    const result = await signInWithIdentity(harness.auth, named(name), profile);
    if (result.status !== "authenticated") throw new Error(result.status);
    return result.tokens.user.id;
  };
  return { ...harness, named, signedInAs };
}

const alice = { subject: "sub-alice", username: "alice", email: "alice@example.com", emailVerified: true };

/** An ID token's statement that the person proved a password and a one-time code at the provider. */
const assertedMfa: ProviderAuthentication = { ...notStated, amr: ["pwd", "otp"] };

describe("signInWithIdentity", () => {
  it("OA-7: a first sign-in makes an account without a password, with the default roles, linked to (provider, subject), told as user.created by provider; the next finds it", async () => {
    const harness = makeAuth();
    const provider = providerWith({ provisioning: { defaultRoles: ["user"] } });
    const first = await signInWithIdentity(harness.auth, provider, alice);
    if (first.status !== "authenticated") throw new Error(first.status);
    expect(first.tokens.user).toMatchObject({ username: "alice", roles: ["user"] });
    const access = await verifyAccessToken(harness.auth, { token: first.tokens.accessToken });
    expect(access.amr).toEqual(["fed"]);
    expect(await harness.storage.identities.find("corp", "sub-alice")).toMatchObject({
      userId: access.userId,
      email: "alice@example.com",
      emailVerified: true,
    });
    expect((await harness.storage.users.findById(access.userId))?.passwordHash).toBeNull();
    const second = await signInWithIdentity(harness.auth, provider, { ...alice, username: "renamed" });
    if (second.status !== "authenticated") throw new Error(second.status);
    expect(second.tokens.user.id).toBe(access.userId);
    expect(harness.events.filter((event) => event.type === "user.created")).toEqual([
      { type: "user.created", userId: access.userId, by: "provider", at: harness.clock.now },
    ]);
  });

  it("AD-2: a first sign-in whose provider maps more roles than an account may hold is refused with 42200 naming the bound; no account is made", async () => {
    const harness = makeAuth();
    const provider = providerWith({ provisioning: { defaultRoles: ["user"] } });
    const roles = Array.from({ length: 50 }, (_, index) => `mapped-${index}`);
    expect(await authError(signInWithIdentity(harness.auth, provider, { ...alice, roles }))).toMatchObject({
      code: ErrorCode.ValidationFailed,
      message: "roles must be at most 50 names; got 51",
    });
    expect(await harness.storage.users.findByUsernameKey("alice")).toBeNull();
    expect(await harness.storage.identities.find("corp", alice.subject)).toBeNull();
    const fits = await signInWithIdentity(harness.auth, provider, { ...alice, roles: roles.slice(1) });
    expect(fits.status === "authenticated" && fits.tokens.user.roles).toHaveLength(50);
  });

  it("OA-7: an existing account with the same username or email is never taken over: the new account gets another name", async () => {
    const harness = makeAuth();
    const existing = await addUser(harness.auth, "alice");
    const result = await signInWithIdentity(harness.auth, providerWith(), alice);
    if (result.status !== "authenticated") throw new Error(result.status);
    expect(result.tokens.user.id).not.toBe(existing);
    expect(result.tokens.user.username).toMatch(/^alice-[a-z0-9x]+$/);
  });

  it("OA-7: a provider username that is no valid username falls back to the email's local part, then to <provider>-user; a long one is cut", async () => {
    const harness = makeAuth();
    const provider = providerWith();
    const named = async (profile: Parameters<typeof signInWithIdentity>[2]) => {
      const result = await signInWithIdentity(harness.auth, provider, profile);
      if (result.status !== "authenticated") throw new Error(result.status);
      return result.tokens.user.username;
    };
    expect(await named({ subject: "s1", username: "bad\u0000name", email: "frank@example.com" })).toBe("frank");
    expect(await named({ subject: "s2", username: "   " })).toBe("corp-user");
    expect(await named({ subject: "s3", username: "x".repeat(300) })).toMatch(/^x{100}$/);
    expect(await named({ subject: "s4", username: ` ${"y".repeat(99)} z` })).toBe("y".repeat(99));
  });

  it("OA-7: with provisioning off, an unlinked person is 40100 and nothing is created", async () => {
    const harness = makeAuth();
    const error = await authError(signInWithIdentity(harness.auth, providerWith({ provisioning: false }), alice));
    expect(error).toMatchObject({ code: 40100, message: "No account is linked to this sign-in" });
    expect(await harness.storage.identities.find("corp", "sub-alice")).toBeNull();
  });

  it("EN-3, TMP-1: a disabled account is 40300; a TOTP user gets a temporary token unless the provider is trusted for the second factor", async () => {
    const harness = makeAuth();
    const first = await signInWithIdentity(harness.auth, providerWith(), alice);
    if (first.status !== "authenticated") throw new Error(first.status);
    const userId = first.tokens.user.id;
    await harness.storage.users.update(
      userId,
      { passwordHash: await harness.auth.passwords.hash("correct horse battery staple") },
      harness.clock.now,
    );
    await enrolTotp(harness.auth, userId);
    expect((await signInWithIdentity(harness.auth, providerWith(), alice)).status).toBe("totp_required");
    const trusted = providerWith({ trustedForSecondFactor: true });
    expect((await signInWithIdentity(harness.auth, trusted, alice, {}, assertedMfa)).status).toBe("authenticated");
    await setUserDisabled(harness.auth, { userId, disabled: true });
    expect((await authError(signInWithIdentity(harness.auth, providerWith(), alice))).code).toBe(40300);
  });

  it("OA-7: linking by email is off by default: the same verified email at another provider makes another account", async () => {
    const harness = makeAuth({ oauth: { providers: { corp: base, partner: { ...base, issuer: "https://partner.example" } } } });
    const sign = async (name: string) => {
      const result = await signInWithIdentity(harness.auth, harness.auth.config.oauthProviders.get(name) as never, alice);
      if (result.status !== "authenticated") throw new Error(result.status);
      return result.tokens.user.id;
    };
    expect(await sign("corp")).not.toBe(await sign("partner"));
  });

  it("OA-7, SE-2: with it on, a first sign-in whose verified email another linking provider verified joins that account, linked, its sessions from before ended", async () => {
    const h = emailLinking();
    const userId = await h.signedInAs("corp", { ...alice, email: " Alice@Example.COM " });
    expect((await h.storage.identities.find("corp", alice.subject))?.email).toBe("alice@example.com");
    const before = (await h.storage.users.findById(userId))?.tokenVersion as number;
    h.events.length = 0;
    expect(await h.signedInAs("partner", { ...alice, subject: "partner-alice", username: "other-name" })).toBe(userId);
    expect(await h.storage.identities.find("partner", "partner-alice")).toMatchObject({ userId, emailVerified: true });
    expect((await h.storage.users.findById(userId))?.tokenVersion).toBe(before);
    expect(h.events).toContainEqual(
      expect.objectContaining({ type: "sessions.ended", userId, keptSessionId: null, count: 1, reason: "identity_linked" }),
    );
    expect(h.events).toContainEqual(expect.objectContaining({ type: "identity.linked", userId, provider: "partner" }));
    expect(await h.signedInAs("partner", { ...alice, subject: "partner-alice", email: "changed@example.com" })).toBe(userId);
  });

  it("OA-7: an unverified email, an unverified match, a match from a provider that does not link, or the same provider never link", async () => {
    const h = emailLinking();
    const verifiedAtCorp = await h.signedInAs("corp", alice);
    const unverified = await h.signedInAs("partner", { ...alice, subject: "p1", emailVerified: false });
    expect(unverified).not.toBe(verifiedAtCorp);
    expect(await h.signedInAs("corp", { ...alice, subject: "corp-recycled" })).not.toBe(verifiedAtCorp);

    const other = emailLinking();
    const looseUser = await other.signedInAs("loose", { ...alice, email: "dora@example.com" });
    expect(await other.signedInAs("partner", { ...alice, subject: "p2", email: "dora@example.com" })).not.toBe(looseUser);
    const unverifiedAtCorp = await other.signedInAs("corp", {
      ...alice,
      subject: "c3",
      email: "erin@example.com",
      emailVerified: false,
    });
    expect(await other.signedInAs("partner", { ...alice, subject: "p3", email: "erin@example.com" })).not.toBe(unverifiedAtCorp);
  });

  it("OA-7: an email two accounts hold links to neither; a disabled match is 40300 and links nothing; provisioning off still links", async () => {
    const h = emailLinking({ partner: { provisioning: false } });
    const first = await h.signedInAs("corp", alice);
    const second = await h.signedInAs("corp", { ...alice, subject: "sub-alice-2" });
    expect(second).not.toBe(first);
    expect((await authError(h.signedInAs("partner", { ...alice, subject: "p1" }))).code).toBe(40100);
    expect(await h.storage.identities.find("partner", "p1")).toBeNull();

    const single = emailLinking({ partner: { provisioning: false } });
    const owner = await single.signedInAs("corp", { ...alice, email: "gail@example.com" });
    expect(await single.signedInAs("partner", { ...alice, subject: "p2", email: "gail@example.com" })).toBe(owner);
    const disabled = await single.signedInAs("corp", { ...alice, subject: "c3", email: "hana@example.com" });
    await setUserDisabled(single.auth, { userId: disabled, disabled: true });
    expect((await authError(single.signedInAs("partner", { ...alice, subject: "p3", email: "hana@example.com" }))).code).toBe(
      40300,
    );
    expect(await single.storage.identities.find("partner", "p3")).toBeNull();
  });

  it("OA-7, EV-1: a provider's verified email joins the account holding that address verified (lower-cased after NFKC), only where the provider links by email", async () => {
    const h = emailLinking();
    const holder = await createUser(h.auth, { username: "holder", email: "\uFF21lice@Example.COM", emailVerified: true });
    expect(await h.signedInAs("corp", alice)).toBe(holder.id);
    expect(await h.storage.identities.find("corp", alice.subject)).toMatchObject({ userId: holder.id });
    expect(await h.signedInAs("loose", { ...alice, subject: "l1" })).not.toBe(holder.id);
    expect(await h.signedInAs("partner", { ...alice, subject: "p1", emailVerified: false })).not.toBe(holder.id);
  });

  it("OA-7, EV-1: an account holding the address unverified is never joined, so typing someone's address at sign-up takes over nothing", async () => {
    const h = emailLinking();
    const squatter = await createUser(h.auth, { username: "squatter", email: "alice@example.com" });
    const signedIn = await h.signedInAs("corp", alice);
    expect(signedIn).not.toBe(squatter.id);
    expect(await h.storage.identities.find("corp", alice.subject)).toMatchObject({ userId: signedIn });
  });

  it("OA-7, EV-1: an address verified on one account and linked from a provider on another joins neither", async () => {
    const h = emailLinking();
    const atCorp = await h.signedInAs("corp", alice);
    const holder = await createUser(h.auth, { username: "holder", email: "alice@example.com", emailVerified: true });
    const third = await h.signedInAs("partner", { ...alice, subject: "p1" });
    expect([atCorp, holder.id]).not.toContain(third);
  });

  it("EV-1: an account made from a provider keeps its email unverified, even one the provider verified; an email that is no address is not kept", async () => {
    const h = emailLinking();
    const userId = await h.signedInAs("corp", { ...alice, email: " Alice@Example.com " });
    expect(await h.storage.users.findById(userId)).toMatchObject({ email: "Alice@Example.com", emailVerified: false });
    expect(await h.storage.users.findByVerifiedEmail("alice@example.com")).toBeNull();
    const odd = await h.signedInAs("loose", { ...alice, subject: "l2", username: "odd", email: "not an address" });
    expect(await h.storage.users.findById(odd)).toMatchObject({ email: null, emailVerified: false });
  });

  it("OA-7: a provider that does not link by email never joins an account, even one whose provider does; a link of a provider no longer configured is passed over", async () => {
    const h = emailLinking();
    const atCorp = await h.signedInAs("corp", alice);
    expect(await h.signedInAs("loose", { ...alice, subject: "l1" })).not.toBe(atCorp);
    await h.storage.identities.link({
      provider: "removed",
      subject: "r1",
      userId: atCorp,
      email: "alice@example.com",
      emailVerified: true,
      createdAt: 0,
      lastUsedAt: null,
    });
    expect(await h.signedInAs("partner", { ...alice, subject: "p1" })).toBe(atCorp);
  });

  it("OA-7, SE-2: linkAndSignIn links once and signs in with amr fed, the token version unmoved; linking again is a no-op; a disabled or unknown user is 40300", async () => {
    const h = emailLinking();
    const userId = await addUser(h.auth, "nora");
    const corp = h.named("corp");
    const before = (await h.storage.users.findById(userId))?.tokenVersion as number;
    const first = await linkAndSignIn(h.auth, corp, alice, userId);
    if (first.status !== "authenticated") throw new Error(first.status);
    expect((await verifyAccessToken(h.auth, { token: first.tokens.accessToken })).amr).toEqual(["fed"]);
    expect((await h.storage.users.findById(userId))?.tokenVersion).toBe(before);
    h.events.length = 0;
    const again = await linkAndSignIn(h.auth, corp, alice, userId);
    expect(again.status).toBe("authenticated");
    expect((await h.storage.users.findById(userId))?.tokenVersion).toBe(before);
    expect(h.events.map((event) => event.type)).not.toContain("identity.linked");
    await setUserDisabled(h.auth, { userId, disabled: true });
    for (const who of [userId, "no-such-user"]) {
      expect(await authError(linkAndSignIn(h.auth, corp, { ...alice, subject: "other" }, who))).toMatchObject({
        code: 40300,
        message: "The account is disabled",
      });
    }
    expect(await h.storage.identities.find("corp", "other")).toBeNull();
  });

  it("TMP-1: linkAndSignIn asks a TOTP user for the code unless the provider is trusted; a link that vanished meanwhile is 40900", async () => {
    const h = emailLinking();
    const userId = await addUser(h.auth, "olga");
    await enrolTotp(h.auth, userId);
    expect((await linkAndSignIn(h.auth, h.named("corp"), alice, userId)).status).toBe("totp_required");
    const trusted = providerWith({ trustedForSecondFactor: true });
    expect((await linkAndSignIn(h.auth, trusted, alice, userId)).status).toBe("totp_required");
    expect((await linkAndSignIn(h.auth, trusted, alice, userId, {}, assertedMfa)).status).toBe("authenticated");
    h.storage.identities.link = async () => false;
    h.storage.identities.find = async () => null;
    expect((await authError(linkAndSignIn(h.auth, h.named("corp"), { subject: "gone" }, userId))).code).toBe(40900);
  });

  it("OA-7: a later sign-in makes nothing new; a link whose account is gone is 40100", async () => {
    const storage = memoryStorage();
    const harness = makeAuth({ storage });
    await signInWithIdentity(harness.auth, providerWith(), alice);
    await signInWithIdentity(harness.auth, providerWith(), alice);
    expect(storage.sizes().users).toBe(1);
    await storage.identities.link({
      provider: "corp",
      subject: "orphan",
      userId: "deleted-user",
      email: null,
      emailVerified: false,
      createdAt: 0,
      lastUsedAt: null,
    });
    expect(await authError(signInWithIdentity(harness.auth, providerWith(), { subject: "orphan" }))).toMatchObject({
      code: 40100,
      message: "No account is linked to this sign-in",
    });
  });

  it("OA-7: usernames for new accounts: trimmed before they are cut; a taken one gets a suffix of base64url with - and _ as x; when every try is taken, 40900", async () => {
    // The 4 bytes of a username suffix are fixed (0xfb: "-" in base64url); ids and tokens stay random.
    const harness = makeAuth({
      randomBytes: (size) => (size === 4 ? new Uint8Array(size).fill(0xfb) : new Uint8Array(randomBytes(size))),
    });
    const named = async (profile: Parameters<typeof signInWithIdentity>[2]) => {
      const result = await signInWithIdentity(harness.auth, providerWith(), profile);
      if (result.status !== "authenticated") throw new Error(result.status);
      return result.tokens.user.username;
    };
    expect(await named({ subject: "s1", username: `   ${"a".repeat(100)}` })).toBe("a".repeat(100));
    expect(await named({ subject: "s2", username: "taken" })).toBe("taken");
    expect(await named({ subject: "s3", username: "taken" })).toMatch(/^taken-[a-z0-9]*x[a-z0-9x]*$/);
    expect(await authError(signInWithIdentity(harness.auth, providerWith(), { subject: "s4", username: "taken" }))).toMatchObject(
      {
        code: 40900,
        message: "No free username could be found for this account",
      },
    );
  });

  it("OA-7, SE-2: a verified profile without an email joins nothing; a link by email ends the account's sessions for that reason", async () => {
    const h = emailLinking();
    const owner = await h.signedInAs("corp", { subject: "c1", emailVerified: true });
    expect(await h.signedInAs("partner", { subject: "p1", emailVerified: true })).not.toBe(owner);
    const atCorp = await h.signedInAs("corp", alice);
    h.events.length = 0;
    await h.signedInAs("partner", { ...alice, subject: "p2" });
    expect(h.events).toContainEqual(
      expect.objectContaining({ type: "sessions.ended", userId: atCorp, count: 1, reason: "identity_linked" }),
    );
  });

  it("ST-1: concurrent first sign-ins of one person leave one usable account linked; the others' new accounts are disabled", async () => {
    const storage = slowStorage(memoryStorage());
    const created: string[] = [];
    const create = storage.users.create.bind(storage.users);
    storage.users.create = async (user) => {
      const stored = await create(user);
      if (stored) created.push(user.id);
      return stored;
    };
    const harness = makeAuth({ storage });
    const results = await Promise.all(Array.from({ length: 5 }, () => signInWithIdentity(harness.auth, providerWith(), alice)));
    const ids = new Set(results.map((result) => (result.status === "authenticated" ? result.tokens.user.id : "")));
    expect(ids.size).toBe(1);
    const linked = await harness.storage.identities.find("corp", "sub-alice");
    expect(ids.has(linked?.userId as string)).toBe(true);
    expect(created.length).toBeGreaterThan(1);
    for (const id of created) {
      expect((await storage.users.findById(id))?.disabled, id).toBe(id !== linked?.userId);
    }
  });

  it("a storage failure while making the account is passed on, not taken for a taken username", async () => {
    const storage = memoryStorage();
    storage.users.create = async () => {
      throw new AuthError(ErrorCode.Unavailable, "the database is down");
    };
    const harness = makeAuth({ storage });
    expect(await authError(signInWithIdentity(harness.auth, providerWith(), alice))).toMatchObject({
      code: 50300,
      message: "the database is down",
    });
  });
});

describe("a directory account signing in through a provider", () => {
  it("LDAP-5: signs in only as the directory has it now, whether found by its link or linking afresh", async () => {
    const directory = fakeDirectory([person("bob", [groupsDn.engineers])]);
    const harness = makeAuth({ directory, oauth: { providers: { corp: base } } });
    await saveDirectoryPolicy(harness.auth, workingPolicy);
    const signedIn = await login(harness.auth, { username: "bob", password: "bob directory password", provider: "directory" });
    if (signedIn.status !== "authenticated") throw new Error(signedIn.status);
    const provider = harness.auth.config.oauthProviders.get("corp") as ReturnType<typeof providerWith>;
    const profile = { subject: "sub-bob", username: "bob-at-corp" };
    const linked = await linkAndSignIn(harness.auth, provider, profile, signedIn.tokens.user.id);
    expect(linked.status === "authenticated" && linked.tokens.user.roles).toEqual(["engineer"]);
    (directory.people[0] as ReturnType<typeof person>).entry.groups = [groupsDn.admins];
    const promoted = await signInWithIdentity(harness.auth, provider, profile);
    expect(promoted.status === "authenticated" && promoted.tokens.user.roles).toEqual(["admin"]);
    directory.people.length = 0;
    expect((await authError(signInWithIdentity(harness.auth, provider, profile))).code).toBe(ErrorCode.Forbidden);
    expect((await authError(linkAndSignIn(harness.auth, provider, profile, signedIn.tokens.user.id))).code).toBe(
      ErrorCode.Forbidden,
    );
  });
});

describe("STUP-5: a provider's acr, amr and auth_time", () => {
  /** A user who signs in through `corp` (with TOTP on when asked), and the harness. */
  async function federatedUser(options: { totp?: boolean; secondFactor?: { required: "always" } } = {}) {
    const harness = makeAuth(options.secondFactor ? { secondFactor: options.secondFactor } : {});
    await signInWithIdentity(harness.auth, providerWith(), alice);
    const userId = (await harness.storage.identities.find("corp", alice.subject))?.userId as string;
    let secret: Uint8Array | undefined;
    if (options.totp) {
      await harness.storage.users.update(
        userId,
        { passwordHash: await harness.auth.passwords.hash("a password") },
        harness.clock.now,
      );
      secret = (await enrolTotp(harness.auth, userId, "a password")).secret;
    }
    return { harness, userId, secret };
  }

  it("STUP-5, ASVS 6.8.4: trustedForSecondFactor without an asserted second factor asks a TOTP user for the code, as without the option", async () => {
    const { harness } = await federatedUser({ totp: true });
    const trusted = providerWith({ trustedForSecondFactor: true, secondFactorAcrValues: ["urn:example:mfa"] });
    for (const stated of [
      notStated,
      { ...notStated, amr: ["pwd"] },
      { ...notStated, amr: ["otp"] },
      { ...notStated, acr: "urn:example:pwd" },
    ]) {
      expect((await signInWithIdentity(harness.auth, trusted, alice, {}, stated)).status, JSON.stringify(stated)).toBe(
        "totp_required",
      );
    }
  });

  it("STUP-5, ASVS 6.8.4: with amr pwd and otp, or a listed acr, it does not, and the session's amr holds fed, the provider's values and mfa", async () => {
    const { harness } = await federatedUser({ totp: true });
    const trusted = providerWith({ trustedForSecondFactor: true, secondFactorAcrValues: ["urn:example:mfa"] });
    const cases: [ProviderAuthentication, string[]][] = [
      [assertedMfa, ["fed", "pwd", "otp", "mfa"]],
      [{ ...notStated, acr: "urn:example:mfa" }, ["fed", "mfa"]],
      [{ ...notStated, amr: ["hwk", "pin"] }, ["fed", "hwk", "mfa"]],
    ];
    for (const [stated, amr] of cases) {
      const result = await signInWithIdentity(harness.auth, trusted, alice, {}, stated);
      const access = await verifyAccessToken(harness.auth, { token: tokensOf(result).accessToken });
      expect(access.amr, JSON.stringify(stated)).toEqual(amr);
    }
    const untrusted = await signInWithIdentity(harness.auth, providerWith(), alice, {}, assertedMfa);
    expect(untrusted.status, "a provider that is not trusted is asked the code whatever it asserts").toBe("totp_required");
  });

  it("STUP-5: the unsafe option keeps the old behaviour: every sign-in counts as two factors, and says so in amr", async () => {
    const { harness } = await federatedUser({ totp: true });
    const unsafe = providerWith({ trustedForSecondFactor: true, unsafeTrustForSecondFactorWithoutAssertion: true });
    const result = await signInWithIdentity(harness.auth, unsafe, alice);
    expect((await verifyAccessToken(harness.auth, { token: tokensOf(result).accessToken })).amr).toEqual(["fed", "mfa"]);
  });

  it("STUP-5, ASVS 7.6.1: the session's sign-in time is the provider's auth_time, through the TOTP step too; unstated, the sign-in's", async () => {
    const { harness, secret } = await federatedUser({ totp: true });
    const hourAgo = Math.floor(harness.clock.now / 1000) - 3600;
    const trusted = providerWith({ trustedForSecondFactor: true });
    const direct = await signInWithIdentity(harness.auth, trusted, alice, {}, { ...assertedMfa, authTime: hourAgo });
    expect((await verifyAccessToken(harness.auth, { token: tokensOf(direct).accessToken })).authTime).toBe(hourAgo);

    const pending = await signInWithIdentity(harness.auth, providerWith(), alice, {}, { ...notStated, authTime: hourAgo });
    if (pending.status !== "totp_required") throw new Error(pending.status);
    const tokens = await verifyTotp(harness.auth, {
      tempToken: pending.tempToken,
      code: nextCode(harness, secret as Uint8Array),
    });
    const access = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
    expect(access).toMatchObject({ authTime: hourAgo, amr: ["fed", "otp", "mfa"] });

    const unstated = await signInWithIdentity(harness.auth, providerWith(), alice, {}, notStated);
    if (unstated.status !== "totp_required") throw new Error(unstated.status);
    const later = await verifyTotp(harness.auth, {
      tempToken: unstated.tempToken,
      code: nextCode(harness, secret as Uint8Array),
    });
    expect((await verifyAccessToken(harness.auth, { token: later.accessToken })).authTime).toBe(
      Math.floor(harness.clock.now / 1000),
    );
  });

  it("STUP-5, ASVS 7.6.1: through the enrolment of a required second factor (40105) too", async () => {
    const { harness } = await federatedUser({ secondFactor: { required: "always" } });
    const hourAgo = Math.floor(harness.clock.now / 1000) - 3600;
    const result = await signInWithIdentity(harness.auth, providerWith(), alice, {}, { ...notStated, authTime: hourAgo });
    if (result.status !== "enrolment_required") throw new Error(result.status);
    const setup = await beginTotpEnrolment(harness.auth, { tempToken: result.tempToken });
    const code = codeAt(decodeBase32(setup.secret), harness.clock.now);
    const { tokens } = await finishTotpEnrolment(harness.auth, { tempToken: result.tempToken, code });
    expect(await verifyAccessToken(harness.auth, { token: tokens.accessToken })).toMatchObject({
      authTime: hourAgo,
      amr: ["fed", "otp", "mfa"],
    });
  });

  it("STUP-5: a required second factor is met by a trusted provider's asserted one, at sign-in and at refresh; not by a sign-in that asserts none", async () => {
    const { harness, userId } = await federatedUser({ secondFactor: { required: "always" } });
    const trusted = providerWith({ trustedForSecondFactor: true });
    const asserted = tokensOf(await signInWithIdentity(harness.auth, trusted, alice, {}, assertedMfa));
    expect((await refresh(harness.auth, { refreshToken: asserted.refreshToken })).user.id).toBe(userId);
    expect((await signInWithIdentity(harness.auth, trusted, alice, {}, notStated)).status).toBe("enrolment_required");
  });
});
