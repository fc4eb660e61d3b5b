// Runs docs/examples/l2-profile.ts over HTTP and checks each ASVS 5.0 Level 2 requirement its
// settings claim (docs/l2-profile.md), with a frozen clock.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Auth, createUser, memoryStorage } from "@portcullis/core";
import { totpCode } from "@portcullis/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createL2App, createL2Auth } from "./l2-profile.js";

const minute = 60_000;
const password = "a long and unlisted passphrase";
const breached = "a passphrase every breach holds";
const clock = { now: Date.parse("2030-01-01T00:00:15Z") };
let auth: Auth;
let server: Server;
let base: string;

interface Answer {
  status: number;
  code: number;
  // biome-ignore lint/suspicious/noExplicitAny: the tests read whatever data a route returns
  data: any;
}

async function call(method: string, path: string, body?: unknown, token?: string): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const envelope = (await response.json()) as { code?: number; data?: unknown };
  return { status: response.status, code: envelope.code ?? 0, data: envelope.data ?? envelope };
}

/** Makes a user and takes them through the enrolment a 40105 asks for; answers the TOTP secret and the first tokens. */
async function enrolledUser(username: string) {
  await createUser(auth, { username, password });
  const first = await call("POST", "/api/v1/auth/login", { username, password });
  expect(first.code).toBe(40105);
  const { tempToken } = first.data;
  const setup = await call("POST", "/api/v1/auth/2fa/enrolment/setup", { tempToken });
  expect(setup.code).toBe(0);
  const secret = setup.data.secret as string;
  const enabled = await call("POST", "/api/v1/auth/2fa/enrolment/enable", {
    tempToken,
    code: totpCode({ secret, at: clock.now }),
  });
  expect(enabled.code).toBe(0);
  return { secret, tokens: enabled.data, recoveryCodes: enabled.data.recoveryCodes as string[] };
}

/** Signs an enrolled user in with the password and the code of the step after the clock's (moving the clock there). */
async function signIn(username: string, secret: string) {
  clock.now += 30_000;
  const first = await call("POST", "/api/v1/auth/login", { username, password });
  expect(first.code).toBe(40102);
  const second = await call("POST", "/api/v1/auth/2fa/verify", {
    tempToken: first.data.tempToken,
    code: totpCode({ secret, at: clock.now }),
  });
  expect(second.code).toBe(0);
  return second.data as { accessToken: string; refreshToken: string };
}

beforeAll(async () => {
  auth = createL2Auth({
    storage: memoryStorage(),
    issuer: "https://api.example.com",
    audience: "example-api",
    secrets: { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("base64url") },
    now: () => clock.now,
    isBreached: (candidate) => candidate === breached,
    ownWords: ["examplecorp"],
  });
  server = createL2App(auth).listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("the ASVS Level 2 profile of docs/l2-profile.md", () => {
  it("ASVS 6.3.3, 6.5.2: a password alone opens no session; the account enrols TOTP first, then gets tokens and ten codes of 120 bits", async () => {
    const { tokens, recoveryCodes } = await enrolledUser("ada");
    expect((await call("GET", "/api/v1/profile", undefined, tokens.accessToken)).status).toBe(200);
    expect(recoveryCodes).toHaveLength(10);
    for (const code of recoveryCodes) expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){5}$/);
  });

  it("ASVS 6.5.5: a TOTP code works during its own 30-second step only", async () => {
    const { secret } = await enrolledUser("bob");
    clock.now += 16 * minute; // past the account throttle's 15-minute window of the enrolment
    const stepStart = Math.floor(clock.now / 30_000) * 30_000;
    clock.now = stepStart + 29_000;
    const { tempToken } = (await call("POST", "/api/v1/auth/login", { username: "bob", password })).data;
    const verify = async (code: string) => (await call("POST", "/api/v1/auth/2fa/verify", { tempToken, code })).code;
    expect(await verify(totpCode({ secret, at: stepStart - 1000 }))).toBe(40103);
    const current = totpCode({ secret, at: clock.now });
    clock.now = stepStart + 31_000;
    expect(await verify(current)).toBe(40103);
    expect(await verify(totpCode({ secret, at: clock.now }))).toBe(0);
  });

  it("ASVS 7.3.1, 7.1.1: a session unused for an hour is over; one refreshed within the hour goes on", async () => {
    const { secret } = await enrolledUser("cleo");
    const idle = await signIn("cleo", secret);
    const busy = await signIn("cleo", secret);
    clock.now += 59 * minute;
    const renewed = await call("POST", "/api/v1/auth/refresh", { refreshToken: busy.refreshToken });
    expect(renewed.code).toBe(0);
    clock.now += 2 * minute;
    expect((await call("POST", "/api/v1/auth/refresh", { refreshToken: idle.refreshToken })).code).toBe(40101);
    expect((await call("POST", "/api/v1/auth/refresh", { refreshToken: renewed.data.refreshToken })).code).toBe(0);
  });

  it("ASVS 7.3.2, 7.1.1: a session ends 24 hours after its sign-in, however often it was refreshed", async () => {
    const { secret } = await enrolledUser("dan");
    let { refreshToken, accessToken } = await signIn("dan", secret);
    const end = clock.now + 24 * 60 * minute;
    const refreshAt = async (at: number) => {
      clock.now = at;
      const renewed = await call("POST", "/api/v1/auth/refresh", { refreshToken });
      expect(renewed.code).toBe(0);
      ({ refreshToken, accessToken } = renewed.data);
    };
    while (clock.now + 50 * minute < end - 10 * minute) await refreshAt(clock.now + 50 * minute);
    await refreshAt(end - 5 * minute);
    clock.now = end - 1000;
    expect((await call("GET", "/api/v1/profile", undefined, accessToken)).status).toBe(200);
    clock.now = end;
    expect((await call("GET", "/api/v1/profile", undefined, accessToken)).code).toBe(40101);
    expect((await call("POST", "/api/v1/auth/refresh", { refreshToken })).code).toBe(40101);
  });

  it("ASVS 7.1.2: a sixth sign-in of one account ends its oldest session", async () => {
    const { secret, tokens } = await enrolledUser("eve");
    const sessions = [tokens];
    for (let index = 0; index < 5; index += 1) sessions.push(await signIn("eve", secret));
    expect((await call("GET", "/api/v1/profile", undefined, sessions[0]?.accessToken)).code).toBe(40101);
    for (const kept of sessions.slice(1))
      expect((await call("GET", "/api/v1/profile", undefined, kept.accessToken)).status).toBe(200);
  });

  it("ASVS 6.2.12, 6.2.11: a breached password and one of the organisation's own words are refused when set", async () => {
    for (const refused of [breached, "Examplecorp2030!"]) {
      const error = await createUser(auth, { username: `new-${refused.length}`, password: refused }).catch((caught) => caught);
      expect(error.code).toBe(42200);
    }
  });

  it("ASVS 7.5.3: the payout route takes a two-factor sign-in of the last 15 minutes; a refresh does not make it younger, a re-authentication does", async () => {
    const { secret } = await enrolledUser("fay");
    const { accessToken, refreshToken } = await signIn("fay", secret);
    expect((await call("POST", "/api/v1/payouts", {}, accessToken)).status).toBe(202);
    clock.now += 14 * minute;
    const renewed = await call("POST", "/api/v1/auth/refresh", { refreshToken });
    expect((await call("POST", "/api/v1/payouts", {}, renewed.data.accessToken)).status).toBe(202);
    clock.now += 2 * minute;
    const stale = await call("POST", "/api/v1/payouts", {}, renewed.data.accessToken);
    expect(stale).toMatchObject({ status: 401, code: 40104 });
    expect(stale.data.required.maxAge).toBe(15 * 60);
    expect((await call("GET", "/api/v1/profile", undefined, renewed.data.accessToken)).status).toBe(200);
    clock.now = Math.ceil(clock.now / 30_000) * 30_000; // the next step: a code is accepted once
    const proof = { password, totpCode: totpCode({ secret, at: clock.now }) };
    const raised = await call("POST", "/api/v1/auth/reauthenticate", proof, renewed.data.accessToken);
    expect(raised.code).toBe(0);
    expect((await call("POST", "/api/v1/payouts", {}, raised.data.accessToken)).status).toBe(202);
  });

  it("docs/l2-profile.md shows the example exactly as it is", () => {
    const read = (path: string) => readFileSync(new URL(path, import.meta.url), "utf8");
    expect(read("../l2-profile.md")).toContain(`\`\`\`ts\n${read("./l2-profile.ts")}\`\`\``);
  });
});
