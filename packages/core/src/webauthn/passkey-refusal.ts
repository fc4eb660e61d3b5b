import { createHash } from "node:crypto";
import type { Auth } from "../auth.js";
import { onFirstUse } from "../dependencies.js";
import { reportCheckFailure } from "../diagnostics/check-failures.js";
import type { ResolvedPasskeyConfig } from "./passkey-config.js";

const webAuthnHelpers = onFirstUse(() => import("@simplewebauthn/server/helpers"));

/** The parts of a ceremony's answer that say where it came from and for which relying party. */
export interface CeremonyAnswer {
  response: { clientDataJSON?: unknown; authenticatorData?: unknown; attestationObject?: unknown };
}

/** The relying-party id hash of the authenticator data of an authentication or registration answer. */
async function rpIdHashOf(answer: CeremonyAnswer): Promise<Uint8Array | null> {
  const helpers = await webAuthnHelpers();
  const { authenticatorData, attestationObject } = answer.response;
  if (typeof authenticatorData === "string") {
    return helpers.parseAuthenticatorData(helpers.isoBase64URL.toBuffer(authenticatorData)).rpIdHash;
  }
  if (typeof attestationObject !== "string") return null;
  const authData = helpers.decodeAttestationObject(helpers.isoBase64URL.toBuffer(attestationObject)).get("authData");
  return helpers.parseAuthenticatorData(authData).rpIdHash;
}

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest();

/** The host of `origin` and each of its parent domains: the relying-party ids a page there may use. */
function rpIdsOf(origin: string): string[] {
  let hostname: string;
  try {
    hostname = new URL(origin).hostname;
  } catch {
    return [];
  }
  const labels = hostname.split(".");
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
    const { clientDataJSON } = answer.response;
    if (typeof clientDataJSON !== "string") return;
    const helpers = await webAuthnHelpers();
    const origin: unknown = helpers.decodeClientDataJSON(clientDataJSON).origin;
    if (typeof origin !== "string") return;
    if (!config.origins.includes(origin)) {
      reportCheckFailure(auth, { check: "passkey_origin", expected: config.origins, received: origin, ip });
      return;
    }
    const rpIdHash = await rpIdHashOf(answer);
    if (rpIdHash === null || sha256(config.rpId).equals(rpIdHash)) return;
    const used = rpIdsOf(origin).find((candidate) => sha256(candidate).equals(rpIdHash)) ?? null;
    reportCheckFailure(auth, { check: "passkey_rp_id", expected: [config.rpId], received: used, ip });
  } catch {
    // An answer that cannot be read was refused for that; there is no mismatch to explain.
  }
}
