import { localProviderPassword } from "./accounts.js";

/** How {@link driveAuthorization} answers the provider's pages. */
export interface DriveAuthorizationOptions {
  /** The account to sign in as, by its username at the provider. */
  username: string;
  /** {@link localProviderPassword} unless given. */
  password?: string;
  /** Whether to allow the consent page; `false` denies, and the provider redirects with `error=access_denied`. */
  consent?: boolean;
}

const maxSteps = 20;

function formOf(html: string): { action: string; prompt: string } | undefined {
  const action = /<form[^>]*\saction="([^"]+)"/.exec(html)?.[1];
  const prompt = /<input type="hidden" name="prompt" value="([^"]+)"/.exec(html)?.[1];
  return action && prompt ? { action, prompt } : undefined;
}

/**
 * Keeps the cookies a response sets in `jar` (name → value), as a browser would for one site,
 * and drops those it expires (`Max-Age=0`, a past `Expires`, an empty value). Paths and domains
 * are not kept: every cookie of the jar goes with every request.
 *
 * @example
 * ```ts
 * const jar = new Map<string, string>();
 * storeCookies(jar, await fetch(url));
 * const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join("; ");
 * ```
 */
export function storeCookies(jar: Map<string, string>, response: Response): void {
  for (const header of response.headers.getSetCookie()) {
    const [pair = "", ...attributes] = header.split(";");
    const separator = pair.indexOf("=");
    const name = pair.slice(0, separator).trim();
    const value = pair.slice(separator + 1).trim();
    const expired = attributes.some((attribute) => {
      const [key = "", setting = ""] = attribute.trim().split("=");
      const lowerKey = key.toLowerCase();
      return (lowerKey === "max-age" && Number(setting) <= 0) || (lowerKey === "expires" && Date.parse(setting) <= Date.now());
    });
    if (expired || value === "") jar.delete(name);
    else jar.set(name, value);
  }
}

/**
 * Plays the user agent from an authorization URL of a provider started by
 * `startLocalProvider`, without a browser: follows its redirects with a cookie jar, signs in
 * as `username`, allows or denies consent, and returns the URL the provider finally redirects to,
 * off the provider's origin: the client's callback with `code`, `state` and `iss`, or with `error`.
 *
 * @throws Error if the sign-in is rejected or a page is not one it knows.
 *
 * @example
 * ```ts
 * // The provider's URL, as your service's `GET /api/v1/auth/oauth/local/authorize` answers it:
 * const callback = await driveAuthorization(authUrl, { username: "ada" });
 * // Then call the callback route with callback.search (and the binding cookie of the authorize call).
 * ```
 */
export async function driveAuthorization(authUrl: string | URL, options: DriveAuthorizationOptions): Promise<URL> {
  const { username, password = localProviderPassword, consent = true } = options;
  const providerOrigin = new URL(authUrl).origin;
  const jar = new Map<string, string>();
  let url = new URL(authUrl);
  let submission: { prompt: string; body: URLSearchParams } | undefined;

  for (let step = 0; step < maxSteps; step += 1) {
    if (url.origin !== providerOrigin) return url;
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join("; ");
    const response = await fetch(url, {
      method: submission ? "POST" : "GET",
      redirect: "manual",
      headers: cookie ? { cookie } : {},
      ...(submission ? { body: submission.body } : {}),
    });
    storeCookies(jar, response);
    const previousPrompt = submission?.prompt;
    submission = undefined;

    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      url = new URL(location, url);
      continue;
    }
    const html = await response.text();
    const form = response.ok ? formOf(html) : undefined;
    if (!form) throw new Error(`Unexpected response from the provider at ${url.pathname}: HTTP ${response.status}`);
    if (form.prompt === "login" && previousPrompt === "login")
      throw new Error(`The provider rejected the sign-in of ${username}`);
    const body =
      form.prompt === "login"
        ? new URLSearchParams({ prompt: "login", username, password })
        : new URLSearchParams({ prompt: form.prompt, decision: consent ? "allow" : "deny" });
    submission = { prompt: form.prompt, body };
    url = new URL(form.action, url);
  }
  throw new Error(`The authorization did not finish within ${maxSteps} requests`);
}
