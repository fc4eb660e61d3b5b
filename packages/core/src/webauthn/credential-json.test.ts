import { createSoftwareAuthenticator } from "@portcullis/testing";
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import { describe, expect, it } from "vitest";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { isCredentialId, readAuthenticationResponse, readRegistrationResponse } from "./credential-json.js";

const rpId = "example.com";

/** A real registration and assertion of the software authenticator, signed over made-up challenges. */
function realResponses(): { registration: RegistrationResponseJSON; assertion: AuthenticationResponseJSON } {
  const authenticator = createSoftwareAuthenticator({ origin: "https://app.example.com" });
  const registration = authenticator.register({
    rp: { id: rpId, name: "Example" },
    user: { id: "dXNlci0x", name: "alice", displayName: "alice" },
    challenge: "cmVnaXN0cmF0aW9uLWNoYWxsZW5nZQ",
    pubKeyCredParams: [{ alg: -7, type: "public-key" }],
  });
  const assertion = authenticator.authenticate({ rpId, challenge: "YXNzZXJ0aW9uLWNoYWxsZW5nZQ" });
  return { registration, assertion };
}

const { registration, assertion } = realResponses();

/** The assertion with `changes` merged into its `response`. */
const withResponse = (changes: Record<string, unknown>) => ({ ...assertion, response: { ...assertion.response, ...changes } });

/** The code of the AuthError `read` throws; fails when it returns or throws anything else. */
function codeOf(read: () => unknown): number {
  try {
    read();
  } catch (error) {
    if (error instanceof AuthError) return error.code;
    throw error;
  }
  throw new Error("expected an AuthError, but the input was accepted");
}

describe("readAuthenticationResponse", () => {
  it("PW-5: a valid assertion passes through with only the fields WebAuthn needs", () => {
    const body = {
      ...assertion,
      authenticatorAttachment: "cross-platform",
      clientExtensionResults: { appid: true, credProps: { rk: true } },
      extra: { nested: "ignored" },
      response: { ...assertion.response, extra: "ignored", transports: ["usb"] },
    };
    expect(readAuthenticationResponse(body)).toEqual({
      id: assertion.id,
      rawId: assertion.id,
      type: "public-key",
      clientExtensionResults: {},
      response: {
        clientDataJSON: assertion.response.clientDataJSON,
        authenticatorData: assertion.response.authenticatorData,
        signature: assertion.response.signature,
        userHandle: "dXNlci0x",
      },
    });
  });

  it("PW-5: a body parsed from JSON with __proto__ keys gives a plain result", () => {
    const body = JSON.parse(
      JSON.stringify({ ...assertion, response: { ...assertion.response } }).replace(
        '"type":"public-key"',
        '"type":"public-key","__proto__":{"polluted":true}',
      ),
    );
    const read = readAuthenticationResponse(body);
    expect(Object.keys(read).sort()).toEqual(["clientExtensionResults", "id", "rawId", "response", "type"]);
    expect(Object.getPrototypeOf(read)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("WA-4: an absent, null or empty user handle is left out; any other is kept", () => {
    for (const userHandle of [undefined, null, ""]) {
      const read = readAuthenticationResponse(withResponse({ userHandle }));
      expect("userHandle" in read.response, String(userHandle)).toBe(false);
    }
    expect(readAuthenticationResponse(withResponse({ userHandle: "YWxpY2U" })).response.userHandle).toBe("YWxpY2U");
  });

  it("PW-5: a body, or a response, that is not a plain object is 40002", () => {
    const arrayWithFields = Object.assign([], assertion);
    const responseArray = { ...assertion, response: Object.assign([], assertion.response) };
    const bodies = [undefined, null, "public-key", 42, true, [], [assertion], () => assertion, arrayWithFields, responseArray];
    for (const body of bodies) {
      expect(
        codeOf(() => readAuthenticationResponse(body)),
        String(body),
      ).toBe(ErrorCode.MalformedParameter);
    }
  });

  it("PW-5: a missing or non-object response is 40002", () => {
    const { response: _response, ...withoutResponse } = assertion;
    for (const body of [
      withoutResponse,
      { ...assertion, response: null },
      { ...assertion, response: "x" },
      { ...assertion, response: [] },
    ]) {
      expect(codeOf(() => readAuthenticationResponse(body))).toBe(ErrorCode.MalformedParameter);
    }
  });

  it("PW-5: a type other than public-key is 40002", () => {
    for (const type of [undefined, "", "password", "Public-Key", "public-key ", ["public-key"]]) {
      expect(
        codeOf(() => readAuthenticationResponse({ ...assertion, type })),
        String(type),
      ).toBe(40002);
    }
  });

  it("PW-5: an id that is missing, not base64url, too long, or unlike rawId is 40002", () => {
    const ids: unknown[] = [undefined, "", 42, { id: assertion.id }, "a+b/", "abc=", "abc def", "x".repeat(1367)];
    for (const id of ids) {
      expect(
        codeOf(() => readAuthenticationResponse({ ...assertion, id, rawId: id })),
        String(id),
      ).toBe(40002);
    }
    for (const rawId of [undefined, `${assertion.id}A`, `${assertion.id}=`, assertion.id.toUpperCase()]) {
      expect(
        codeOf(() => readAuthenticationResponse({ ...assertion, rawId })),
        String(rawId),
      ).toBe(40002);
    }
    const longest = "x".repeat(1364);
    expect(readAuthenticationResponse({ ...assertion, id: longest, rawId: longest }).id).toBe(longest);
  });

  it("PW-5: clientDataJSON, authenticatorData or signature missing or not base64url is 40002", () => {
    const bad: unknown[] = [undefined, null, "", 42, {}, ["AAAA"], "not base64url!", "a+b/", "AAAA===", "AA AA"];
    for (const field of ["clientDataJSON", "authenticatorData", "signature"]) {
      for (const value of bad) {
        const error = (() => {
          try {
            readAuthenticationResponse(withResponse({ [field]: value }));
          } catch (caught) {
            return caught;
          }
          return undefined;
        })();
        expect(error, `${field} ${JSON.stringify(value)}`).toBeInstanceOf(AuthError);
        expect((error as AuthError).code).toBe(ErrorCode.MalformedParameter);
        expect((error as AuthError).message).toBe("The assertion is malformed");
      }
    }
  });

  it("PW-5: a user handle that is not a base64url string is 40002", () => {
    for (const userHandle of [42, {}, ["YWxpY2U"], "not base64url!", "a/b", true]) {
      expect(
        codeOf(() => readAuthenticationResponse(withResponse({ userHandle }))),
        String(userHandle),
      ).toBe(40002);
    }
  });

  it("PW-5: the error never echoes what was sent", () => {
    const secret = "my-secret-passphrase";
    try {
      readAuthenticationResponse({ ...assertion, id: secret, rawId: `${secret}!` });
      throw new Error("accepted");
    } catch (error) {
      expect(error).toBeInstanceOf(AuthError);
      expect((error as AuthError).message).not.toContain(secret);
    }
  });
});

describe("readRegistrationResponse", () => {
  it("PW-5: a valid attestation passes through with its transports and nothing else", () => {
    const read = readRegistrationResponse({ ...registration, extra: true });
    expect(read).toEqual({
      id: registration.id,
      rawId: registration.id,
      type: "public-key",
      clientExtensionResults: {},
      response: {
        clientDataJSON: registration.response.clientDataJSON,
        attestationObject: registration.response.attestationObject,
        transports: ["internal"],
      },
    });
  });

  it("PW-5: transports are dropped unless they are a short list of short lower-case names", () => {
    for (const transports of [
      undefined,
      "usb",
      ["USB"],
      [42],
      [["usb"]],
      ["usb", 42],
      ["x".repeat(33)],
      Array.from({ length: 9 }, () => "usb"),
    ]) {
      const body = { ...registration, response: { ...registration.response, transports } };
      expect("transports" in readRegistrationResponse(body).response, JSON.stringify(transports)).toBe(false);
    }
    const eight = ["usb", "nfc", "ble", "internal", "hybrid", "smart-card", "cable", "x".repeat(32)];
    const body = { ...registration, response: { ...registration.response, transports: eight } };
    expect(readRegistrationResponse(body).response.transports).toEqual(eight);
  });

  it("PW-5: a missing or non-base64url attestationObject, or an id unlike rawId, is 40002", () => {
    for (const attestationObject of [undefined, 42, "", "not base64url!"]) {
      const body = { ...registration, response: { ...registration.response, attestationObject } };
      expect(codeOf(() => readRegistrationResponse(body))).toBe(ErrorCode.MalformedParameter);
    }
    expect(codeOf(() => readRegistrationResponse({ ...registration, rawId: "AAAA" }))).toBe(40002);
    expect(codeOf(() => readRegistrationResponse(assertion))).toBe(40002);
  });
});

describe("isCredentialId", () => {
  it("WA-2: accepts unpadded base64url of 1 to 1,364 characters (1,023 bytes) only", () => {
    expect(isCredentialId("AQID")).toBe(true);
    expect(isCredentialId("a-_Z9")).toBe(true);
    expect(isCredentialId("x".repeat(1364))).toBe(true);
    for (const value of ["", "x".repeat(1365), "AQI=", "a+b", "a/b", "a b", 42, null, undefined, ["AQID"]]) {
      expect(isCredentialId(value), String(value)).toBe(false);
    }
  });
});
