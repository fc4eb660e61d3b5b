import { request as httpsRequest } from "node:https";
import { connect } from "node:net";
import type { RunningServer } from "./servers.js";

/** A response as the tests look at it. */
export interface CallResult {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body, or undefined when it is not JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever shape the server answered with.
  body: any;
}

/** What to send: `json` is serialised with `content-type: application/json`; `body` is sent as it is. */
export interface CallOptions {
  json?: unknown;
  body?: string | Uint8Array;
  headers?: Record<string, string>;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
}

/** One exchange as the client saw it: what the OpenAPI drift check (`openapi-drift.ts`) reads. */
export interface RecordedExchange {
  server: RunningServer;
  method: string;
  /** The request target as sent: the path and the query. */
  target: string;
  result: CallResult;
}

/**
 * Every exchange the helpers of this module made in the current test file, in order: each test
 * file has its own module instance. Recording costs a push per request.
 */
export const recordedExchanges: RecordedExchange[] = [];

function recorded<T extends CallResult>(server: RunningServer, method: string, target: string, result: T): T {
  recordedExchanges.push({ server, method, target, result });
  return result;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * One request over TLS with `node:https`, trusting only the server's test certificate. The host
 * name is not checked: the tests connect to whatever address the machine has (HTTP-7).
 */
function callOverTls(
  server: RunningServer,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: string | Uint8Array | undefined,
): Promise<CallResult> {
  return new Promise((resolve, reject) => {
    const request = httpsRequest(
      `${server.baseUrl}${path}`,
      { method, headers, ca: server.ca, checkServerIdentity: () => undefined },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", reject);
        response.on("end", () => {
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(response.headers)) {
            for (const item of Array.isArray(value) ? value : [value]) if (item !== undefined) responseHeaders.append(name, item);
          }
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({ status: response.statusCode ?? 0, headers: responseHeaders, text, body: parse(text) });
        });
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

/**
 * One request: with `fetch`, or over TLS with `node:https` when the server serves TLS. A
 * redirect is answered as it is, never followed.
 */
export async function call(server: RunningServer, method: string, path: string, options: CallOptions = {}): Promise<CallResult> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | Uint8Array | undefined = options.body;
  if (options.json !== undefined) {
    headers["content-type"] ??= "application/json";
    body = JSON.stringify(options.json);
  }
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (server.ca !== undefined) return recorded(server, method, path, await callOverTls(server, method, path, headers, body));
  const response = await fetch(`${server.baseUrl}${path}`, { method, headers, body, redirect: "manual" });
  const text = await response.text();
  return recorded(server, method, path, { status: response.status, headers: response.headers, text, body: parse(text) });
}

/** POST with a JSON body. */
export const post = (server: RunningServer, path: string, json: unknown, options: CallOptions = {}) =>
  call(server, "POST", path, { ...options, json });

/** A response read off a raw socket. */
export type RawResult = CallResult;

function decodeChunked(data: Buffer): Buffer | null {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = data.indexOf("\r\n", offset);
    if (lineEnd === -1) return null;
    const size = Number.parseInt(data.subarray(offset, lineEnd).toString("latin1"), 16);
    if (size === 0) return Buffer.concat(parts);
    if (data.length < lineEnd + 2 + size + 2) return null;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
}

/**
 * Reads the first complete HTTP/1.1 response out of what a socket received, or null if it is
 * incomplete. Once the connection is closed, a response without a length ends there.
 */
function firstResponse(data: Buffer, closed = false): RawResult | null {
  const headEnd = data.indexOf("\r\n\r\n");
  if (headEnd === -1) return null;
  const [statusLine = "", ...lines] = data.subarray(0, headEnd).toString("latin1").split("\r\n");
  const headers = new Headers();
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  const rest = data.subarray(headEnd + 4);
  let content: Buffer | null;
  const contentLength = headers.get("content-length");
  if (headers.get("transfer-encoding")?.includes("chunked")) content = decodeChunked(rest);
  else if (contentLength !== null) {
    const length = Number(contentLength);
    content = rest.length >= length ? rest.subarray(0, length) : null;
  } else content = closed ? rest : null;
  if (content === null) return null;
  const text = content.toString("utf8");
  return { status: Number(statusLine.split(" ")[1]), headers, text, body: parse(text) };
}

/**
 * Writes bytes to the server on a raw socket, for what `fetch` refuses to send (a false
 * `Content-Length`, hand-made chunking), and resolves with the first response. The server may
 * close the connection before it has read everything; write errors are then ignored.
 */
export function rawExchange(server: RunningServer, parts: (string | Buffer)[]): Promise<RawResult> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, server.host);
    let received = Buffer.alloc(0);
    let settled = false;
    const finish = (error: Error | null, result?: RawResult) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      if (error) reject(error);
      else resolve(result as RawResult);
    };
    socket.on("data", (chunk) => {
      received = Buffer.concat([received, chunk]);
      const result = firstResponse(received);
      if (result) finish(null, result);
    });
    socket.on("error", () => {
      // A reset after the server answered early; the close handler decides.
    });
    socket.on("close", () => {
      const result = firstResponse(received, true);
      finish(
        result ? null : new Error(`connection closed without a complete response: ${received.toString("latin1")}`),
        result ?? undefined,
      );
    });
    socket.on("connect", () => {
      for (const part of parts) socket.write(part);
    });
  });
}

/**
 * A chunked POST written by hand: the body in 8 KiB chunks, no `Content-Length`. With
 * `endBody: false` the last chunk is never sent, so only a server that counts the bytes as
 * they arrive can answer (HTTP-1).
 */
export async function chunkedPost(
  server: RunningServer,
  path: string,
  body: Buffer,
  options: { headers?: Record<string, string>; endBody?: boolean } = {},
): Promise<RawResult> {
  const head = [
    `POST ${path} HTTP/1.1`,
    `host: ${server.host}:${server.port}`,
    "transfer-encoding: chunked",
    "connection: close",
  ];
  for (const [name, value] of Object.entries({ "content-type": "application/json", ...options.headers }))
    head.push(`${name}: ${value}`);
  const parts: (string | Buffer)[] = [`${head.join("\r\n")}\r\n\r\n`];
  for (let offset = 0; offset < body.length; offset += 8192) {
    const chunk = body.subarray(offset, offset + 8192);
    parts.push(`${chunk.length.toString(16)}\r\n`, chunk, "\r\n");
  }
  if (options.endBody !== false) parts.push("0\r\n\r\n");
  return recorded(server, "POST", path, await rawExchange(server, parts));
}

/** A POST whose `Content-Length` says `declaredLength` while `body` is sent whole. */
export async function postWithContentLength(
  server: RunningServer,
  path: string,
  body: Buffer,
  declaredLength: number,
): Promise<RawResult> {
  const head = [
    `POST ${path} HTTP/1.1`,
    `host: ${server.host}:${server.port}`,
    "content-type: application/json",
    `content-length: ${declaredLength}`,
    "connection: close",
  ];
  return recorded(server, "POST", path, await rawExchange(server, [`${head.join("\r\n")}\r\n\r\n`, body]));
}

/**
 * A request written by hand with the request target exactly as given, for targets `fetch`
 * would resolve first (`/a/../b`, `\`, `%2e`, `http://host/…`): a JSON body when `body` is
 * given, and any other `headers`.
 */
export async function rawRequest(
  server: RunningServer,
  method: string,
  target: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<RawResult> {
  const head = [`${method} ${target} HTTP/1.1`, `host: ${server.host}:${server.port}`, "connection: close"];
  for (const [name, value] of Object.entries(headers)) head.push(`${name}: ${value}`);
  if (body !== undefined) head.push("content-type: application/json", `content-length: ${Buffer.byteLength(body)}`);
  return recorded(server, method, target, await rawExchange(server, [`${head.join("\r\n")}\r\n\r\n${body ?? ""}`]));
}
