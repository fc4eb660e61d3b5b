// The client and step-up (STUP-2): a route of the app that answers 40104 to client.fetch, the
// stepUpRequired event, the re-authentication, and the one retry; against every adapter in both
// status modes.
import { type StepUpRequest, memoryTokenStore } from "@portcullis/client";
import { describe, expect, it } from "vitest";
import { createTotpUser, nextTotpCode, testPassword } from "../fixtures/auth.js";
import {
  type ClientTestServer,
  clientTargets,
  envelopeOf,
  rejection,
  servedPerTest,
  signedInClient,
  statusIn,
} from "./client-servers.js";

const recentPath = "/api/v1/things/recent";
const strongPath = "/api/v1/things/strong";
const sixMinutes = 6 * 60_000;

/** A TOTP user signed in with the password and a code, six minutes ago: the client and the user. */
async function signedInWithCode(harness: ClientTestServer, username: string) {
  const user = await createTotpUser(harness.auth, username);
  const client = harness.client();
  const first = await client.login({ username, password: testPassword });
  if (first.status !== "totp_required") throw new Error("expected the second factor");
  await first.verifyTotp(await nextTotpCode(harness, user.secret));
  harness.clock.advance(sixMinutes);
  return { client, user };
}

describe.each(clientTargets)("client step-up against %s", (_name, start, statusMode) => {
  const serve = servedPerTest(start, statusMode);

  it("STUP-2, ASVS 7.5.3, 7.2.4: a 40104 emits stepUpRequired with what is required; once the listener re-authenticates the request is sent once more with the new session's token and answers; the ended session's refresh token is refused", async () => {
    const harness = await serve();
    const store = memoryTokenStore();
    const { client, user } = await signedInClient(harness, "stepping", { store });
    const before = await store.load();
    harness.clock.advance(sixMinutes);
    const seen: StepUpRequest["required"][] = [];
    client.on("stepUpRequired", (step) => {
      seen.push(step.required);
      void step.reauthenticate({ password: testPassword });
    });
    const answered = await client.fetch(recentPath);
    expect(answered.status).toBe(200);
    expect(await envelopeOf(answered)).toEqual({
      code: 0,
      message: "OK",
      data: { userId: user.id, authTime: Math.floor(harness.clock.now / 1000), amr: ["pwd"] },
    });
    expect(seen).toEqual([{ maxAge: 300 }]);
    expect([harness.countSent("GET", recentPath), harness.countSent("POST", "/api/v1/auth/reauthenticate")]).toEqual([2, 1]);
    // The new session's tokens are stored: the next request needs no step-up, and the refresh token is the new session's.
    const after = await store.load();
    expect(after?.refreshToken).not.toBe(before?.refreshToken);
    expect((await envelopeOf(await client.fetch(recentPath))).code).toBe(0);
    expect(harness.refreshesSent()).toBe(0);
    await client.refresh();
    expect((await envelopeOf(await client.fetch(recentPath))).code).toBe(0);
    const stolen = await fetch(`${harness.baseUrl}/auth/refresh`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ refreshToken: before?.refreshToken }),
    });
    expect((await envelopeOf(stolen)).code).toBe(40101);
    expect((await envelopeOf(await client.fetch(recentPath))).code).toBe(0);
  });

  it("STUP-2, ASVS 7.5.3: without a listener, or when it cancels, the 40104 is the answer and nothing is sent again", async () => {
    const harness = await serve();
    const { client } = await signedInClient(harness, "cancelling");
    harness.clock.advance(sixMinutes);
    const alone = await client.fetch(recentPath);
    expect(alone.status).toBe(statusIn(statusMode, 401));
    expect(await envelopeOf(alone)).toMatchObject({ code: 40104, data: { required: { maxAge: 300 } } });

    let events = 0;
    client.on("stepUpRequired", (step) => {
      events += 1;
      step.cancel();
    });
    const answers = await Promise.all([client.fetch(recentPath), client.fetch(strongPath)]);
    for (const answer of answers) expect(await envelopeOf(answer)).toMatchObject({ code: 40104 });
    expect(events).toBeGreaterThan(0);
    expect(harness.countSent("POST", "/api/v1/auth/reauthenticate")).toBe(0);
    expect([harness.countSent("GET", recentPath), harness.countSent("GET", strongPath)]).toEqual([2, 1]);
  });

  it("STUP-2, STUP-3, ASVS 7.5.3, 7.5.1: a wrong proof rejects the listener's call and the request keeps waiting; a TOTP user steps up with the password and a code, to a second factor", async () => {
    const harness = await serve();
    const { client, user } = await signedInWithCode(harness, "two-factor");
    const failures: number[] = [];
    client.on("stepUpRequired", async (step) => {
      failures.push((await rejection(step.reauthenticate({ password: testPassword }))).code as number);
      failures.push((await rejection(step.reauthenticate({ password: "wrong", totpCode: "000000" }))).code as number);
      await step.reauthenticate({ password: testPassword, totpCode: await nextTotpCode(harness, user.secret) });
    });
    const answered = await client.fetch(recentPath);
    expect(await envelopeOf(answered)).toMatchObject({ code: 0, data: { amr: ["pwd", "otp", "mfa"] } });
    expect(failures).toEqual([40001, 40100]);
    expect((await envelopeOf(await client.fetch(strongPath))).code).toBe(0);
  });

  it("STUP-3, ASVS 7.5.1: with TOTP on, turning it off from an old session needs the password and a code; client.stepUp.reauthenticate makes the session recent for both", async () => {
    const harness = await serve();
    const { client, user } = await signedInWithCode(harness, "disabling");
    expect((await rejection(client.totp.disable({ password: testPassword }))).code).toBe(40001);
    await client.stepUp.reauthenticate({ password: testPassword, totpCode: await nextTotpCode(harness, user.secret) });
    await client.totp.disable({});
    expect((await client.currentUser())?.totpEnabled).toBe(false);
  });
});
