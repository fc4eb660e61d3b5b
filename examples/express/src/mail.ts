import type { AddressInfo } from "node:net";
import type { EmailMessage } from "@portcullis/core";
import nodemailer from "nodemailer";
import { SMTPServer } from "smtp-server";

/** One message the demo's mail server received, decoded. Times are epoch milliseconds. */
export interface ReceivedMessage {
  /** Its number in the outbox, from 1: `/outbox#message-<id>`. */
  id: number;
  receivedAt: number;
  /** The envelope's sender and recipients, as the SMTP client gave them. */
  envelopeFrom: string;
  envelopeTo: string[];
  /** The headers, decoded. */
  from: string;
  to: string;
  subject: string;
  /** The plain-text part, or "" without one. */
  text: string;
  /** The HTML part, or "" without one. */
  html: string;
}

/** The demo's local SMTP server and what it received, newest first. Demo only: a real service sends through its provider. */
export interface DemoMailServer {
  host: "127.0.0.1";
  port: number;
  /** The messages received, newest first, at most {@link outboxLimit}. */
  messages(): ReceivedMessage[];
  /** Resolves with the first message received (from now or before) that `matches`; rejects after `timeoutMs`. */
  waitFor(matches: (message: ReceivedMessage) => boolean, timeoutMs?: number): Promise<ReceivedMessage>;
  close(): Promise<void>;
}

/** How many messages the outbox keeps: the oldest go first. */
export const outboxLimit = 100;

/** The largest message the server accepts, in bytes. */
const maxMessageBytes = 1024 * 1024;

/**
 * Starts an SMTP server on a free port of 127.0.0.1 (or `port`) with `smtp-server`: no
 * authentication and no STARTTLS (it is reached on loopback only), messages of at most 1 MiB,
 * decoded and kept in memory. It is the demo's stand-in for a mail provider: nothing it receives
 * leaves the machine.
 *
 * @example
 * ```ts
 * const mail = await startDemoMailServer();
 * const { app } = await createDemoApp({ origin, mailServer: mail });
 * ```
 */
export async function startDemoMailServer(port = 0): Promise<DemoMailServer> {
  const received: ReceivedMessage[] = [];
  const waiting = new Set<(message: ReceivedMessage) => void>();
  let count = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["AUTH", "STARTTLS"],
    size: maxMessageBytes,
    logger: false,
    banner: "Portcullis demo outbox",
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("error", callback);
      stream.on("end", () => {
        if (stream.sizeExceeded) {
          callback(Object.assign(new Error("Message too large"), { responseCode: 552 }));
          return;
        }
        count += 1;
        const message: ReceivedMessage = {
          id: count,
          receivedAt: Date.now(),
          envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          envelopeTo: session.envelope.rcptTo.map((recipient) => recipient.address),
          ...parseMessage(Buffer.concat(chunks).toString("latin1")),
        };
        received.unshift(message);
        received.splice(outboxLimit);
        for (const notify of waiting) notify(message);
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  return {
    host: "127.0.0.1",
    port: (server.server.address() as AddressInfo).port,
    messages: () => [...received],
    waitFor(matches, timeoutMs = 5000) {
      const found = received.find(matches);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(notify);
          reject(new Error(`no such message reached the outbox within ${timeoutMs} ms`));
        }, timeoutMs);
        const notify = (message: ReceivedMessage) => {
          if (!matches(message)) return;
          clearTimeout(timer);
          waiting.delete(notify);
          resolve(message);
        };
        waiting.add(notify);
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The `email.send` of `createAuth` that delivers through nodemailer to `mailServer`: the wiring a
 * service uses with its own SMTP server, minus the TLS and credentials a real one needs.
 *
 * @example
 * ```ts
 * createAuth({ …, email: { send: sendThroughSmtp(mail), resetUrl, verifyUrl } });
 * ```
 */
export function sendThroughSmtp(
  mailServer: { host: string; port: number },
  from: string,
): (message: EmailMessage) => Promise<void> {
  // Unsafe outside a demo: no TLS (ignoreTLS) and no credentials, to a server on this machine.
  const transport = nodemailer.createTransport({ host: mailServer.host, port: mailServer.port, secure: false, ignoreTLS: true });
  return async (message) => {
    await transport.sendMail({
      from: message.from ?? from,
      to: message.to,
      subject: message.subject,
      text: message.text,
      html: message.html,
    });
  };
}

/** The decoded headers and bodies of a raw RFC 5322 message, as nodemailer writes them. */
export function parseMessage(raw: string): Pick<ReceivedMessage, "from" | "to" | "subject" | "text" | "html"> {
  const { headers, body } = splitPart(raw);
  const parts = { text: "", html: "" };
  collectBodies(headers, body, parts, 0);
  return {
    from: decodeWords(headers.get("from") ?? ""),
    to: decodeWords(headers.get("to") ?? ""),
    subject: decodeWords(headers.get("subject") ?? ""),
    ...parts,
  };
}

/** A part's headers (names lower-cased, folded lines joined) and its body. */
function splitPart(raw: string): { headers: Map<string, string>; body: string } {
  const normalized = raw.replace(/\r\n/g, "\n");
  const end = normalized.indexOf("\n\n");
  const head = end === -1 ? normalized : normalized.slice(0, end);
  const body = end === -1 ? "" : normalized.slice(end + 2);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\n[ \t]+/g, " ").split("\n")) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, body };
}

/** Walks a multipart tree (a few levels at most) and keeps the first text/plain and text/html bodies. */
function collectBodies(headers: Map<string, string>, body: string, into: { text: string; html: string }, depth: number): void {
  const type = headers.get("content-type") ?? "text/plain";
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (/^multipart\//i.test(type) && boundary && depth < 4) {
    const sections = body.split(`--${boundary}`).slice(1);
    for (const section of sections) {
      if (section.startsWith("--")) break;
      // The line break before a boundary belongs to the boundary (RFC 2046).
      const part = splitPart(section.replace(/^\n/, "").replace(/\n$/, ""));
      collectBodies(part.headers, part.body, into, depth + 1);
    }
    return;
  }
  const charset = /charset="?([^";]+)"?/i.exec(type)?.[1];
  const decoded = decodeBody(body, headers.get("content-transfer-encoding") ?? "7bit", charset);
  if (/^text\/html/i.test(type) && !into.html) into.html = decoded;
  else if (/^text\/plain/i.test(type) && !into.text) into.text = decoded;
}

/** The bytes of a body in its transfer encoding, read in its charset (UTF-8 unless told). */
function decodeBody(body: string, encoding: string, charset = "utf-8"): string {
  let bytes: Buffer;
  if (/^base64$/i.test(encoding)) bytes = Buffer.from(body.replace(/\s+/g, ""), "base64");
  else if (/^quoted-printable$/i.test(encoding)) bytes = decodeQuotedPrintable(body);
  else bytes = Buffer.from(body, "latin1");
  return new TextDecoder(/^utf-?8$/i.test(charset) ? "utf-8" : charset).decode(bytes);
}

/** RFC 2045 quoted-printable: `=XX` bytes, and `=` at a line's end joining it to the next. */
function decodeQuotedPrintable(body: string): Buffer {
  const joined = body.replace(/[ \t]+$/gm, "").replace(/=\n/g, "");
  const bytes: number[] = [];
  for (let index = 0; index < joined.length; index += 1) {
    const hex = joined.slice(index + 1, index + 3);
    if (joined[index] === "=" && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      index += 2;
    } else {
      bytes.push(joined.charCodeAt(index) & 0xff);
    }
  }
  return Buffer.from(bytes);
}

/** RFC 2047 encoded words in a header (`=?UTF-8?Q?…?=`, `=?UTF-8?B?…?=`), decoded; the space between two of them dropped. */
function decodeWords(header: string): string {
  const raw = Buffer.from(header, "latin1").toString("utf8");
  return raw
    .replace(/(\?=)\s+(=\?)/g, "$1$2")
    .replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_word, charset: string, kind: string, text: string) => {
      const bytes = kind.toUpperCase() === "B" ? Buffer.from(text, "base64") : decodeQuotedPrintable(text.replace(/_/g, " "));
      return new TextDecoder(/^utf-?8$/i.test(charset) ? "utf-8" : charset).decode(bytes);
    });
}
