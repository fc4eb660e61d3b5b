import { describe, expect, it } from "vitest";
import { AuthError } from "../../errors/auth-error.js";
import { basicCredentials } from "./token-endpoint.js";

const encoded = (text: string) => `Basic ${Buffer.from(text, "utf8").toString("base64")}`;

function refusal(authorization: string): unknown {
  try {
    basicCredentials(authorization);
  } catch (error) {
    expect(error).toBeInstanceOf(AuthError);
    return { code: (error as AuthError).code, error: ((error as AuthError).data as { error: string }).error };
  }
  throw new Error("not refused");
}

describe("basicCredentials (client_secret_basic, RFC 6749 §2.3.1)", () => {
  it("reads the form-urlencoded id and secret of the base64 value; none without the header; the scheme in any case", () => {
    expect(basicCredentials(undefined)).toBeNull();
    expect(basicCredentials(encoded("abc:pcs_live_x"))).toEqual({ clientId: "abc", clientSecret: "pcs_live_x" });
    expect(basicCredentials(encoded("a%3Ab+c:s%25%3A+t"))).toEqual({ clientId: "a:b c", clientSecret: "s%: t" });
    expect(basicCredentials(encoded("abc:se:cret").replace("Basic", "bAsIc"))).toEqual({
      clientId: "abc",
      clientSecret: "se:cret",
    });
  });

  it("refuses a malformed value or another scheme with invalid_request", () => {
    const invalidRequest = { code: 40002, error: "invalid_request" };
    for (const header of [
      "Basic",
      "Basic !!!",
      "Basic YWJj",
      encoded(":secret"),
      encoded("abc:"),
      encoded("a%ZZ:b"),
      "Basic YWJjOmRlZg===",
      `Basic ${"A".repeat(5000)}`,
      "Bearer abc",
      "Digest x",
    ]) {
      expect(refusal(header), header).toEqual(invalidRequest);
    }
  });
});
