import type { Auth } from "../auth.js";
import type { CheckName } from "../events/types.js";
import { writeOperatorLine } from "./operator-lines.js";

/** A check that refused a request because a value did not match the configuration. */
export interface CheckFailure {
  check: CheckName;
  /** What the configuration accepts. */
  expected: readonly string[];
  /** What the request, token or provider carried; null when it carried none. */
  received: string | null;
  ip?: string | undefined;
}

const maxReceivedLength = 200;

/** A received value as events and lines hold it: at most 200 characters, the rest cut. */
function shortened(value: string | null): string | null {
  if (value === null || value.length <= maxReceivedLength) return value;
  return `${value.slice(0, maxReceivedLength)}…`;
}

const explanations: Record<CheckName, string> = {
  passkey_origin: "a passkey ceremony came from an origin that passkeys.origins does not list",
  passkey_rp_id: "a passkey answered for another relying party than passkeys.rpId",
  oauth_issuer: "the provider's discovery document names another issuer than its configured issuer",
  token_issuer: "an access token signed with a configured key names another issuer than the issuer setting",
  token_audience: "an access token signed with a configured key names another audience than the audience setting",
};

/**
 * Reports a refusal whose reason is a mismatch with the configuration: a `check.failed` event,
 * and with `debug: true` a line on stderr, so a misconfigured origin or issuer is found in a
 * minute. The client's answer is unchanged (one answer per refusal, EN-1). The values compared
 * are origins, relying-party ids, issuers and audiences, never secret material.
 */
export function reportCheckFailure(auth: Auth, failure: CheckFailure): void {
  const received = shortened(failure.received);
  auth.emit({
    type: "check.failed",
    check: failure.check,
    expected: [...failure.expected],
    received,
    at: auth.now(),
    ip: failure.ip,
  });
  if (!auth.config.debug) return;
  writeOperatorLine(
    `refused: ${explanations[failure.check]} (expected ${failure.expected.map((value) => JSON.stringify(value)).join(" or ")}; got ${received === null ? "none" : JSON.stringify(received)})`,
  );
}
