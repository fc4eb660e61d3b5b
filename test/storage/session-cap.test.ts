// STUP-8 (ASVS 7.1.2) over HTTP on every store: with sessions.maxPerUser, a sign-in past the cap
// ends the account's oldest sessions (refused at once, reported as session.revoked with reason
// session_limit), and concurrent sign-ins leave exactly the cap, each ended session reported
// once; on memory storage, PGlite, PostgreSQL and MariaDB, through Express 5.
import type { Auth, AuthEvent, TokenSet } from "@portcullis/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type TestClock, createTestUser, generousThrottle, makeTestAuth, testPassword } from "../fixtures/auth.js";
import { describeNeedingService } from "../fixtures/required-service.js";
import { call, post } from "../http/client.js";
import { expectEnvelope } from "../http/contract-suite.js";
import { type RunningServer, startExpress5 } from "../http/servers.js";
import { type Store, stores } from "./stores.js";

const base = "/api/v1/auth";
const minute = 60_000;
const cap = 3;

for (const store of stores) {
  const describeStore = describeNeedingService("test/storage/session-cap.test.ts", await store.missing());

  describeStore(`the session cap over HTTP on ${store.name}`, () => {
    let opened: Awaited<ReturnType<Store["open"]>> | undefined;
    let auth: Auth;
    let clock: TestClock;
    let server: RunningServer;
    const events: AuthEvent[] = [];

    beforeAll(async () => {
      opened = await store.open();
      ({ auth, clock } = makeTestAuth({ storage: opened.storage, throttle: generousThrottle, sessions: { maxPerUser: cap } }));
      auth.events.on("session.revoked", (event) => {
        events.push(event);
      });
      server = await startExpress5(auth);
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
    /** The session id (`sid`) an access token names, read without checking it: the token may be one the cap ended. */
    const sessionIdOf = (tokens: TokenSet) =>
      (JSON.parse(Buffer.from(tokens.accessToken.split(".")[1] as string, "base64url").toString()) as { sid: string }).sid;
    const endedByCap = (userId: string) =>
      events.filter((event) => event.type === "session.revoked" && event.userId === userId && event.reason === "session_limit");

    it("STUP-8, ASVS 7.1.2: the sign-in past the cap ends the oldest session: its tokens are refused, the newer ones go on, and the list shows the cap", async () => {
      const user = await createTestUser(auth, "ines");
      const sessions: TokenSet[] = [];
      for (let index = 0; index <= cap; index += 1) {
        sessions.push(await signIn("ines"));
        clock.advance(minute);
      }
      const [oldest, ...kept] = sessions as [TokenSet, ...TokenSet[]];
      expectEnvelope(await call(server, "GET", `${base}/me`, { token: oldest.accessToken }), 40101);
      expectEnvelope(await post(server, `${base}/refresh`, { refreshToken: oldest.refreshToken }), 40101);
      for (const tokens of kept) expectEnvelope(await call(server, "GET", `${base}/me`, { token: tokens.accessToken }), 0);
      const listed = await call(server, "GET", `${base}/sessions`, { token: (kept.at(-1) as TokenSet).accessToken });
      expectEnvelope(listed, 0);
      expect((listed.body.data as unknown[]).length).toBe(cap);
      expect(endedByCap(user.id).map((event) => event.type === "session.revoked" && event.sessionId)).toEqual([
        sessionIdOf(oldest),
      ]);
    });

    it("STUP-8, ASVS 7.1.2: 10 concurrent sign-ins of one account leave exactly the cap live, and each ended session is reported once", async () => {
      const user = await createTestUser(auth, "jude");
      await signIn("jude");
      clock.advance(minute);
      const results = await Promise.all(
        Array.from({ length: 10 }, () => post(server, `${base}/login`, { username: "jude", password: testPassword })),
      );
      for (const result of results) expectEnvelope(result, 0);
      const live = await auth.storage.sessions.listByUser(user.id, clock.now, 100);
      expect(live).toHaveLength(cap);
      const ended = endedByCap(user.id).map((event) => event.type === "session.revoked" && event.sessionId);
      expect(ended).toHaveLength(11 - cap);
      expect(new Set(ended).size).toBe(ended.length);
      for (const session of live) expect(ended).not.toContain(session.id);
      const working = await Promise.all(
        results.map(async (result) => {
          const answer = await call(server, "GET", `${base}/me`, { token: (result.body.data as TokenSet).accessToken });
          return answer.body.code;
        }),
      );
      expect(working.filter((code) => code === 0)).toHaveLength(cap);
    });
  });
}
