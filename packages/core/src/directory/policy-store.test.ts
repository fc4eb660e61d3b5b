import { describe, expect, it } from "vitest";
import { authError, makeAuth } from "../flows/fixtures.test-support.js";
import { type DirectoryPolicyInput, defaultDirectoryPolicy } from "./policy.js";
import {
  directoryPolicyKey,
  readDirectorySettings,
  readPublicPolicy,
  settingsFrom,
  writeDirectorySettings,
} from "./policy-store.js";

const bindPassword = "service account password ⚷";
const caPem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----";
const input = {
  enabled: true,
  serverUrl: "ldaps://ldap.example.com",
  bindDn: "cn=reader,dc=example,dc=com",
  bindPassword,
  userBaseDn: "ou=people,dc=example,dc=com",
};

describe("the saved directory policy", () => {
  it("before anything is saved: the defaults, disabled, no credential", async () => {
    const { auth } = makeAuth();
    expect(await readPublicPolicy(auth)).toEqual({ ...defaultDirectoryPolicy, credentialConfigured: false });
    expect((await readDirectorySettings(auth)).bindPassword).toBeNull();
  });

  it("ST-3: the bind password is sealed at rest, never shown, and opens for connecting", async () => {
    const { auth, storage } = makeAuth();
    await writeDirectorySettings(auth, await settingsFrom(auth, input));
    const stored = JSON.stringify(await storage.settings.get(directoryPolicyKey));
    expect(stored).not.toContain("service account password");
    expect(stored).toContain("ldap.example.com");
    const shown = await readPublicPolicy(auth);
    expect(shown).toMatchObject({ enabled: true, credentialConfigured: true });
    expect(JSON.stringify(shown)).not.toContain("password ⚷");
    expect((await readDirectorySettings(auth)).bindPassword).toBe(bindPassword);
  });

  it("a policy without a bind password is saved without one", async () => {
    const { auth } = makeAuth();
    await writeDirectorySettings(auth, await settingsFrom(auth, { ...input, bindDn: null, bindPassword: undefined }));
    expect(await readPublicPolicy(auth)).toMatchObject({ enabled: true, bindDn: null, credentialConfigured: false });
  });

  it("an empty or absent bind password keeps the saved one; a new one replaces it; a bad one is 42200", async () => {
    const { auth } = makeAuth();
    await writeDirectorySettings(auth, await settingsFrom(auth, input));
    const shown = await readPublicPolicy(auth);
    await writeDirectorySettings(auth, await settingsFrom(auth, { ...shown, bindPassword: "", searchTimeoutSecs: 3 }));
    expect(await readDirectorySettings(auth)).toMatchObject({ bindPassword, searchTimeoutSecs: 3 });
    await writeDirectorySettings(auth, await settingsFrom(auth, { fallbackRole: "guest" }));
    expect(await readDirectorySettings(auth)).toMatchObject({ bindPassword, fallbackRole: "guest", searchTimeoutSecs: 3 });
    await writeDirectorySettings(auth, await settingsFrom(auth, { bindPassword: "rotated" }));
    expect((await readDirectorySettings(auth)).bindPassword).toBe("rotated");
    const refused = await authError(settingsFrom(auth, { bindPassword: 42 }));
    expect(refused).toMatchObject({ code: 42200 });
    expect(refused.message).toMatch(/^bindPassword /);
  });

  it("ST-3: the saved bind password is kept only while it would go to the same server the same way", async () => {
    const { auth } = makeAuth();
    await writeDirectorySettings(auth, await settingsFrom(auth, { ...input, caBundle: caPem }));
    const changes: Array<Partial<DirectoryPolicyInput>> = [
      { serverUrl: "ldaps://elsewhere.example.net" },
      { bindDn: "cn=other,dc=example,dc=com" },
      { caBundle: `${caPem}\n${caPem}` },
      { caBundle: null },
      { serverUrl: "ldap://ldap.example.com", startTls: true },
      { serverUrl: "ldap://127.0.0.1", startTls: false, allowPlaintext: true },
    ];
    for (const change of changes) {
      const refused = await authError(settingsFrom(auth, change));
      expect(refused.code, JSON.stringify(change)).toBe(42200);
      expect(refused.message).toMatch(/^bindPassword must be given again when serverUrl, bindDn, caBundle, startTls/);
      for (const bindPassword of ["", undefined]) {
        await expect(settingsFrom(auth, { ...change, bindPassword })).rejects.toMatchObject({ code: 42200 });
      }
      expect((await settingsFrom(auth, { ...change, bindPassword: "typed again" })).bindPassword).toBe("typed again");
    }
    expect((await settingsFrom(auth, { bindDn: null })).bindPassword).toBeNull();
    expect((await settingsFrom(auth, { serverUrl: "ldaps://LDAP.example.com", searchTimeoutSecs: 2 })).bindPassword).toBe(
      bindPassword,
    );
  });

  it("with no saved bind password, a changed destination needs none", async () => {
    const { auth } = makeAuth();
    await writeDirectorySettings(auth, await settingsFrom(auth, { ...input, bindPassword: undefined }));
    expect((await settingsFrom(auth, { serverUrl: "ldaps://elsewhere.example.net" })).bindPassword).toBeNull();
  });

  it("turning StartTLS or plaintext on or off is a change of destination too", async () => {
    const { auth } = makeAuth();
    const local = {
      ...input,
      serverUrl: "ldap://ldap.example.com",
      startTls: false,
      allowPlaintext: true,
      allowPlaintextOnNetwork: true,
    };
    await writeDirectorySettings(auth, await settingsFrom(auth, local));
    await expect(settingsFrom(auth, { allowPlaintextOnNetwork: false, serverUrl: "ldap://127.0.0.1" })).rejects.toMatchObject({
      code: 42200,
    });
    await expect(settingsFrom(auth, { startTls: true })).rejects.toMatchObject({ code: 42200 });
  });
});
