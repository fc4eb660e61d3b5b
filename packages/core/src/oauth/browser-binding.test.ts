import { describe, expect, it } from "vitest";
import { makeAuth } from "../flows/fixtures.test-support.js";
import { bindingCookie, bindingFrom } from "./browser-binding.js";

describe("the OAuth browser binding cookie", () => {
  it("OA-1: HttpOnly, SameSite=Lax, scoped to the OAuth routes under the base path, Secure only over TLS", () => {
    const { auth } = makeAuth({ http: { basePath: "/v2" } });
    expect(bindingCookie(auth, "abc", false, 600)).toBe(
      "portcullis_oauth=abc; Path=/v2/auth/oauth; HttpOnly; SameSite=Lax; Max-Age=600",
    );
    expect(bindingCookie(auth, "", true, 0)).toBe(
      "portcullis_oauth=; Path=/v2/auth/oauth; HttpOnly; SameSite=Lax; Max-Age=0; Secure",
    );
  });

  it("OA-1: its value is read among other cookies, whole, whatever the spacing; absent is undefined", () => {
    expect(bindingFrom("portcullis_oauth=abc")).toBe("abc");
    expect(bindingFrom("theme=dark;  portcullis_oauth=a=b ; other=1")).toBe("a=b");
    expect(bindingFrom("xportcullis_oauth=1; portcullis_oauthx=2")).toBeUndefined();
    expect(bindingFrom("theme=dark; portcullis_oauth")).toBeUndefined();
    expect(bindingFrom("portcullis_oauthx")).toBeUndefined();
    expect(bindingFrom(undefined)).toBeUndefined();
  });
});
