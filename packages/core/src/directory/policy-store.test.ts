import { describe, expect, it } from "vitest";
import { authError, makeAuth } from "../flows/fixtures.test-support.js";
import { defaultDirectoryPolicy } from "./policy.js";
import {
  directoryPolicyKey,
  readDirectorySettings,
  readPublicPolicy,
  settingsFrom,
  writeDirectorySettings,
} from "./policy-store.js";

const bindPassword = "service account password ⚷";
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
});
