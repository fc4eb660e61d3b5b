import { emailKeyOf } from "../../users/email.js";
import { type SuiteContext, concurrently, countWhere } from "./harness.js";
import { BASE_TIME, createUser, sampleIdentity, sampleUser, uniqueId } from "./samples.js";

/** An address no other test uses, with upper-case letters in both parts. */
const uniqueEmail = () => `${uniqueId("Someone")}@Example.COM`;

/**
 * Addresses on users (EV-1): stored verified or not, found only when verified and only by their
 * key (NFKC, lower case), and never held verified by two accounts, under concurrent writers too.
 */
export function verifiedEmailTests({ test: { it, expect }, makeStorage }: SuiteContext): void {
  it("EV-1: create stores the address and its flag; findByVerifiedEmail finds a verified one by its key, never an unverified one", async () => {
    const storage = await makeStorage();
    const verified = sampleUser({ email: uniqueEmail(), emailVerified: true });
    const unverified = sampleUser({ email: uniqueEmail(), emailVerified: false });
    const none = sampleUser();
    for (const user of [verified, unverified, none]) expect(await storage.users.create(user)).toBe(true);
    expect(await storage.users.findById(verified.id)).toEqual(verified);
    expect(await storage.users.findById(unverified.id)).toEqual(unverified);
    expect(await storage.users.findById(none.id)).toEqual({ ...none, email: null, emailVerified: false });
    expect(await storage.users.findByVerifiedEmail(emailKeyOf(verified.email as string))).toEqual(verified);
    expect(await storage.users.findByVerifiedEmail(verified.email as string)).toBeNull();
    expect(await storage.users.findByVerifiedEmail(emailKeyOf(unverified.email as string))).toBeNull();
  });

  it("EV-1: create refuses a second account with the same address verified, compared lower-cased after NFKC, storing nothing", async () => {
    const storage = await makeStorage();
    const name = uniqueId("ann");
    const first = sampleUser({ email: `${name}@example.com`, emailVerified: true });
    expect(await storage.users.create(first)).toBe(true);
    // U+FF21 FULLWIDTH A is A after NFKC; the domain differs only in case.
    const twin = sampleUser({ email: `\uFF21${name.slice(1)}@EXAMPLE.com`, emailVerified: true });
    expect(await storage.users.create(twin)).toBe(false);
    expect(await storage.users.findById(twin.id)).toBeNull();
    expect(await storage.users.findByUsernameKey(twin.usernameKey)).toBeNull();
    expect(await storage.users.findByVerifiedEmail(emailKeyOf(twin.email as string))).toEqual(first);
  });

  it("EV-1, OA-7: a user's verified address and a provider link's verified email may be the same, each found by its own lookup", async () => {
    const storage = await makeStorage();
    const email = `${uniqueId("both")}@example.com`;
    const user = sampleUser({ email, emailVerified: true });
    expect(await storage.users.create(user)).toBe(true);
    const identity = sampleIdentity(user.id, { email, emailVerified: true });
    expect(await storage.identities.link(identity)).toBe(true);
    expect(await storage.users.findByVerifiedEmail(emailKeyOf(email))).toEqual(user);
    expect(await storage.identities.findByVerifiedEmail(email)).toEqual([identity]);
    expect((await storage.users.setEmail(user.id, null, BASE_TIME + 1)).outcome).toBe("set");
    expect(await storage.identities.findByVerifiedEmail(email)).toEqual([identity]);
    expect(await storage.identities.unlink(user.id, identity.provider, identity.subject)).toBe(true);
    expect((await storage.users.setEmail(user.id, { email, verified: true }, BASE_TIME + 2)).outcome).toBe("set");
  });

  it("EV-1: unverified addresses may repeat, beside a verified one", async () => {
    const storage = await makeStorage();
    const email = uniqueEmail();
    const holder = sampleUser({ email, emailVerified: true });
    const others = [
      sampleUser({ email, emailVerified: false }),
      sampleUser({ email: email.toLowerCase(), emailVerified: false }),
    ];
    for (const user of [holder, ...others]) expect(await storage.users.create(user)).toBe(true);
    for (const user of others) expect(await storage.users.findById(user.id)).toEqual(user);
    expect((await storage.users.findByVerifiedEmail(emailKeyOf(email)))?.id).toBe(holder.id);
  });

  it("EV-1: of 10 concurrent creates with one verified address, exactly one stores", async () => {
    const storage = await makeStorage();
    const email = uniqueEmail();
    const users = Array.from({ length: 10 }, () => sampleUser({ email, emailVerified: true }));
    const created = await concurrently(10, (index) => storage.users.create(users[index] as (typeof users)[number]));
    expect(countWhere(created, (stored) => stored !== false)).toBe(1);
    const winner = users[created.indexOf(true)];
    expect((await storage.users.findByVerifiedEmail(emailKeyOf(email)))?.id).toBe(winner?.id);
  });

  it("setEmail sets, verifies and clears the address, sets updatedAt and leaves the other fields; an unknown id is unknown", async () => {
    const storage = await makeStorage();
    const user = sampleUser();
    await storage.users.create(user);
    const email = uniqueEmail();
    const pending = { ...user, email, emailVerified: false, updatedAt: BASE_TIME + 1 };
    expect(await storage.users.setEmail(user.id, { email, verified: false }, BASE_TIME + 1)).toEqual({
      outcome: "set",
      user: pending,
    });
    expect(await storage.users.findById(user.id)).toEqual(pending);
    expect(await storage.users.findByVerifiedEmail(emailKeyOf(email))).toBeNull();
    const verified = { ...pending, emailVerified: true, updatedAt: BASE_TIME + 2 };
    expect(await storage.users.setEmail(user.id, { email, verified: true }, BASE_TIME + 2)).toEqual({
      outcome: "set",
      user: verified,
    });
    expect(await storage.users.findByVerifiedEmail(emailKeyOf(email))).toEqual(verified);
    // Setting the address it already holds verified is no conflict with itself.
    expect((await storage.users.setEmail(user.id, { email, verified: true }, BASE_TIME + 3)).outcome).toBe("set");
    const cleared = { ...user, email: null, emailVerified: false, updatedAt: BASE_TIME + 4 };
    expect(await storage.users.setEmail(user.id, null, BASE_TIME + 4)).toEqual({ outcome: "set", user: cleared });
    expect(await storage.users.findByVerifiedEmail(emailKeyOf(email))).toBeNull();
    expect(await storage.users.setEmail(uniqueId("user"), { email, verified: false }, BASE_TIME)).toEqual({
      outcome: "unknown",
    });
  });

  it("EV-1: setEmail of an address another account holds verified is taken and writes nothing; unverified it is set", async () => {
    const storage = await makeStorage();
    const email = uniqueEmail();
    const holderId = await createUser(storage, { email, emailVerified: true });
    const otherId = await createUser(storage);
    const before = await storage.users.findById(otherId);
    expect(await storage.users.setEmail(otherId, { email: email.toLowerCase(), verified: true }, BASE_TIME + 1)).toEqual({
      outcome: "taken",
    });
    expect(await storage.users.findById(otherId)).toEqual(before);
    expect((await storage.users.findByVerifiedEmail(emailKeyOf(email)))?.id).toBe(holderId);
    const unverified = await storage.users.setEmail(otherId, { email, verified: false }, BASE_TIME + 2);
    expect(unverified.outcome === "set" && unverified.user.email).toBe(email);
  });

  it("EV-1: a verified address given up (changed or cleared) is free for another account", async () => {
    const storage = await makeStorage();
    const email = uniqueEmail();
    const first = await createUser(storage, { email, emailVerified: true });
    const second = await createUser(storage);
    expect((await storage.users.setEmail(first, { email: uniqueEmail(), verified: true }, BASE_TIME + 1)).outcome).toBe("set");
    expect((await storage.users.setEmail(second, { email, verified: true }, BASE_TIME + 2)).outcome).toBe("set");
    expect((await storage.users.findByVerifiedEmail(emailKeyOf(email)))?.id).toBe(second);
    expect((await storage.users.setEmail(second, { email, verified: false }, BASE_TIME + 3)).outcome).toBe("set");
    expect(await storage.users.findByVerifiedEmail(emailKeyOf(email))).toBeNull();
    expect((await storage.users.setEmail(first, { email, verified: true }, BASE_TIME + 4)).outcome).toBe("set");
  });

  it("EV-1: of 10 accounts verifying one address at once, exactly one holds it", async () => {
    const storage = await makeStorage();
    const email = uniqueEmail();
    const ids = await Promise.all(Array.from({ length: 10 }, () => createUser(storage)));
    const changes = await concurrently(10, (index) =>
      storage.users.setEmail(ids[index] as string, { email, verified: true }, BASE_TIME + 1),
    );
    expect(countWhere(changes, (change) => change.outcome === "set")).toBe(1);
    expect(countWhere(changes, (change) => change.outcome === "taken")).toBe(9);
    const holder = await storage.users.findByVerifiedEmail(emailKeyOf(email));
    expect(holder?.id).toBe(ids[changes.findIndex((change) => change.outcome === "set")]);
  });
}
