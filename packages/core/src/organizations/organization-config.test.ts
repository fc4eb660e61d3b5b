import { describe, expect, it } from "vitest";
import { makeAuth } from "../flows/fixtures.test-support.js";
import { memoryStorage } from "../storage/memory.js";
import { resolveOrganizationsConfig } from "./organization-config.js";

describe("organizations options", () => {
  it("default to off, creation by any user, owner/admin/member, the first two administering, invitations for 7 days", () => {
    expect(resolveOrganizationsConfig(undefined)).toEqual({
      enabled: false,
      creation: "any-user",
      roles: ["owner", "admin", "member"],
      ownerRole: "owner",
      administratorRoles: ["owner", "admin"],
      invitationTtlSeconds: 7 * 86_400,
      verifyDomain: null,
    });
  });

  it("take the host's own roles, highest first", () => {
    const resolved = resolveOrganizationsConfig({
      enabled: true,
      roles: ["chief", "editor", "viewer"],
      administratorRoles: ["chief"],
    });
    expect(resolved).toMatchObject({ ownerRole: "chief", administratorRoles: ["chief"], roles: ["chief", "editor", "viewer"] });
  });

  it.each([
    [{ enabled: "yes" }, /organizations.enabled must be true or false/],
    [{ creation: "anyone" }, /organizations.creation must be "any-user" or "administrators"/],
    [{ roles: [] }, /organizations.roles must name at least one role/],
    [{ roles: ["owner", "owner"] }, /each once/],
    [{ roles: [""] }, /organizations.roles must be a list of names/],
    [{ administratorRoles: ["boss"] }, /administratorRoles must be roles of organizations.roles/],
    [{ invitationTtl: "60d" }, /at most "30d"/],
    [{ invitationTtl: "soon" }, /organizations.invitationTtl must be/],
    [{ verifyDomain: "dns" }, /verifyDomain must be an async function/],
    [{ enabeld: true }, /organizations.enabeld/],
  ])("refuse %j at startup", (options, message) => {
    expect(() => resolveOrganizationsConfig(options as never)).toThrow(message);
  });

  it("refuse to be enabled over a storage that keeps no organizations", () => {
    const { organizations: _, ...storage } = memoryStorage();
    expect(() => makeAuth({ storage, organizations: { enabled: true } })).toThrow(/needs a storage with organizations/);
    expect(() => makeAuth({ storage })).not.toThrow();
  });
});
