import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";

// The look of the Express demo's page (examples/express/public/style.css): its palette, light or
// dark as the browser prefers, a card on a grey page, a blue primary button, and errors in red
// beside the fields they are about.
const style = [
  ":root{color-scheme:light dark;--bg:#f4f5f8;--card:#fff;--text:#1d2330;--muted:#5b6474;--line:#dde1e8;",
  "--accent:#3550c8;--accent-text:#fff;--danger:#b42318;--danger-bg:#fdecea;--field:#fff;",
  "font-family:system-ui,-apple-system,'Segoe UI',sans-serif;line-height:1.45;color:var(--text);background:var(--bg)}",
  "@media (prefers-color-scheme:dark){:root{--bg:#14171d;--card:#1d2129;--text:#e6e8ee;--muted:#a0a7b4;--line:#323845;",
  "--accent:#7d93ff;--accent-text:#0d1020;--danger:#ff8a80;--danger-bg:#3a1d1b;--field:#14171d}}",
  "*{box-sizing:border-box}",
  "body{margin:0;padding:2.5rem 1rem}",
  "main{max-width:26rem;margin:0 auto;background:var(--card);border:1px solid var(--line);border-radius:10px;",
  "padding:1.25rem 1.4rem;box-shadow:0 1px 2px #0000000d}",
  ".brand{margin:0;font-size:.85rem;font-weight:600;color:var(--muted)}",
  "h1{margin:.25rem 0 1rem;font-size:1.4rem}",
  "form{display:flex;flex-direction:column;gap:.75rem;margin-top:1rem}",
  "label{display:flex;flex-direction:column;gap:.25rem;font-size:.9rem;font-weight:500}",
  "input{font:inherit;font-weight:400;padding:.45rem .6rem;border:1px solid var(--line);border-radius:6px;",
  "background:var(--field);color:var(--text)}",
  "input[aria-invalid=true]{border-color:var(--danger)}",
  "input:focus-visible,button:focus-visible{outline:2px solid var(--accent);outline-offset:1px}",
  "button{font:inherit;font-weight:500;padding:.45rem .9rem;border-radius:6px;border:1px solid var(--line);",
  "background:var(--card);color:var(--text);cursor:pointer}",
  "button:hover{border-color:var(--muted)}",
  "button.primary{background:var(--accent);border-color:var(--accent);color:var(--accent-text)}",
  ".actions{display:flex;flex-wrap:wrap;gap:.5rem}",
  ".actions button{flex:1}",
  ".error{margin:0;padding:.45rem .7rem;border-left:3px solid var(--danger);background:var(--danger-bg);",
  "color:var(--danger);font-size:.9rem;border-radius:0 6px 6px 0}",
  ".hint{font-size:.85rem;color:var(--muted)}",
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
      `${alert}<button type="submit" class="primary">Sign in</button></form>`,
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
      `<button type="submit" name="decision" value="allow" class="primary" autofocus>Allow</button></div></form>`,
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
