import { describe, expect, it } from "vitest";
import { AuthError } from "../errors/auth-error.js";
import { safeReturnPath } from "./return-path.js";

function refused(value: unknown): boolean {
  try {
    safeReturnPath(value);
    return false;
  } catch (error) {
    expect(error).toBeInstanceOf(AuthError);
    expect(error).toMatchObject({ code: 40002, message: "redirect must be a path of this app, such as /account" });
    return true;
  }
}

describe("safeReturnPath", () => {
  it("OA-8: paths of this app are kept as given; none is /", () => {
    for (const path of ["/", "/account", "/account/settings?tab=keys#passkeys", "/a%20b", "/caf%C3%A9", "/search?q=%2F%2Fx"]) {
      expect(safeReturnPath(path), path).toBe(path);
    }
    expect(safeReturnPath(`/${"a".repeat(2047)}`)).toHaveLength(2048);
    expect(safeReturnPath("/a%25252Fb"), "three rounds of percent-decoding settle").toBe("/a%25252Fb");
    expect(safeReturnPath(null)).toBe("/");
    expect(safeReturnPath(undefined)).toBe("/");
    expect(safeReturnPath("")).toBe("/");
  });

  it("OA-8: other origins, scheme tricks, backslashes, encoded and control-character variants are refused with 40002", () => {
    const hostile = [
      "//evil.example",
      "//evil.example/path",
      "/\\evil.example",
      "\\\\evil.example",
      "https:evil.example",
      "https://evil.example",
      "javascript:alert(1)",
      "evil.example",
      "./relative",
      "/%2F%2Fevil.example",
      "/%2f/evil.example",
      "%2F%2Fevil.example",
      "/%5Cevil.example",
      "/%255Cevil.example",
      "/%25252F%25252Fevil.example",
      "/\tevil",
      "/\nevil",
      "/\u0000evil",
      "/%0d%0aSet-Cookie:x",
      "/%09/evil.example",
      "/ evil",
      "/\u0085evil",
      "/%E0%A4%A",
      "/%",
      42,
      ["/"],
      {},
      `/${"a".repeat(2048)}`,
      "/a%2525252Fb",
    ];
    for (const path of hostile) expect(refused(path), JSON.stringify(path)).toBe(true);
  });

  it("OA-8: a path whose dot segments resolve to //host is refused, raw or percent-encoded (issue 20 item 13)", () => {
    for (const path of [
      "/.//evil.example",
      "/././/evil.example",
      "/a/..//evil.example",
      "/a/b/../..//evil.example",
      "/..//evil.example",
      "/%2e//evil.example",
      "/%2E%2E//evil.example",
      "/.%2f/evil.example",
      "/.%252f/evil.example",
      "/./%2fevil.example",
    ]) {
      expect(refused(path), JSON.stringify(path)).toBe(true);
    }
    for (const path of ["/a/./b", "/a/../b", "/./account", "/.well-known/x", "/a..b/c", "/..."]) {
      expect(safeReturnPath(path), path).toBe(path);
    }
  });
});
