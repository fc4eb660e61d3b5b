import type { AuthenticationResponseJSON, AuthenticatorTransport, RegistrationResponseJSON } from "@simplewebauthn/server";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";

const base64urlPattern = /^[A-Za-z0-9_-]+={0,2}$/;

const malformed = (what: string) => new AuthError(ErrorCode.MalformedParameter, `The ${what} is malformed`);

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function base64urlField(record: Record<string, unknown>, field: string, what: string): string {
  const value = record[field];
  if (typeof value !== "string" || !base64urlPattern.test(value)) throw malformed(what);
  return value;
}

/** The longest credential id, in base64url characters: 1,023 bytes (WebAuthn §7.1 step 23). */
const maxCredentialIdLength = Math.ceil((1023 * 4) / 3);

/** A credential id as it appears in URLs and storage: unpadded base64url of at most 1,023 bytes. */
export function isCredentialId(value: unknown): value is string {
  return typeof value === "string" && value.length <= maxCredentialIdLength && /^[A-Za-z0-9_-]+$/.test(value);
}

function readCredentialEnvelope(body: unknown, what: string): { id: string; response: Record<string, unknown> } {
  if (!isObject(body) || body.type !== "public-key" || !isObject(body.response)) throw malformed(what);
  const id = body.id;
  if (!isCredentialId(id) || body.rawId !== id) throw malformed(what);
  return { id, response: body.response };
}

/**
 * Checks the shape of an `AuthenticationResponseJSON` (what `@simplewebauthn/browser`'s
 * `startAuthentication` returns) before any of it is decoded: the fields WebAuthn needs are
 * base64url strings, and the id and rawId agree. Its content is checked by the verification.
 *
 * @throws {AuthError} 40002 when a field is missing or of the wrong type.
 */
export function readAuthenticationResponse(body: unknown): AuthenticationResponseJSON {
  const what = "assertion";
  const { id, response } = readCredentialEnvelope(body, what);
  const userHandle = response.userHandle;
  // Absent, null and "" all mean "no user handle": @simplewebauthn/browser and toJSON() send ""
  // for the empty user handle some security keys return.
  const noUserHandle = userHandle === undefined || userHandle === null || userHandle === "";
  if (!noUserHandle && (typeof userHandle !== "string" || !base64urlPattern.test(userHandle))) throw malformed(what);
  return {
    id,
    rawId: id,
    type: "public-key",
    clientExtensionResults: {},
    response: {
      clientDataJSON: base64urlField(response, "clientDataJSON", what),
      authenticatorData: base64urlField(response, "authenticatorData", what),
      signature: base64urlField(response, "signature", what),
      ...(typeof userHandle === "string" && userHandle !== "" ? { userHandle } : {}),
    },
  };
}

/**
 * Checks the shape of a `RegistrationResponseJSON` (what `startRegistration` returns) before any
 * of it is decoded. Transports are kept when they are a list of short strings.
 *
 * @throws {AuthError} 40002 when a field is missing or of the wrong type.
 */
export function readRegistrationResponse(body: unknown): RegistrationResponseJSON {
  const what = "attestation";
  const { id, response } = readCredentialEnvelope(body, what);
  const transports = response.transports;
  const validTransports =
    Array.isArray(transports) &&
    transports.length <= 8 &&
    transports.every((transport) => typeof transport === "string" && /^[a-z-]{1,32}$/.test(transport));
  return {
    id,
    rawId: id,
    type: "public-key",
    clientExtensionResults: {},
    response: {
      clientDataJSON: base64urlField(response, "clientDataJSON", what),
      attestationObject: base64urlField(response, "attestationObject", what),
      ...(validTransports ? { transports: transports as AuthenticatorTransport[] } : {}),
    },
  };
}
