import { describe, expect, it } from "vitest";
import { AuthError } from "../errors/auth-error.js";
import { makeAuth } from "../flows/fixtures.test-support.js";
import { bindingCookie, bindingFrom } from "./browser-binding.js";

/** The AuthError `read` throws; fails when it returns. */
function thrown(read: () => unknown): AuthError {
  try {
    read();
  } catch (error) {
    if (error instanceof AuthError) return error;
    throw error;
  }
  throw new Error("expected an AuthError");
}

describe("the OAuth browser binding cookie", () => {
  it("OA-1: over plain HTTP, portcullis_oauth: HttpOnly, SameSite=Lax, scoped to the OAuth routes under the base path, not Secure", () => {
    const { auth } = makeAuth({ http: { basePath: "/v2" } });
    expect(bindingCookie(auth, "abc", false, 600)).toBe(
      "portcullis_oauth=abc; Path=/v2/auth/oauth; HttpOnly; SameSite=Lax; Max-Age=600",
    );
    expect(bindingCookie(auth, "", false, 0)).toBe("portcullis_oauth=; Path=/v2/auth/oauth; HttpOnly; SameSite=Lax; Max-Age=0");
  });

  it("OA-10: over TLS, __Host-portcullis_oauth: Secure, Path=/ and no Domain, so a sibling subdomain can neither set nor shadow it", () => {
    const { auth } = makeAuth({ http: { basePath: "/v2" } });
    expect(bindingCookie(auth, "abc", true, 600)).toBe(
      "__Host-portcullis_oauth=abc; Path=/; HttpOnly; SameSite=Lax; Max-Age=600; Secure",
    );
    expect(bindingCookie(auth, "", true, 0)).toBe("__Host-portcullis_oauth=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure");
  });

  it("OA-1: its value is read among other cookies, whole, whatever the spacing; absent is undefined", () => {
    expect(bindingFrom("portcullis_oauth=abc", false)).toBe("abc");
    expect(bindingFrom("theme=dark;  portcullis_oauth=a=b ; other=1", false)).toBe("a=b");
    expect(bindingFrom("xportcullis_oauth=1; portcullis_oauthx=2", false)).toBeUndefined();
    expect(bindingFrom("theme=dark; portcullis_oauth", false)).toBeUndefined();
    expect(bindingFrom("portcullis_oauthx", false)).toBeUndefined();
    expect(bindingFrom(undefined, false)).toBeUndefined();
    expect(bindingFrom(undefined, true)).toBeUndefined();
  });

  it("OA-10: over TLS only the __Host- cookie counts: a plain portcullis_oauth, which any sibling subdomain can set, is ignored", () => {
    expect(bindingFrom("__Host-portcullis_oauth=mine", true)).toBe("mine");
    expect(bindingFrom("portcullis_oauth=tossed; __Host-portcullis_oauth=mine", true)).toBe("mine");
    expect(bindingFrom("portcullis_oauth=tossed", true)).toBeUndefined();
    expect(bindingFrom("__Host-portcullis_oauth=mine", false)).toBeUndefined();
    expect(bindingFrom("__host-portcullis_oauth=mine", true)).toBeUndefined();
  });

  it("OA-10: a request carrying the binding cookie more than once is refused with 40100, whichever comes first", () => {
    for (const [header, secure] of [
      ["portcullis_oauth=tossed; portcullis_oauth=mine", false],
      ["portcullis_oauth=mine; theme=dark; portcullis_oauth=mine", false],
      ["__Host-portcullis_oauth=a; __Host-portcullis_oauth=b", true],
      ["portcullis_oauth=x; __Host-portcullis_oauth=a; portcullis_oauth=y; __Host-portcullis_oauth=b", true],
    ] as const) {
      expect(
        thrown(() => bindingFrom(header, secure)),
        header,
      ).toMatchObject({
        code: 40100,
        message: "The sign-in cookie was sent more than once; start the sign-in again",
      });
    }
  });
});
