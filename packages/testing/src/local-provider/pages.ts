import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";

// The look of the Express demo's page (examples/express/public/style.css): system fonts, light or
// dark as the browser prefers, thin grey rules, a red-tinted alert; here as one card.
const style = [
  ":root{color-scheme:light dark;font-family:system-ui,sans-serif;line-height:1.45}",
  "body{margin:0;padding:2rem 1rem}",
  "main{max-width:24rem;margin:0 auto;border:1px solid #8884;border-radius:8px;padding:1.25rem 1.5rem}",
  ".brand{margin:0;font-size:.85rem;opacity:.75}",
  "h1{margin:.25rem 0 1rem;font-size:1.5rem}",
  "form{display:flex;flex-direction:column;gap:.75rem}",
  "label{display:flex;flex-direction:column;gap:.2rem;font-size:.9rem}",
  "input{font:inherit;padding:.35rem .5rem}",
  "input[aria-invalid=true]{outline:2px solid #c33a}",
  "button{font:inherit;padding:.35rem .8rem;cursor:pointer}",
  ".actions{display:flex;flex-wrap:wrap;gap:.5rem}",
  ".actions button{flex:1}",
  ".error{margin:0;padding:.4rem .6rem;border-radius:4px;background:#c334;font-size:.9rem}",
  ".hint{font-size:.85rem;opacity:.75}",
  "ul{padding-left:1.2rem}",
  "code{font-family:ui-monospace,monospace;word-break:break-all}",
].join("");

/**
 * The content security policy of every page of the provider: nothing but the one inline style,
 * allowed by its hash. No form-action: after a form, the provider redirects to the client, on
 * another origin, which form-action would block.
 */
export const pageContentSecurityPolicy = [
  "default-src 'none'",
  `style-src 'sha256-${createHash("sha256").update(style).digest("base64")}'`,
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Escapes text for HTML content and double-quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** A whole page: `title` is text, `body` is HTML already escaped. */
export function page(title: string, body: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${escapeHtml(title)} · Local OpenID provider</title><style>${style}</style></head>` +
    `<body><main><p class="brand">Local OpenID provider</p><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`
  );
}

/** The login step: username and password; after a wrong pair, the alert sits under the fields it is about. */
export function loginPage(uid: string, failed?: { username: string }): string {
  const invalid = failed ? ` aria-invalid="true" aria-describedby="sign-in-error"` : "";
  const alert = failed ? `<p id="sign-in-error" class="error" role="alert">Wrong username or password.</p>` : "";
  return page(
    "Sign in",
    `<form method="post" action="/interaction/${escapeHtml(uid)}">` +
      `<input type="hidden" name="prompt" value="login">` +
      `<label>Username <input type="text" name="username" autocomplete="username" required` +
      `${failed ? ` value="${escapeHtml(failed.username)}"` : " autofocus"}${invalid}></label>` +
      `<label>Password <input type="password" name="password" autocomplete="current-password" required` +
      `${failed ? " autofocus" : ""}${invalid}></label>` +
      `${alert}<button type="submit">Sign in</button></form>`,
  );
}

const scopeWords: Record<string, string> = {
  openid: "who you are here (an identifier of your account)",
  email: "your email address, and whether it is verified",
  profile: "your name",
};

/** The consent step: who asks, for what, as whom; Allow or Deny. */
export function consentPage(uid: string, clientId: string, scopes: string[], accountName: string | undefined): string {
  const asked =
    scopes.length > 0
      ? `<p>It will learn:</p><ul>${scopes.map((scope) => `<li>${escapeHtml(scopeWords[scope] ?? scope)}</li>`).join("")}</ul>`
      : "";
  const who = accountName ? `<p class="hint">Signed in as ${escapeHtml(accountName)}.</p>` : "";
  return page(
    "Allow access?",
    `<p><code>${escapeHtml(clientId)}</code> asks to sign you in with this provider.</p>${asked}${who}` +
      `<form method="post" action="/interaction/${escapeHtml(uid)}">` +
      `<input type="hidden" name="prompt" value="consent">` +
      `<div class="actions"><button type="submit" name="decision" value="deny">Deny</button>` +
      `<button type="submit" name="decision" value="allow" autofocus>Allow</button></div></form>`,
  );
}

/** Sends a page of the provider, never cached, under {@link pageContentSecurityPolicy}. */
export function sendHtml(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "content-security-policy": pageContentSecurityPolicy,
  });
  res.end(html);
}
