// Issue 21 items 1 to 3 over HTTP on every store: what a session records and the list reads back
// (SE-1), the other sessions a user's own change ends and the one it keeps (SE-2), ended sessions
// refused (SE-3), and a password change voiding pending second-factor sign-ins through the stamp
// stored with them (TMP-4), on memory storage, PGlite, PostgreSQL and MariaDB.
import { type Auth, type SessionRecord, type TokenSet, createAuth, login, sessionListLimit } from "@portcullis/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestUser, createTotpUser, nextTotpCode, testAudience, testIssuer, testPassword } from "../fixtures/auth.js";
import { describeNeedingService } from "../fixtures/required-service.js";
import { type CallOptions, call, post } from "../http/client.js";
import { expectEnvelope } from "../http/contract-suite.js";
import { type RunningServer, startExpress5 } from "../http/servers.js";
import { type Store, stores } from "./stores.js";

const base = "/api/v1/auth";
const minute = 60_000;

/** Headers of a request forwarded by the trusted proxy on loopback for `client`, over TLS. */
const from = (client: string, userAgent: string): CallOptions["headers"] => ({
  "x-forwarded-for": client,
  "x-forwarded-proto": "https",
  "user-agent": userAgent,
});

for (const store of stores) {
  const describeStore = describeNeedingService("test/storage/sessions.test.ts", await store.missing());

  describeStore(`sessions over HTTP on ${store.name}`, () => {
    let opened: Awaited<ReturnType<Store["open"]>> | undefined;
    let auth: Auth;
    let server: RunningServer;
    const clock = { now: Date.parse("2030-01-01T00:00:00Z") };
    const testAuth = {
      get auth() {
        return auth;
      },
      clock: {
        get now() {
          return clock.now;
        },
        advance: (ms: number) => {
          clock.now += ms;
        },
      },
    };

    beforeAll(async () => {
      opened = await store.open();
      auth = createAuth({
        storage: opened.storage,
        issuer: testIssuer,
        audience: testAudience,
        secrets: {
          signing: "sessions-storage-signing-secret-0123456789abcdef",
          encryption: "89abcdef0123456789abcdef0123456789abcdef0123456789abcdef01234567",
        },
        now: () => clock.now,
        http: { trustedProxies: ["127.0.0.1", "::1"] },
      });
      server = await startExpress5(auth);
    });

    afterAll(async () => {
      await server?.close();
      await opened?.close();
    });

    const signIn = async (username: string, client: string, userAgent: string) => {
      const result = await post(
        server,
        `${base}/login`,
        { username, password: testPassword },
        { headers: from(client, userAgent) },
      );
      expectEnvelope(result, 0);
      return result.body.data as TokenSet;
    };
    const list = async (token: string) => {
      const result = await call(server, "GET", `${base}/sessions`, { token });
      expectEnvelope(result, 0);
      return result.body.data as Array<Record<string, unknown>>;
    };

    it("SE-1: the list reads back what each session recorded, newest first; a refresh moves lastUsedAt and where, a request does not", async () => {
      await createTestUser(auth, "wren");
      const laptop = await signIn("wren", "203.0.113.77", "Laptop/1.0");
      clock.now += minute;
      const phone = await signIn("wren", "2001:db8:1:2::9", "Phone/2.0");
      const [first, second] = await list(phone.accessToken);
      expect(first).toMatchObject({ current: true, createdAt: clock.now, lastUsedAt: clock.now, userAgent: "Phone/2.0" });
      expect(first?.address).toBe("2001:db8:1::/48");
      expect(second).toMatchObject({ current: false, createdAt: clock.now - minute, userAgent: "Laptop/1.0" });
      expect(second?.address).toBe("203.0.113.0/24");
      expect(second?.amr).toEqual(["pwd"]);

      clock.now += 10 * minute;
      expectEnvelope(await call(server, "GET", `${base}/me`, { token: laptop.accessToken }), 0);
      expect((await list(phone.accessToken))[1]?.lastUsedAt).toBe(clock.now - 11 * minute);
      const renewed = await post(
        server,
        `${base}/refresh`,
        { refreshToken: laptop.refreshToken },
        {
          headers: from("198.51.100.20", "Laptop/1.1"),
        },
      );
      expectEnvelope(renewed, 0);
      expect((await list(phone.accessToken))[1]).toMatchObject({
        createdAt: clock.now - 11 * minute,
        lastUsedAt: clock.now,
        userAgent: "Laptop/1.1",
        address: "198.51.100.0/24",
      });
      const agent = "😀é".repeat(200);
      const direct = await login(auth, { username: "wren", password: testPassword, userAgent: agent, ip: "192.0.2.1" });
      expect(direct.status).toBe("authenticated");
      expect((await list(phone.accessToken))[0]?.userAgent).toBe("😀é".repeat(128));
    });

    it(`SE-1: at most ${sessionListLimit} sessions are listed, the newest, and only the user's own`, async () => {
      const user = await createTestUser(auth, "yara");
      const other = await createTestUser(auth, "zeke");
      const tokens = await signIn("yara", "192.0.2.7", "Now/1");
      const now = clock.now;
      for (let index = 1; index <= sessionListLimit + 15; index += 1) {
        const session: SessionRecord = {
          id: `yara-old-${String(index).padStart(3, "0")}`,
          userId: index % 10 === 0 ? other.id : user.id,
          tokenVersion: 0,
          amr: ["pwd"],
          authTime: now - index * minute,
          createdAt: now - index * minute,
          expiresAt: now + 60 * minute,
          revokedAt: null,
          lastUsedAt: now - index * minute,
          userAgent: null,
          address: null,
          refreshHash: null,
          refreshGeneration: 0,
          refreshExpiresAt: now + 60 * minute,
        };
        await auth.storage.sessions.createSession(session);
      }
      const listed = await list(tokens.accessToken);
      expect(listed).toHaveLength(sessionListLimit);
      expect(listed[0]?.current).toBe(true);
      expect(listed.slice(1).map((session) => session.id)).toEqual(
        Array.from({ length: sessionListLimit + 15 }, (_, i) => i + 1)
          .filter((index) => index % 10 !== 0)
          .slice(0, sessionListLimit - 1)
          .map((index) => `yara-old-${String(index).padStart(3, "0")}`),
      );
    });

    it("SE-1, SE-2, SE-3: one session ended by id, then the others; this one goes on, the ended ones are refused at once", async () => {
      await Promise.all([createTestUser(auth, "abel"), createTestUser(auth, "bea")]);
      const here = await signIn("abel", "192.0.2.1", "Here/1");
      const [there, third] = [await signIn("abel", "192.0.2.2", "There/1"), await signIn("abel", "192.0.2.3", "Third/1")];
      const stranger = await signIn("bea", "192.0.2.4", "Stranger/1");
      const strangerId = (await list(stranger.accessToken))[0]?.id as string;
      const thereId = (await list(there.accessToken)).find((session) => session.current)?.id as string;
      expectEnvelope(await call(server, "DELETE", `${base}/sessions/${strangerId}`, { token: here.accessToken }), 40400);
      expectEnvelope(await call(server, "GET", `${base}/me`, { token: stranger.accessToken }), 0);
      expectEnvelope(await call(server, "DELETE", `${base}/sessions/${thereId}`, { token: here.accessToken }), 0);
      expectEnvelope(await post(server, `${base}/refresh`, { refreshToken: there.refreshToken }), 40101);
      expectEnvelope(await call(server, "GET", `${base}/me`, { token: there.accessToken }), 40101);
      const others = await post(server, `${base}/sessions/end-others`, {}, { token: here.accessToken });
      expectEnvelope(others, 0);
      expect(others.body.data).toEqual({ ended: 1 });
      expectEnvelope(await post(server, `${base}/refresh`, { refreshToken: third.refreshToken }), 40101);
      expectEnvelope(await call(server, "GET", `${base}/me`, { token: third.accessToken }), 40101);
      expect((await list(here.accessToken)).map((session) => session.userAgent)).toEqual(["Here/1"]);
      expectEnvelope(await post(server, `${base}/refresh`, { refreshToken: here.refreshToken }), 0);
    });

    it("SE-2, SE-4, TMP-4: a password change keeps this session, ends the others and voids a pending second-factor sign-in", async () => {
      const user = await createTotpUser(auth, "cleo");
      const secondFactor = async () => {
        const started = await post(server, `${base}/login`, { username: "cleo", password: user.password });
        expectEnvelope(started, 40102);
        return started.body.data.tempToken as string;
      };
      const complete = async (tempToken: string) =>
        post(server, `${base}/2fa/verify`, { tempToken, code: await nextTotpCode(testAuth, user.secret) });
      const here = (await complete(await secondFactor())).body.data as TokenSet;
      const there = (await complete(await secondFactor())).body.data as TokenSet;
      const pending = await secondFactor();
      const changed = await post(
        server,
        `${base}/password`,
        { currentPassword: testPassword, newPassword: "a brand new passphrase" },
        {
          token: here.accessToken,
        },
      );
      expectEnvelope(changed, 0);
      expect(changed.body.data).toEqual({ changed: true, sessionsEnded: 1 });
      expectEnvelope(await complete(pending), 40100);
      expectEnvelope(await call(server, "GET", `${base}/me`, { token: there.accessToken }), 40101);
      expectEnvelope(await call(server, "GET", `${base}/me`, { token: here.accessToken }), 0);
      expectEnvelope(await post(server, `${base}/refresh`, { refreshToken: here.refreshToken }), 0);
    });
  });
}
