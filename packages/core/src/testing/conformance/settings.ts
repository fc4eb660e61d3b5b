import type { SuiteContext } from "./harness.js";
import { BASE_TIME, uniqueId } from "./samples.js";

/** Registers the `settings` suite: JSON values round-trip and come back as copies. */
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
