// Issue 37 item 6 over HTTP on every store: an administrator ends every session of every user
// (DELETE /auth/admin/sessions, STUP-6, ASVS 7.4.5) on memory storage, PGlite, PostgreSQL and
// MariaDB. Each store's sessions.revokeAll answers the count, every refresh token is refused at
// once, and every access token at its next request, though the instance caches token state.
import { type Auth, type AuthEvent, type TokenSet, createAuth } from "@portcullis/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestUser, testAudience, testIssuer, testPassword } from "../fixtures/auth.js";
import { describeNeedingService } from "../fixtures/required-service.js";
import { call, post } from "../http/client.js";
import { expectEnvelope } from "../http/contract-suite.js";
import { type RunningServer, startExpress5 } from "../http/servers.js";
import { type Store, stores } from "./stores.js";

const base = "/api/v1/auth";

for (const store of stores) {
  const describeStore = describeNeedingService("test/storage/incident.test.ts", await store.missing());

  describeStore(`ending every session of every user over HTTP on ${store.name} (STUP-6)`, () => {
    let opened: Awaited<ReturnType<Store["open"]>> | undefined;
    let auth: Auth;
    let server: RunningServer;
    const events: AuthEvent[] = [];
    const clock = { now: Date.parse("2030-01-01T00:00:00Z") };

    beforeAll(async () => {
      opened = await store.open();
      auth = createAuth({
        storage: opened.storage,
        issuer: testIssuer,
        audience: testAudience,
        secrets: {
          signing: "incident-storage-signing-secret-0123456789abcdef",
          encryption: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        },
        now: () => clock.now,
        tokenStateCacheSeconds: 60,
      });
      auth.events.on("sessions.all_revoked", (event) => {
        events.push(event);
      });
      server = await startExpress5(auth);
      for (const [username, roles] of [
        ["root", ["admin"]],
        ["alice", ["user"]],
        ["bob", ["user"]],
      ] as const) {
        await createTestUser(auth, username, [...roles]);
      }
    });

    afterAll(async () => {
      await server?.close();
      await opened?.close();
    });

    const signIn = async (username: string) => {
      const result = await post(server, `${base}/login`, { username, password: testPassword });
      expectEnvelope(result, 0);
      return result.body.data as TokenSet;
    };

    it("STUP-6, ASVS 7.4.5: every session of every user ends, the administrator's too; refresh tokens refused at once, cached access tokens at their next request; a new sign-in works", async () => {
      const users = [await signIn("alice"), await signIn("alice"), await signIn("bob"), await signIn("bob")];
      const bobAgain = await signIn("bob");
      const root = await signIn("root");
      expectEnvelope(await post(server, `${base}/logout`, { refreshToken: users[3]?.refreshToken }), 0);
      for (const tokens of [...users.slice(0, 3), root])
        expectEnvelope(await call(server, "GET", `${base}/me`, { token: tokens.accessToken }), 0);

      const answer = await call(server, "DELETE", `${base}/admin/sessions`, {
        token: root.accessToken,
        json: { password: testPassword },
      });
      expectEnvelope(answer, 0);
      // alice twice, bob twice (a third logged out) and root: five live sessions.
      expect(answer.body.data).toEqual({ ended: 5 });
      for (const tokens of [...users, bobAgain, root]) {
        expectEnvelope(await call(server, "GET", `${base}/me`, { token: tokens.accessToken }), 40101);
        expectEnvelope(await post(server, `${base}/refresh`, { refreshToken: tokens.refreshToken }), 40101);
      }
      expect(events).toEqual([{ type: "sessions.all_revoked", count: 5, by: expect.any(String), at: clock.now }]);

      const after = await signIn("alice");
      expectEnvelope(await call(server, "GET", `${base}/me`, { token: after.accessToken }), 0);
      const refreshed = await post(server, `${base}/refresh`, { refreshToken: after.refreshToken });
      expectEnvelope(refreshed, 0);
      expect(await opened?.storage.sessions.revokeAll(clock.now)).toBe(1);
    });
  });
}
