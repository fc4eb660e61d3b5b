import { createHash } from "node:crypto";

/** Options of {@link pwnedPasswordsCheck}. */
export interface PwnedPasswordsOptions {
  /** The `fetch` to use, e.g. one with a proxy. Default: the global `fetch`. */
  fetch?: (url: string, init: RequestInit) => Promise<Response>;
  /** The range endpoint; the 5-character prefix is appended. Default `https://api.pwnedpasswords.com/range/`. */
  endpoint?: string;
  /** How long to wait for an answer, in milliseconds. Default 5000. */
  timeoutMs?: number;
}

/**
 * A `password.isBreached` hook that asks the Pwned Passwords range API (k-anonymity): only the
 * first 5 hex characters of the password's SHA-1 leave the process; the answer lists the
 * suffixes of every breached password with that prefix, and the match is made here. Padding
 * entries (count 0, asked for with `Add-Padding`) are not breaches.
 *
 * A failed request throws, so Portcullis refuses the new password with 50300 (fail closed). To
 * fail open instead, wrap the hook: `(password) => check(password).catch(() => false)`.
 *
 * @see https://haveibeenpwned.com/API/v3#SearchingPwnedPasswordsByRange
 * @example
 * ```ts
 * const auth = createAuth({ ...config, password: { isBreached: pwnedPasswordsCheck() } });
 * ```
 */
export function pwnedPasswordsCheck(options: PwnedPasswordsOptions = {}): (password: string) => Promise<boolean> {
  const fetchRange = options.fetch ?? fetch;
  const endpoint = options.endpoint ?? "https://api.pwnedpasswords.com/range/";
  const timeoutMs = options.timeoutMs ?? 5000;
  return async (password) => {
    const digest = createHash("sha1").update(password, "utf8").digest("hex").toUpperCase();
    const prefix = digest.slice(0, 5);
    const suffix = digest.slice(5);
    const response = await fetchRange(`${endpoint}${prefix}`, {
      headers: { "Add-Padding": "true" },
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) throw new Error(`Pwned Passwords answered HTTP ${response.status}`);
    for (const line of (await response.text()).split("\n")) {
      const [candidate, count] = line.trim().split(":");
      if (candidate?.toUpperCase() === suffix) return Number(count) > 0;
    }
    return false;
  };
}
