import type { SuiteContext } from "./harness.js";
import { createUser, sampleIdentity, uniqueId } from "./samples.js";

/** Registers the `identities` suite: (provider, subject) is unique (OA-7), and unlink matches the user (ST-2). */
export function identitiesSuite({ test: { describe, it, expect }, makeStorage }: SuiteContext): void {
  describe("identities", () => {
    it("link stores an identity that find returns; an unknown one is null", async () => {
      const storage = await makeStorage();
      const identity = sampleIdentity(await createUser(storage));
      expect(await storage.identities.link(identity)).toBe(true);
      expect(await storage.identities.find(identity.provider, identity.subject)).toEqual(identity);
      expect(await storage.identities.find(identity.provider, uniqueId("subject"))).toBeNull();
      expect(await storage.identities.find("another-provider", identity.subject)).toBeNull();
    });

    it("OA-7: link refuses a (provider, subject) already linked, to anyone, and stores nothing", async () => {
      const storage = await makeStorage();
      const owner = await createUser(storage);
      const other = await createUser(storage);
      const identity = sampleIdentity(owner);
      await storage.identities.link(identity);
      expect(
        await storage.identities.link(sampleIdentity(other, { subject: identity.subject, email: "other@example.com" })),
      ).toBe(false);
      expect(await storage.identities.link(sampleIdentity(owner, { subject: identity.subject }))).toBe(false);
      expect(await storage.identities.find(identity.provider, identity.subject)).toEqual(identity);
      expect(await storage.identities.listByUser(other)).toEqual([]);
    });

    it("OA-7: the same subject at another provider is another identity", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const github = sampleIdentity(userId, { provider: "github" });
      const google = sampleIdentity(userId, { provider: "google", subject: github.subject });
      expect(await storage.identities.link(github)).toBe(true);
      expect(await storage.identities.link(google)).toBe(true);
      expect(await storage.identities.find("google", github.subject)).toEqual(google);
      expect(await storage.identities.find("github", github.subject)).toEqual(github);
    });

    it("listByUser returns that user's identities only", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const otherId = await createUser(storage);
      const mine = [sampleIdentity(userId, { provider: "github" }), sampleIdentity(userId, { provider: "google" })];
      for (const identity of [...mine, sampleIdentity(otherId)]) await storage.identities.link(identity);
      const listed = await storage.identities.listByUser(userId);
      expect([...listed].sort((a, b) => a.provider.localeCompare(b.provider))).toEqual(mine);
      expect(await storage.identities.listByUser(uniqueId("user"))).toEqual([]);
    });

    it("OA-7: findByVerifiedEmail finds verified identities with exactly that email, and nothing else", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const otherId = await createUser(storage);
      const email = `${uniqueId("person")}@example.com`;
      const verified = sampleIdentity(userId, { provider: "github", email });
      const elsewhere = sampleIdentity(otherId, { provider: "google", email });
      const others = [
        sampleIdentity(otherId, { provider: "gitlab", email, emailVerified: false }),
        sampleIdentity(otherId, { provider: "forge", email: null }),
        sampleIdentity(otherId, { provider: "corp", email: `x${email}` }),
        sampleIdentity(otherId, { provider: "upper", email: email.toUpperCase() }),
      ];
      for (const identity of [verified, elsewhere, ...others]) await storage.identities.link(identity);
      const found = await storage.identities.findByVerifiedEmail(email);
      expect([...found].sort((a, b) => a.provider.localeCompare(b.provider))).toEqual([verified, elsewhere]);
      expect(await storage.identities.findByVerifiedEmail(`${email}.evil`)).toEqual([]);
      expect(await storage.identities.findByVerifiedEmail(`${email} `)).toEqual([]);
      const accented = sampleIdentity(userId, { provider: "accents", email: `${uniqueId("é")}@example.com` });
      await storage.identities.link(accented);
      expect(await storage.identities.findByVerifiedEmail((accented.email as string).replace("é", "e"))).toEqual([]);
      expect(await storage.identities.findByVerifiedEmail(accented.email as string)).toEqual([accented]);
    });

    it("ST-2: unlink with the wrong user is false and keeps the link; the owner's unlink removes it", async () => {
      const storage = await makeStorage();
      const owner = await createUser(storage);
      const stranger = await createUser(storage);
      const identity = sampleIdentity(owner);
      await storage.identities.link(identity);
      expect(await storage.identities.unlink(stranger, identity.provider, identity.subject)).toBe(false);
      expect(await storage.identities.find(identity.provider, identity.subject)).toEqual(identity);
      expect(await storage.identities.unlink(owner, "another-provider", identity.subject)).toBe(false);
      expect(await storage.identities.unlink(owner, identity.provider, identity.subject)).toBe(true);
      expect(await storage.identities.find(identity.provider, identity.subject)).toBeNull();
      expect(await storage.identities.unlink(owner, identity.provider, identity.subject)).toBe(false);
    });
  });
}
