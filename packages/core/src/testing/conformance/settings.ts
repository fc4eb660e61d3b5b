import { type SuiteContext, concurrently, countWhere } from "./harness.js";
import { BASE_TIME, uniqueId } from "./samples.js";

/** Registers the `settings` suite: JSON values round-trip and come back as copies, and a replace is a compare-and-set (KR-2). */
export function settingsSuite({ test: { describe, it, expect }, makeStorage }: SuiteContext): void {
  const sampleValue = () => ({
    enabled: true,
    url: "ldaps://directory.example.com:636",
    timeoutMs: 5000,
    bindDn: null,
    groups: [{ dn: "cn=admins,ou=groups,dc=example,dc=com", roles: ["admin"] }],
  });

  describe("settings", () => {
    it("get of an unknown key is undefined", async () => {
      const storage = await makeStorage();
      expect(await storage.settings.get(uniqueId("setting"))).toBeUndefined();
    });

    it("set then get round-trips a JSON value, and set replaces it", async () => {
      const storage = await makeStorage();
      const key = uniqueId("setting");
      await storage.settings.set(key, sampleValue(), BASE_TIME);
      expect(await storage.settings.get(key)).toEqual(sampleValue());
      await storage.settings.set(key, ["a", 1, false, null], BASE_TIME + 1);
      expect(await storage.settings.get(key)).toEqual(["a", 1, false, null]);
      await storage.settings.set(key, "plain", BASE_TIME + 2);
      expect(await storage.settings.get(key)).toBe("plain");
    });

    it("KR-2: replace saves a value only while the one saved is still the one expected, as get answered it", async () => {
      const storage = await makeStorage();
      const key = uniqueId("setting");
      expect(await storage.settings.replace(key, sampleValue(), { replaced: true }, BASE_TIME)).toBe(false);
      expect(await storage.settings.get(key)).toBeUndefined();
      await storage.settings.set(key, sampleValue(), BASE_TIME);
      const read = await storage.settings.get(key);
      expect(await storage.settings.replace(key, { ...sampleValue(), enabled: false }, { replaced: true }, BASE_TIME + 1)).toBe(
        false,
      );
      expect(await storage.settings.get(key)).toEqual(sampleValue());
      expect(await storage.settings.replace(key, read, { replaced: 1 }, BASE_TIME + 1)).toBe(true);
      expect(await storage.settings.get(key)).toEqual({ replaced: 1 });
      expect(await storage.settings.replace(key, read, { replaced: 2 }, BASE_TIME + 2)).toBe(false);
      expect(await storage.settings.get(key)).toEqual({ replaced: 1 });
    });

    it("KR-2, ST-1: 20 concurrent replace calls from one value read give exactly one winner", async () => {
      const storage = await makeStorage();
      const key = uniqueId("setting");
      await storage.settings.set(key, sampleValue(), BASE_TIME);
      const read = await storage.settings.get(key);
      const results = await concurrently(20, (index) => storage.settings.replace(key, read, { writer: index }, BASE_TIME + 1));
      expect(countWhere(results, (replaced) => replaced)).toBe(1);
      expect(await storage.settings.get(key)).toEqual({ writer: results.indexOf(true) });
    });

    it("values are copied in and out: mutating an argument or a result changes nothing stored", async () => {
      const storage = await makeStorage();
      const key = uniqueId("setting");
      const value = sampleValue();
      await storage.settings.set(key, value, BASE_TIME);
      value.groups.push({ dn: "cn=everyone", roles: ["admin"] });
      const first = (await storage.settings.get(key)) as ReturnType<typeof sampleValue>;
      expect(first).toEqual(sampleValue());
      first.groups[0]?.roles.push("owner");
      first.enabled = false;
      expect(await storage.settings.get(key)).toEqual(sampleValue());
    });
  });
}
