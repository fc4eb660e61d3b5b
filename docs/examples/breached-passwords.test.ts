// Runs docs/examples/breached-passwords.ts against a local server that answers like the
// Pwned Passwords range API, and checks what leaves the process.
import { createHash, randomBytes } from "node:crypto";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { AuthError, ErrorCode, createAuth, createUser, memoryStorage } from "@portcullis/core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { pwnedPasswordsCheck } from "./breached-passwords.js";

const sha1 = (text: string) => createHash("sha1").update(text, "utf8").digest("hex").toUpperCase();

const breached = "a leaked but long passphrase";
/** Listed by the server only as a padding entry (count 0), which is not a breach. */
const paddingOnly = "a passphrase only in the padding";
const clean = "correct horse battery staple";

interface SeenRequest {
  method: string;
  url: string;
  headers: string;
  body: string;
}

const seen: SeenRequest[] = [];
let answerStatus = 200;
let server: Server;
let endpoint: string;

/** The range API's answer for a prefix: `SUFFIX:COUNT` lines, with padding entries of count 0. */
function rangeAnswer(prefix: string): string {
  const lines = Array.from({ length: 20 }, () => `${randomBytes(18).toString("hex").slice(0, 35).toUpperCase()}:0`);
  for (const [password, count] of [
    [breached, 3861493],
    [paddingOnly, 0],
  ] as const) {
    const digest = sha1(password);
    if (digest.startsWith(prefix)) lines.push(`${digest.slice(5)}:${count}`);
  }
  return lines.join("\r\n");
}

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      seen.push({ method: request.method ?? "", url: request.url ?? "", headers: JSON.stringify(request.headers), body });
      const prefix = /^\/range\/([0-9A-F]{5})$/.exec(request.url ?? "")?.[1];
      if (answerStatus !== 200 || !prefix) {
        response.writeHead(prefix ? answerStatus : 400).end();
        return;
      }
      response.writeHead(200, { "content-type": "text/plain" }).end(rangeAnswer(prefix));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/range/`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  seen.length = 0;
  answerStatus = 200;
});

describe("docs/examples/breached-passwords", () => {
  it("PW-3: a password in the range answer is breached, one absent or only in the padding is not", async () => {
    const isBreached = pwnedPasswordsCheck({ endpoint });
    expect(await isBreached(breached)).toBe(true);
    expect(await isBreached(paddingOnly)).toBe(false);
    expect(await isBreached(clean)).toBe(false);
  });

  it("PW-3: only the first 5 hex characters of the SHA-1 leave the process, never the password or the rest of its hash", async () => {
    const isBreached = pwnedPasswordsCheck({ endpoint });
    for (const password of [breached, clean]) await isBreached(password);
    expect(seen.map(({ method, url, body }) => ({ method, url, body }))).toEqual(
      [breached, clean].map((password) => ({ method: "GET", url: `/range/${sha1(password).slice(0, 5)}`, body: "" })),
    );
    const everything = JSON.stringify(seen).toUpperCase();
    for (const password of [breached, clean]) {
      expect(everything).not.toContain(password.toUpperCase());
      expect(everything).not.toContain(sha1(password).slice(5, 15));
    }
  });

  it("PW-3: a given fetch is used instead of the global one", async () => {
    const urls: string[] = [];
    const isBreached = pwnedPasswordsCheck({
      endpoint: "https://range.invalid/range/",
      fetch: async (input) => {
        urls.push(String(input));
        return new Response(`${sha1(breached).slice(5)}:12`);
      },
    });
    expect(await isBreached(breached)).toBe(true);
    expect(urls).toEqual([`https://range.invalid/range/${sha1(breached).slice(0, 5)}`]);
  });

  it("PW-3: as password.isBreached it refuses a breached password with 42200, and fails closed with 50300 when the API is down", async () => {
    const auth = createAuth({
      storage: memoryStorage(),
      issuer: "https://api.example.com",
      audience: "example-api",
      secrets: { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("base64url") },
      password: { isBreached: pwnedPasswordsCheck({ endpoint }) },
    });
    const refused = await createUser(auth, { username: "alice", password: breached }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AuthError);
    expect(refused).toMatchObject({ code: ErrorCode.ValidationFailed, message: expect.stringMatching(/data breach/) });
    await createUser(auth, { username: "bob", password: clean });

    answerStatus = 503;
    const unavailable = await createUser(auth, { username: "carol", password: clean }).catch((error: unknown) => error);
    expect(unavailable).toMatchObject({ code: ErrorCode.Unavailable });
    expect((unavailable as AuthError).cause).toBeInstanceOf(Error);
  });
});
