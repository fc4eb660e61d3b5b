// STUP-4 (ASVS 6.3.3) over HTTP on every store: a required user's 40105 token enrols TOTP once,
// however many completions race (TMP-3), serves at most enrolmentAttempts requests however many
// run at once (TMP-4), and the enrolled factor then asks for its code at the next sign-in; on
// memory storage, PGlite, PostgreSQL and MariaDB, through Express 5.
import type { Auth } from "@portcullis/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { base32Decode, createTestUser, generousThrottle, makeTestAuth, testPassword, totpCodeAt } from "../fixtures/auth.js";
import { describeNeedingService } from "../fixtures/required-service.js";
import { post } from "../http/client.js";
import { expectEnvelope } from "../http/contract-suite.js";
import { type RunningServer, startExpress5 } from "../http/servers.js";
import { type Store, stores } from "./stores.js";

const base = "/api/v1/auth";
const attempts = 5;

for (const store of stores) {
  const describeStore = describeNeedingService("test/storage/required-factor.test.ts", await store.missing());

  describeStore(`the required second factor over HTTP on ${store.name}`, () => {
    let opened: Awaited<ReturnType<Store["open"]>> | undefined;
    let auth: Auth;
    let server: RunningServer;

    beforeAll(async () => {
      opened = await store.open();
      ({ auth } = makeTestAuth({
        storage: opened.storage,
        throttle: generousThrottle,
        secondFactor: { required: "always", enrolmentAttempts: attempts },
      }));
      server = await startExpress5(auth);
    });

    afterAll(async () => {
      await server?.close();
      await opened?.close();
    });

    /** A new user's password sign-in: the 40105 token. */
    async function enrolmentToken(username: string): Promise<string> {
      await createTestUser(auth, username);
      const answer = await post(server, `${base}/login`, { username, password: testPassword });
      expectEnvelope(answer, 40105);
      return answer.body.data.tempToken as string;
    }

    it("STUP-4, ASVS 6.3.3 (TMP-3): of 20 concurrent completions with a right code one gets tokens, the others 40100 or 40103; the next sign-in asks for the code", async () => {
      const tempToken = await enrolmentToken(`race-${store.name.replace(/\W/g, "")}`.toLowerCase());
      const setup = await post(server, `${base}/2fa/enrolment/setup`, { tempToken });
      expectEnvelope(setup, 0);
      const code = await totpCodeAt(auth, base32Decode(setup.body.data.secret));
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => post(server, `${base}/2fa/enrolment/enable`, { tempToken, code })),
      );
      const codes = answers.map((answer) => answer.body.code as number);
      expect(codes.filter((answer) => answer === 0)).toHaveLength(1);
      expect(codes.filter((answer) => answer !== 0 && answer !== 40100 && answer !== 40103)).toEqual([]);
      const winner = answers.find((answer) => answer.body.code === 0);
      expect(winner?.body.data.recoveryCodes).toHaveLength(10);
      const username = winner?.body.data.user.username as string;
      expectEnvelope(await post(server, `${base}/login`, { username, password: testPassword }), 40102);
    });

    it("STUP-4, ASVS 6.3.3 (TMP-4): of 20 concurrent wrong codes at most enrolmentAttempts are checked (40103), the rest 40100, and the token is then void", async () => {
      const tempToken = await enrolmentToken(`guess-${store.name.replace(/\W/g, "")}`.toLowerCase());
      const setup = await post(server, `${base}/2fa/enrolment/setup`, { tempToken });
      const secret = base32Decode(setup.body.data.secret);
      const near = await Promise.all([-1, 0, 1].map((offset) => totpCodeAt(auth, secret, offset)));
      const wrong = ["000000", "111111", "222222", "333333"].find((candidate) => !near.includes(candidate)) as string;
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => post(server, `${base}/2fa/enrolment/enable`, { tempToken, code: wrong })),
      );
      const codes = answers.map((answer) => answer.body.code as number);
      expect(codes.filter((answer) => answer === 40103)).toHaveLength(attempts - 1);
      expect(codes.filter((answer) => answer === 40100)).toHaveLength(20 - (attempts - 1));
      expectEnvelope(await post(server, `${base}/2fa/enrolment/enable`, { tempToken, code: near[1] }), 40100);
    });
  });
}
