// Issue 42 item 3 over HTTP on every adapter: a password sign-in's answer says whether to offer a
// passkey (PL-13), the decline route keeps it away from the account (PL-14), and a registration
// right after the sign-in needs no password again. Without passkeys the field is absent and the
// route answers 40400.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type TestAuth,
  createTestUser,
  createTotpUser,
  makeTestAuth,
  makeTestAuthenticator,
  nextTotpCode,
  testPassword,
} from "../fixtures/auth.js";
import { post } from "./client.js";
import { expectEnvelope } from "./contract-suite.js";
import { describeOpenApiDrift } from "./openapi-drift.js";
import { type RunningServer, adapters } from "./servers.js";

const base = "/api/v1/auth";

/** Signs `username` in with the password over HTTP and answers the completed sign-in's data. */
async function signIn(server: RunningServer, username: string) {
  const answer = await post(server, `${base}/login`, { username, password: testPassword });
  expectEnvelope(answer, 0);
  return answer.body.data;
}

describe.each(adapters)("the passkey offer over HTTP on %s", (_name, start) => {
  describe("without passkeys", () => {
    let server: RunningServer;
    let testAuth: TestAuth;
    beforeAll(async () => {
      testAuth = makeTestAuth({ passkeys: undefined });
      server = await start(testAuth.auth);
    });
    afterAll(async () => {
      await server.close();
    });

    it("PL-13: a sign-in's answer has no offerPasskey, and the decline route answers 40400", async () => {
      await createTestUser(testAuth.auth, "plain");
      const data = await signIn(server, "plain");
      expect(Object.keys(data)).not.toContain("offerPasskey");
      expectEnvelope(await post(server, `${base}/public-key/offer/decline`, {}, { token: data.accessToken }), 40400);
    });
  });

  describe("with passkeys", () => {
    let server: RunningServer;
    let testAuth: TestAuth;
    beforeAll(async () => {
      testAuth = makeTestAuth();
      server = await start(testAuth.auth);
    });
    afterAll(async () => {
      await server.close();
    });

    it("PL-13: offered after a password sign-in; a registration right after needs no password; then no longer offered", async () => {
      await createTestUser(testAuth.auth, "alice");
      const data = await signIn(server, "alice");
      expect(data.offerPasskey).toBe(true);
      const begun = await post(server, `${base}/public-key/register/begin`, { label: "Laptop" }, { token: data.accessToken });
      expectEnvelope(begun, 0);
      const response = makeTestAuthenticator().register(begun.body.data.options);
      const finished = await post(server, `${base}/public-key/register/finish`, response, {
        token: data.accessToken,
        headers: { "x-webauthn-ceremony": begun.body.data.ceremonyId },
      });
      expectEnvelope(finished, 0);
      expect((await signIn(server, "alice")).offerPasskey).toBe(false);
    });

    it("PL-13: after the TOTP step too", async () => {
      const user = await createTotpUser(testAuth.auth, "carol");
      const first = await post(server, `${base}/login`, { username: "carol", password: testPassword });
      expectEnvelope(first, 40102);
      const code = await nextTotpCode(testAuth, user.secret);
      const second = await post(server, `${base}/2fa/verify`, { tempToken: first.body.data.tempToken, code });
      expectEnvelope(second, 0);
      expect(second.body.data.offerPasskey).toBe(true);
    });

    it("PL-14: a decline keeps the offer away from that account only; it needs a signed-in user", async () => {
      await createTestUser(testAuth.auth, "bob");
      await createTestUser(testAuth.auth, "dave");
      expectEnvelope(await post(server, `${base}/public-key/offer/decline`, {}), 40101);
      const data = await signIn(server, "bob");
      const declined = await post(server, `${base}/public-key/offer/decline`, {}, { token: data.accessToken });
      expectEnvelope(declined, 0);
      expect(declined.body.data).toEqual({ declined: true });
      expect((await signIn(server, "bob")).offerPasskey).toBe(false);
      expect((await signIn(server, "dave")).offerPasskey).toBe(true);
    });
  });
});

describeOpenApiDrift({
  exercises: ["login", "verifyTotp", "webauthnRegisterBegin", "webauthnRegisterFinish", "declinePasskeyOffer"],
});
