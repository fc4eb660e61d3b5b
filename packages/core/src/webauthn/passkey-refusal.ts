import { createHash } from "node:crypto";
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import type { Auth } from "../auth.js";
import { onFirstUse } from "../dependencies.js";
import { reportCheckFailure } from "../diagnostics/check-failures.js";
import type { ResolvedPasskeyConfig } from "./passkey-config.js";

const webAuthnHelpers = onFirstUse(() => import("@simplewebauthn/server/helpers"));

/** A ceremony's answer as the flows read it: an authentication or a registration response. */
export type CeremonyAnswer = AuthenticationResponseJSON | RegistrationResponseJSON;

/** The relying-party id hash of the authenticator data of an authentication or registration answer. */
async function rpIdHashOf(answer: CeremonyAnswer): Promise<Uint8Array> {
  const helpers = await webAuthnHelpers();
  const authData =
    "attestationObject" in answer.response
      ? helpers.decodeAttestationObject(helpers.isoBase64URL.toBuffer(answer.response.attestationObject)).get("authData")
      : helpers.isoBase64URL.toBuffer(answer.response.authenticatorData);
  return helpers.parseAuthenticatorData(authData).rpIdHash;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest();

/** The host of `origin` (one of `passkeys.origins`) and each of its parent domains: the relying-party ids a page there may use. */
function rpIdsOf(origin: string): string[] {
  const labels = new URL(origin).hostname.split(".");
  return labels.map((_, index) => labels.slice(index).join("."));
}

/**
 * After a passkey ceremony was refused, finds whether its origin or relying party is one the
 * configuration does not list, and reports it ({@link reportCheckFailure}). The client's answer
 * stays the one answer of every refusal (EN-1). An answer too malformed to read says nothing.
 */
export async function explainPasskeyRefusal(
  auth: Auth,
  config: ResolvedPasskeyConfig,
  answer: CeremonyAnswer,
  ip: string | undefined,
): Promise<void> {
  try {
    const helpers = await webAuthnHelpers();
    const origin: unknown = helpers.decodeClientDataJSON(answer.response.clientDataJSON).origin;
    if (typeof origin !== "string") return;
    if (!config.origins.includes(origin)) {
      reportCheckFailure(auth, { check: "passkey_origin", expected: config.origins, received: origin, ip });
      return;
    }
    const rpIdHash = await rpIdHashOf(answer);
    if (sha256(config.rpId).equals(rpIdHash)) return;
    const used = rpIdsOf(origin).find((candidate) => sha256(candidate).equals(rpIdHash)) ?? null;
    reportCheckFailure(auth, { check: "passkey_rp_id", expected: [config.rpId], received: used, ip });
  } catch {
    // An answer that cannot be read was refused for that; there is no mismatch to explain.
  }
}
