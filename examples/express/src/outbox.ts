import { type Router, Router as createRouter } from "express";
import type { DemoMailServer, ReceivedMessage } from "./mail.js";

/** The outbox page's address: what the demo prints at start and the page links to. */
export const outboxPath = "/outbox";

/**
 * The content security policy of a message's HTML part, served alone at `/outbox/<id>.html`:
 * no script, no request of any kind (a message's images or styles from elsewhere would load),
 * only its inline styles; its links still navigate.
 */
export const messageHtmlContentSecurityPolicy = [
  "default-src 'none'",
  "style-src 'unsafe-inline'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Escapes text for HTML content and double-quoted attributes. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** A message's text, escaped, with each http(s) URL a link: the reset and verification links are clickable. */
function textWithLinks(text: string): string {
  let html = "";
  let last = 0;
  for (const match of text.matchAll(/https?:\/\/[^\s<>"']+/g)) {
    const url = match[0];
    html += `${escapeHtml(text.slice(last, match.index))}<a href="${escapeHtml(url)}">${escapeHtml(url)}</a>`;
    last = (match.index ?? 0) + url.length;
  }
  return html + escapeHtml(text.slice(last));
}

/** One message of the outbox page. */
function messageHtml(message: ReceivedMessage): string {
  const time = new Date(message.receivedAt).toISOString();
  const htmlLink = message.html ? ` · <a href="${outboxPath}/${message.id}.html">the HTML version</a>` : "";
  return `<article class="card message" id="message-${message.id}" data-message-id="${message.id}">
  <h2 class="message-subject">${escapeHtml(message.subject || "(no subject)")}</h2>
  <p class="hint">To <span class="message-to">${escapeHtml(message.to || message.envelopeTo.join(", "))}</span>
  · from ${escapeHtml(message.from || message.envelopeFrom)}
  · <time datetime="${time}">${escapeHtml(time.replace("T", " ").replace(/\.\d+Z$/, " UTC"))}</time>${htmlLink}</p>
  <pre class="message-text">${textWithLinks(message.text || "(no text part)")}</pre>
</article>`;
}

/** The outbox page: every message received, newest first, with a notice that it is a demo aid. */
export function outboxPage(mail: Pick<DemoMailServer, "host" | "port" | "messages">): string {
  const messages = mail.messages();
  const list =
    messages.length === 0
      ? `<p class="card" id="outbox-empty">No messages yet. "Forgot password?" on the <a href="/">sign-in page</a>, or a change of address on the account page, sends one here.</p>`
      : messages.map(messageHtml).join("\n");
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Outbox · Portcullis demo</title>
    <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
    <link rel="stylesheet" href="/style.css" />
  </head>
  <body>
    <header class="top">
      <a class="brand" href="/"><img src="/favicon.svg" alt="" width="32" height="32" /> Portcullis demo</a>
      <nav><a href="/">Sign-in page</a> <a href="${outboxPath}">Outbox</a> <a href="/api-docs/">API reference</a></nav>
    </header>
    <main>
      <section class="card">
        <h1>Outbox <span class="badge">demo only</span></h1>
        <p id="outbox-notice">
          A demo aid, not part of Portcullis: the mail the demo sent, as its own SMTP server on
          ${mail.host}:${mail.port} received it from nodemailer. Nothing leaves this machine. A real
          service hands the messages to its mail provider, and nobody but the addressee reads them.
          Kept in memory, newest first: reload to see new ones.
        </p>
      </section>
      ${list}
    </main>
  </body>
</html>
`;
}

/**
 * The outbox's routes, demo only: `GET /outbox`, the page of the messages the demo's mail server
 * received, and `GET /outbox/<id>.html`, a message's HTML part alone under
 * {@link messageHtmlContentSecurityPolicy}. Never cached, never indexed.
 *
 * @example
 * ```ts
 * app.use(outboxRoutes(mail));
 * ```
 */
export function outboxRoutes(mail: DemoMailServer): Router {
  const router = createRouter();
  router.get(outboxPath, (_req, res) => {
    res.status(200).type("html").set({ "cache-control": "no-store", "x-robots-tag": "noindex" }).send(outboxPage(mail));
  });
  router.get(`${outboxPath}/:id.html`, (req, res) => {
    const message = mail.messages().find((received) => String(received.id) === req.params.id);
    if (!message?.html) {
      res.status(404).type("text").set("cache-control", "no-store").send("No such message in the outbox");
      return;
    }
    res
      .status(200)
      .type("html")
      .set({
        "cache-control": "no-store",
        "x-robots-tag": "noindex",
        "content-security-policy": messageHtmlContentSecurityPolicy,
      })
      .send(message.html);
  });
  return router;
}
