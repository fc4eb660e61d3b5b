import { randomBytes } from "node:crypto";
import { SignJWT } from "jose";
import { testAudience, testIssuer } from "../fixtures/auth.js";
import { type CallResult, call, chunkedPost, postWithContentLength } from "./client.js";
import type { RunningServer } from "./servers.js";

/** What a malformed case may use: a live access token of the server's auth. */
export interface MalformedContext {
  token: string;
  userId: string;
  /** An `express.json()` ran before the routes, so core sees `req.body` rather than the stream. */
  bodyParsedEarlier: boolean;
}

/** One malformed request and the business code it must get. */
export interface MalformedCase {
  name: string;
  code: number;
  send(server: RunningServer, context: MalformedContext): Promise<CallResult>;
  /** When a body parser read the body first: another right answer, or why the case does not apply. */
  whenParsedEarlier?: { code: number; reason: string } | { notApplicable: string };
}

const base = "/api/v1/auth";

function jsonText(path: string, text: string | Uint8Array, contentType = "application/json") {
  return (server: RunningServer) =>
    call(server, "POST", `${base}${path}`, { body: text, headers: { "content-type": contentType } });
}

function bearer(path: string, authorization: string | undefined, method = "GET") {
  return (server: RunningServer) =>
    call(server, method, `${base}${path}`, authorization === undefined ? {} : { headers: { authorization } });
}

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

function claims(userId: string) {
  const now = Math.floor(Date.now() / 1000);
  return {
    iss: testIssuer,
    aud: testAudience,
    sub: userId,
    iat: now,
    exp: now + 600,
    jti: "j",
    sid: "s",
    tv: 0,
    roles: [],
    amr: ["pwd"],
  };
}

/** An unsigned token (`alg: none`) with otherwise plausible claims (AT-1). */
function algNoneToken(userId: string): string {
  return `${base64url({ alg: "none", typ: "at+jwt" })}.${base64url(claims(userId))}.`;
}

/** A well-formed HS256 access token signed with a secret the server does not have. */
function foreignToken(userId: string): Promise<string> {
  return new SignJWT(claims(userId)).setProtectedHeader({ alg: "HS256", typ: "at+jwt" }).sign(randomBytes(32));
}

function nested(depth: number): string {
  return `{"refreshToken":"x","deep":${"[".repeat(depth)}${"]".repeat(depth)}}`;
}

const overLimit = "a".repeat(70 * 1024);

const publicKey = `${base}/public-key`;
const unknownCeremony = { "x-webauthn-ceremony": "an-unknown-ceremony" };
/** A credential id no passkey has: 32 bytes, base64url. */
const unknownCredential = Buffer.alloc(32, 7).toString("base64url");
/** Over the 64 KiB limit, under the 1 MiB of the WebAuthn finish routes (and under `express.json()`'s 100kb). */
const between = "a".repeat(90 * 1024);
const overFinishLimit = "a".repeat(1024 * 1024);

/**
 * A request to a public-key route. Bodies over 64 KiB go on a connection of their own
 * (`connection: close`): see "HTTP-1: after a body refused as too large …" in contract.test.ts.
 */
function passkeyCall(
  method: string,
  path: string,
  options: { text?: string; contentType?: string; headers?: Record<string, string>; withToken?: boolean } = {},
) {
  return (server: RunningServer, context: MalformedContext) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.text !== undefined) headers["content-type"] = options.contentType ?? "application/json";
    if (options.text !== undefined && options.text.length > 64 * 1024) headers.connection = "close";
    return call(server, method, `${publicKey}${path}`, {
      headers,
      ...(options.text === undefined ? {} : { body: options.text }),
      ...(options.withToken ? { token: context.token } : {}),
    });
  };
}
const bodyParserKeepsBom = "body-parser strips a UTF-8 BOM before parsing, so the body is read as valid JSON";

/**
 * The malformed-request table (PW-5, HTTP-1, HTTP-2, AT-1, AT-6): each answered with its
 * documented code in the envelope, never a 500.
 */
export const malformedCases: MalformedCase[] = [
  { name: "bad JSON", code: 40002, send: jsonText("/login", '{username: "alice"}') },
  { name: "truncated JSON", code: 40002, send: jsonText("/login", '{"username":"alice","password":"x"') },
  { name: "a JSON array body", code: 40002, send: jsonText("/login", '[{"username":"alice","password":"x"}]') },
  { name: "a JSON string body", code: 40002, send: jsonText("/login", '"alice"') },
  { name: "a JSON number body", code: 40002, send: jsonText("/login", "42") },
  { name: "a JSON null body", code: 40002, send: jsonText("/login", "null") },
  { name: "HTTP-2: text/plain", code: 40002, send: jsonText("/login", '{"username":"a","password":"b"}', "text/plain") },
  {
    name: "HTTP-2: application/x-www-form-urlencoded",
    code: 40002,
    send: jsonText("/login", "username=alice&password=x", "application/x-www-form-urlencoded"),
  },
  {
    name: "HTTP-2: no content type",
    code: 40002,
    send: (server) =>
      call(server, "POST", `${base}/login`, { body: new TextEncoder().encode('{"username":"a","password":"b"}') }),
  },
  {
    name: "HTTP-2: a JSON look-alike type",
    code: 40002,
    send: jsonText("/login", '{"username":"a","password":"b"}', "application/x-json"),
  },
  { name: "HTTP-1: a declared body over 64 KiB", code: 40002, send: jsonText("/login", JSON.stringify({ username: overLimit })) },
  {
    name: "HTTP-1: a chunked body over 64 KiB, refused before it ends",
    code: 40002,
    // Behind a body parser the body must end for the parser to pass it on; core then refuses it.
    send: (server, context) =>
      chunkedPost(server, `${base}/login`, Buffer.from(JSON.stringify({ username: overLimit })), {
        endBody: context.bodyParsedEarlier,
      }),
  },
  {
    name: "HTTP-1: a Content-Length over 64 KiB with a small body",
    code: 40002,
    send: (server) => postWithContentLength(server, `${base}/login`, Buffer.from("{}"), 2_000_000),
    whenParsedEarlier: { notApplicable: "body-parser waits for the declared bytes before it passes its 413 on" },
  },
  { name: 'PW-5: {"password":{"$ne":""}}', code: 40002, send: jsonText("/login", '{"username":"alice","password":{"$ne":""}}') },
  { name: "PW-5: username as a number", code: 40002, send: jsonText("/login", '{"username":42,"password":"x"}') },
  { name: "PW-5: username as an array", code: 40002, send: jsonText("/login", '{"username":["alice"],"password":"x"}') },
  { name: "PW-5: username as an object", code: 40002, send: jsonText("/login", '{"username":{"$gt":""},"password":"x"}') },
  { name: "missing username", code: 40001, send: jsonText("/login", '{"password":"x"}') },
  { name: "missing password", code: 40001, send: jsonText("/login", '{"username":"alice"}') },
  { name: "empty username and password", code: 40001, send: jsonText("/login", '{"username":"","password":""}') },
  { name: "an empty JSON body", code: 40001, send: jsonText("/login", "", "application/json; charset=utf-8") },
  {
    name: "PW-5: a __proto__ key",
    code: 40002,
    send: jsonText("/login", '{"__proto__":{"admin":true},"username":"a","password":"b"}'),
  },
  {
    name: "PW-5: a constructor key",
    code: 40002,
    send: jsonText("/login", '{"constructor":{"prototype":{}},"username":"a","password":"b"}'),
  },
  {
    name: "PW-5: a nested __proto__ key",
    code: 40002,
    send: jsonText("/login", '{"username":"a","password":"b","x":[{"__proto__":{}}]}'),
  },
  { name: "PW-5: a prototype key", code: 40002, send: jsonText("/refresh", '{"refreshToken":"x","prototype":1}') },
  { name: "refreshToken as a number", code: 40002, send: jsonText("/refresh", '{"refreshToken":12345}') },
  { name: "missing refreshToken", code: 40001, send: jsonText("/refresh", "{}") },
  { name: "logout without refreshToken", code: 40001, send: jsonText("/logout", '{"token":"x"}') },
  { name: "logout with an unknown refresh token", code: 40101, send: jsonText("/logout", '{"refreshToken":"not-a-token"}') },
  { name: "2fa/verify without tempToken", code: 40001, send: jsonText("/2fa/verify", '{"code":"123456"}') },
  {
    name: "2fa/verify with tempToken as a number",
    code: 40002,
    send: jsonText("/2fa/verify", '{"tempToken":1,"code":"123456"}'),
  },
  { name: "2fa/verify with code as a number", code: 40002, send: jsonText("/2fa/verify", '{"tempToken":"t","code":123456}') },
  {
    name: "2fa/recovery with recoveryCode as an array",
    code: 40002,
    send: jsonText("/2fa/recovery", '{"tempToken":"t","recoveryCode":["a"]}'),
  },
  { name: "provider as a number", code: 40002, send: jsonText("/login", '{"username":"a","password":"b","provider":1}') },
  {
    name: "a provider that is not enabled",
    code: 40400,
    send: jsonText("/login", '{"username":"a","password":"b","provider":"directory"}'),
  },
  { name: "GET on a POST route", code: 40400, send: (server) => call(server, "GET", `${base}/login`) },
  { name: "PUT on a POST route", code: 40400, send: (server) => call(server, "PUT", `${base}/login`, { json: {} }) },
  { name: "an unknown path under /auth", code: 40400, send: (server) => call(server, "GET", `${base}/nope`) },
  { name: "the /auth prefix itself", code: 40400, send: (server) => call(server, "POST", base, { json: {} }) },
  {
    name: "RL-3: repeated and trailing slashes are normalised",
    code: 40002,
    send: (server) =>
      call(server, "POST", "//api/v1//auth//login/", { body: "{", headers: { "content-type": "application/json" } }),
  },
  { name: "AT-6: /me without Authorization", code: 40101, send: bearer("/me", undefined) },
  { name: "AT-6: /me with Basic credentials", code: 40101, send: bearer("/me", "Basic YWxpY2U6eA==") },
  { name: "AT-6: /me with Bearer and no token", code: 40101, send: bearer("/me", "Bearer") },
  { name: "AT-1: /me with a garbage JWT", code: 40101, send: bearer("/me", "Bearer abc.def.ghi") },
  {
    name: "AT-1: /me with an alg none token",
    code: 40101,
    send: (server, context) => bearer("/me", `Bearer ${algNoneToken(context.userId)}`)(server),
  },
  {
    name: "AT-1: /me with a token signed by another secret",
    code: 40101,
    send: async (server, context) => bearer("/me", `Bearer ${await foreignToken(context.userId)}`)(server),
  },
  {
    name: "AT-6: a valid token in the query string only",
    code: 40101,
    send: (server, context) => call(server, "GET", `${base}/me?access_token=${context.token}&token=${context.token}`),
  },
  {
    name: "AT-6: requireAuth with a valid token in the query string only",
    code: 40101,
    send: (server, context) => call(server, "GET", `/api/v1/things?access_token=${context.token}`),
  },
  { name: "2fa/setup without a token", code: 40101, send: jsonText("/2fa/setup", "{}") },
  {
    name: "HTTP-2: 2fa/setup with a token and a non-JSON body",
    code: 40002,
    send: (server, context) =>
      call(server, "POST", `${base}/2fa/setup`, {
        token: context.token,
        body: "secret please",
        headers: { "content-type": "text/plain" },
      }),
  },
  {
    name: "2fa/enable with a token and code as a number",
    code: 40002,
    send: (server, context) => call(server, "POST", `${base}/2fa/enable`, { token: context.token, json: { code: 123456 } }),
  },
  { name: "deeply nested JSON", code: 40002, send: jsonText("/refresh", nested(200)) },
  { name: "HTTP-5: JSON nested 5,000 deep (10 KB) is 40002, never a 500", code: 40002, send: jsonText("/refresh", nested(5000)) },
  {
    name: "many keys under the limit are read normally",
    code: 40101,
    send: jsonText(
      "/refresh",
      JSON.stringify({ refreshToken: "unknown", ...Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`k${i}`, i])) }),
    ),
  },
  {
    name: "a UTF-8 BOM before the JSON",
    code: 40002,
    send: jsonText("/refresh", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"refreshToken":"unknown"}')])),
    whenParsedEarlier: { code: 40101, reason: bodyParserKeepsBom },
  },
  {
    name: "invalid UTF-8 inside a string",
    code: 40101,
    send: jsonText(
      "/refresh",
      Buffer.concat([Buffer.from('{"refreshToken":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}')]),
    ),
  },
  { name: "invalid UTF-8 outside strings", code: 40002, send: jsonText("/refresh", Buffer.from([0x7b, 0xff, 0xfe, 0x7d])) },
  {
    name: "public-key/login/finish without the ceremony header",
    code: 40002,
    send: passkeyCall("POST", "/login/finish", { text: '{"id":"AAAA","rawId":"AAAA","type":"public-key"}' }),
  },
  {
    name: "public-key/login/finish with an empty ceremony header",
    code: 40002,
    send: passkeyCall("POST", "/login/finish", { text: "{}", headers: { "x-webauthn-ceremony": "" } }),
  },
  {
    name: "public-key/login/finish with an unknown ceremony",
    code: 40100,
    send: passkeyCall("POST", "/login/finish", { text: "{}", headers: unknownCeremony }),
  },
  {
    name: "public-key/login/finish with a JSON array body",
    code: 40002,
    send: passkeyCall("POST", "/login/finish", { text: '[{"id":"AAAA"}]', headers: unknownCeremony }),
  },
  {
    name: "public-key/login/finish with bad JSON",
    code: 40002,
    send: passkeyCall("POST", "/login/finish", { text: '{"id":', headers: unknownCeremony }),
  },
  {
    name: "HTTP-2: public-key/login/finish with a text/plain body",
    code: 40002,
    send: passkeyCall("POST", "/login/finish", { text: "{}", contentType: "text/plain", headers: unknownCeremony }),
  },
  {
    name: "HTTP-1: public-key/login/finish with a body over 1 MiB",
    code: 40002,
    send: passkeyCall("POST", "/login/finish", { text: JSON.stringify({ id: overFinishLimit }), headers: unknownCeremony }),
  },
  {
    name: "HTTP-1: public-key/login/finish with a chunked body over 1 MiB, refused before it ends",
    code: 40002,
    send: (server, context) =>
      chunkedPost(server, `${publicKey}/login/finish`, Buffer.from(JSON.stringify({ id: overFinishLimit })), {
        headers: unknownCeremony,
        endBody: context.bodyParsedEarlier,
      }),
  },
  {
    name: "HTTP-1: public-key/login/finish with a Content-Length over 1 MiB and a small body",
    code: 40002,
    send: (server) => postWithContentLength(server, `${publicKey}/login/finish`, Buffer.from("{}"), 2_000_000),
    whenParsedEarlier: { notApplicable: "body-parser waits for the declared bytes before it passes its 413 on" },
  },
  {
    name: "HTTP-1: public-key/login/finish reads a body over 64 KiB (the ceremony refuses it)",
    code: 40100,
    send: passkeyCall("POST", "/login/finish", { text: JSON.stringify({ id: between }), headers: unknownCeremony }),
  },
  {
    name: "HTTP-1: public-key/login/begin with the same body over 64 KiB",
    code: 40002,
    send: passkeyCall("POST", "/login/begin", { text: JSON.stringify({ id: between }) }),
  },
  {
    name: "PW-5: public-key/login/begin with username as a number",
    code: 40002,
    send: passkeyCall("POST", "/login/begin", { text: '{"username":42}' }),
  },
  {
    name: "PW-5: public-key/login/begin with username as an object",
    code: 40002,
    send: passkeyCall("POST", "/login/begin", { text: '{"username":{"$ne":""}}' }),
  },
  {
    name: "PW-5: public-key/login/begin with a __proto__ key",
    code: 40002,
    send: passkeyCall("POST", "/login/begin", { text: '{"__proto__":{"admin":true}}' }),
  },
  { name: "GET on public-key/login/begin", code: 40400, send: passkeyCall("GET", "/login/begin") },
  { name: "POST on public-key/config", code: 40400, send: passkeyCall("POST", "/config", { text: "{}" }) },
  {
    name: "public-key/register/begin without a token",
    code: 40101,
    send: passkeyCall("POST", "/register/begin", { text: '{"label":"Laptop"}' }),
  },
  {
    name: "public-key/register/begin with a token and no label",
    code: 40001,
    send: passkeyCall("POST", "/register/begin", { text: "{}", withToken: true }),
  },
  {
    name: "public-key/register/begin with a token and label as a number",
    code: 40002,
    send: passkeyCall("POST", "/register/begin", { text: '{"label":42}', withToken: true }),
  },
  {
    name: "public-key/register/begin with a token and a label over 64 characters",
    code: 42200,
    send: passkeyCall("POST", "/register/begin", { text: JSON.stringify({ label: "x".repeat(65) }), withToken: true }),
  },
  {
    name: "public-key/register/finish without a token",
    code: 40101,
    send: passkeyCall("POST", "/register/finish", { text: "{}", headers: unknownCeremony }),
  },
  {
    name: "public-key/register/finish with a token, without the ceremony header",
    code: 40002,
    send: passkeyCall("POST", "/register/finish", { text: "{}", withToken: true }),
  },
  {
    name: "public-key/register/finish with a token and an unknown ceremony",
    code: 40100,
    send: passkeyCall("POST", "/register/finish", { text: "{}", headers: unknownCeremony, withToken: true }),
  },
  {
    name: "HTTP-1: public-key/register/finish with a token and a body over 1 MiB",
    code: 40002,
    send: passkeyCall("POST", "/register/finish", {
      text: JSON.stringify({ id: overFinishLimit }),
      headers: unknownCeremony,
      withToken: true,
    }),
  },
  { name: "GET public-key/credentials without a token", code: 40101, send: passkeyCall("GET", "/credentials") },
  {
    name: "AT-1: GET public-key/credentials with an alg none token",
    code: 40101,
    send: (server, context) =>
      passkeyCall("GET", "/credentials", { headers: { authorization: `Bearer ${algNoneToken(context.userId)}` } })(
        server,
        context,
      ),
  },
  {
    name: "PUT public-key/credentials/:id without a token",
    code: 40101,
    send: passkeyCall("PUT", `/credentials/${unknownCredential}`, { text: '{"label":"Laptop"}' }),
  },
  {
    name: "PUT public-key/credentials/:id of an unknown passkey",
    code: 40400,
    send: passkeyCall("PUT", `/credentials/${unknownCredential}`, { text: '{"label":"Laptop"}', withToken: true }),
  },
  {
    name: "PUT public-key/credentials/:id with a label of spaces",
    code: 42200,
    send: passkeyCall("PUT", `/credentials/${unknownCredential}`, { text: '{"label":"   "}', withToken: true }),
  },
  {
    name: "PUT public-key/credentials/:id with label as a number",
    code: 40002,
    send: passkeyCall("PUT", `/credentials/${unknownCredential}`, { text: '{"label":7}', withToken: true }),
  },
  {
    name: "PUT public-key/credentials/:id with a JSON array body",
    code: 40002,
    send: passkeyCall("PUT", `/credentials/${unknownCredential}`, { text: '[{"label":"Laptop"}]', withToken: true }),
  },
  {
    name: "HTTP-2: PUT public-key/credentials/:id with a text/plain body",
    code: 40002,
    send: passkeyCall("PUT", `/credentials/${unknownCredential}`, {
      text: '{"label":"Laptop"}',
      contentType: "text/plain",
      withToken: true,
    }),
  },
  {
    name: "DELETE public-key/credentials/:id without a token",
    code: 40101,
    send: passkeyCall("DELETE", `/credentials/${unknownCredential}`),
  },
  {
    name: "DELETE public-key/credentials/:id of an unknown passkey",
    code: 40400,
    send: passkeyCall("DELETE", `/credentials/${unknownCredential}`, { withToken: true }),
  },
  {
    name: "DELETE public-key/credentials/:id with an id that is not base64url",
    code: 40400,
    send: passkeyCall("DELETE", "/credentials/not.a.credential", { withToken: true }),
  },
  {
    name: "DELETE public-key/credentials without an id",
    code: 40400,
    send: passkeyCall("DELETE", "/credentials", { withToken: true }),
  },
  {
    name: "PATCH public-key/credentials/:id",
    code: 40400,
    send: passkeyCall("PATCH", `/credentials/${unknownCredential}`, { text: '{"label":"Laptop"}', withToken: true }),
  },
];
