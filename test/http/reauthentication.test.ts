import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestAuth, base32Decode, createTestUser, makeTestAuth, testPassword, totpCodeAt } from "../fixtures/auth.js";
import { post } from "./client.js";
import { expectEnvelope } from "./contract-suite.js";
import { type RunningServer, adapters } from "./servers.js";

const base = "/api/v1/auth";
const minutes = (count: number) => count * 60_000;

describe.each(adapters)("TOTP-5 over HTTP on %s: enrolling TOTP needs re-authentication", (_name, start) => {
  let testAuth: TestAuth;
  let server: RunningServer;

  beforeAll(async () => {
    testAuth = makeTestAuth();
    server = await start(testAuth.auth);
  });
  afterAll(async () => {
    await server.close();
  });

  async function signIn(username: string): Promise<string> {
    await createTestUser(testAuth.auth, username);
    const result = await post(server, `${base}/login`, { username, password: testPassword });
    expectEnvelope(result, 0);
    return result.body.data.accessToken as string;
  }

  it("TOTP-5: with only a stolen access token of an older sign-in, 2fa/setup is 40001 and nothing is enrolled", async () => {
    const token = await signIn("stolen");
    testAuth.clock.advance(minutes(6));
    const setup = await post(server, `${base}/2fa/setup`, {}, { token });
    expectEnvelope(setup, 40001);
    expect(setup.body.message).toMatch(/password/);
    expectEnvelope(await post(server, `${base}/2fa/setup`, { password: "a wrong password" }, { token }), 40100);
    expectEnvelope(await post(server, `${base}/2fa/enable`, { code: "123456" }, { token }), 40001);
    const me = await post(server, `${base}/2fa/recovery-codes`, { code: "123456" }, { token });
    expectEnvelope(me, 40900);
  });

  it("TOTP-5: with the current password, an older session enrols; right after signing in, the session is enough", async () => {
    const older = await signIn("with-password");
    testAuth.clock.advance(minutes(6));
    const setup = await post(server, `${base}/2fa/setup`, { password: testPassword }, { token: older });
    expectEnvelope(setup, 0);
    const code = await totpCodeAt(testAuth.auth, base32Decode(setup.body.data.secret));
    expectEnvelope(await post(server, `${base}/2fa/enable`, { code }, { token: older }), 40001);
    const enabled = await post(server, `${base}/2fa/enable`, { code, password: testPassword }, { token: older });
    expectEnvelope(enabled, 0);
    expect(enabled.body.data.recoveryCodes).toHaveLength(10);

    const fresh = await signIn("fresh");
    const freshSetup = await post(server, `${base}/2fa/setup`, {}, { token: fresh });
    expectEnvelope(freshSetup, 0);
    const freshCode = await totpCodeAt(testAuth.auth, base32Decode(freshSetup.body.data.secret));
    expectEnvelope(await post(server, `${base}/2fa/enable`, { code: freshCode }, { token: fresh }), 0);
  });
});
