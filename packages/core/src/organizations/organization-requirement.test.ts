import { describe, expect, it } from "vitest";
import { holdsRoleOrAbove, organizationRequirementOf, requireOrganization } from "./organization-requirement.js";

const order = ["owner", "admin", "member"];
const access = (roles: string[] | null) => ({ org: roles === null ? null : { id: "org-1", roles } });
const outcome = (roles: string[] | null, asked: { roles: string[] } | null) => {
  try {
    requireOrganization(access(roles), asked ?? { roles: null }, order);
    return 0;
  } catch (error) {
    return (error as { code: number }).code;
  }
};

describe("requireAuth's org option (OR-7)", () => {
  it.each([
    [["member"], null, 0],
    [null, null, 40300],
    [["admin"], { roles: ["admin"] }, 0],
    [["owner"], { roles: ["admin"] }, 0],
    [["member"], { roles: ["admin"] }, 40300],
    [["member"], { roles: ["member"] }, 0],
    [["owner"], { roles: ["member"] }, 0],
    [["member", "billing"], { roles: ["billing"] }, 0],
    [["owner"], { roles: ["billing"] }, 40300],
    [["admin"], { roles: [] }, 40300],
    [null, { roles: ["member"] }, 40300],
    [["auditor", "owner"], { roles: ["admin"] }, 0],
  ] as const)("a member holding %j, asked %j, gets %i", (held, asked, code) => {
    expect(outcome(held === null ? null : [...held], asked === null ? null : { roles: [...asked.roles] })).toBe(code);
  });

  it("ranks only the roles organizations.roles names; others match by name", () => {
    expect(holdsRoleOrAbove(order, ["admin"], ["owner", "member"])).toBe(true);
    expect(holdsRoleOrAbove(order, ["auditor"], ["member"])).toBe(false);
    expect(holdsRoleOrAbove(order, ["auditor"], ["auditor"])).toBe(true);
  });

  it("resolves an options object once", () => {
    const options = { org: { roles: ["admin"] } } as const;
    expect(organizationRequirementOf(options)).toBe(organizationRequirementOf(options));
    expect(organizationRequirementOf({})).toBeNull();
  });
});
