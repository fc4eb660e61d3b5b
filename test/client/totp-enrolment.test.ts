import type { ReauthenticationProof } from "@portcullis/client";
import { describe, expect, it } from "vitest";
import { base32Decode, nextTotpCode, testPassword } from "../fixtures/auth.js";
import {
  type ClientTestServer,
  clientTargets,
  reauthenticateWith,
  recordEvents,
  rejection,
  servedPerTest,
  signInGrowsOld,
  signedInClient,
  statusIn,
} from "./client-servers.js";

const setupPath = "/api/v1/auth/2fa/setup";
const enablePath = "/api/v1/auth/2fa/enable";
const disablePath = "/api/v1/auth/2fa/disable";

describe.each(clientTargets)("client.totp against %s", (_name, start, statusMode) => {
  const serve = servedPerTest(start, statusMode);

  /** A signed-in client whose `reauthenticate` notes each request and answers `proof`. */
  async function clientAsking(harness: ClientTestServer, username: string, proof: ReauthenticationProof | null) {
    const { reauthenticate, asked } = reauthenticateWith(() => proof);
    const { client } = await signedInClient(harness, username, { reauthenticate });
    return { client, asked };
  }

  it("TOTP-5/SE-2: after an older sign-in, each 40001 asks reauthenticate once and the call is sent once more, with the password; enable keeps the session", async () => {
    const harness = await serve();
    const { client, asked } = await clientAsking(harness, "alice", { password: testPassword });
    const events = recordEvents(client);
    signInGrowsOld(harness);

    const setup = await client.totp.setup();
    expect(asked).toEqual([{ operation: "totp.setup", accepts: ["password"], reauthenticateWith: ["password"] }]);
    expect(harness.countSent("POST", setupPath)).toBe(2);

    const { recoveryCodes } = await client.totp.enable({ code: await nextTotpCode(harness, base32Decode(setup.secret)) });
    expect(recoveryCodes).toHaveLength(10);
    expect(asked.map(({ operation }) => operation)).toEqual(["totp.setup", "totp.enable"]);
    expect(harness.countSent("POST", enablePath)).toBe(2);
    expect(events).toEqual([]);
    expect(await client.me()).toMatchObject({ totpEnabled: true });
  });

  it("a wrong password from reauthenticate is 40100 after one retry, never a third try; no answer, or a proof the operation does not take, leaves the 40001 unsent again", async () => {
    const harness = await serve();
    const wrong = await clientAsking(harness, "bob", { password: "not bob's password" });
    signInGrowsOld(harness);
    expect(await rejection(wrong.client.totp.setup())).toMatchObject({ code: 40100, status: statusIn(statusMode, 401) });
    expect(wrong.asked).toHaveLength(1);
    expect(harness.countSent("POST", setupPath)).toBe(2);

    for (const [username, answer] of [
      ["carol", null],
      ["dave", { totpCode: "123456" }],
    ] as const) {
      const declining = await clientAsking(harness, username, answer);
      signInGrowsOld(harness);
      const before = harness.countSent("POST", setupPath);
      expect(await rejection(declining.client.totp.setup())).toMatchObject({ code: 40001, status: statusIn(statusMode, 400) });
      expect(declining.asked).toHaveLength(1);
      expect(harness.countSent("POST", setupPath) - before).toBe(1);
    }

    const { client } = await signedInClient(harness, "erin");
    signInGrowsOld(harness);
    expect(await rejection(client.totp.setup())).toMatchObject({ code: 40001 });
    expect(harness.countSent("POST", setupPath)).toBe(5);
  });

  it("a recent sign-in, or the password given in the call, needs no reauthenticate: it is never asked and each call is sent once", async () => {
    const harness = await serve();
    const recent = await clientAsking(harness, "frank", { password: testPassword });
    await recent.client.totp.setup();
    expect(recent.asked).toEqual([]);
    expect(harness.countSent("POST", setupPath)).toBe(1);

    const older = await clientAsking(harness, "grace", { password: testPassword });
    signInGrowsOld(harness);
    const setup = await older.client.totp.setup({ password: testPassword });
    await older.client.totp.enable({ code: await nextTotpCode(harness, base32Decode(setup.secret)), password: testPassword });
    expect(older.asked).toEqual([]);
    expect([harness.countSent("POST", setupPath), harness.countSent("POST", enablePath)]).toEqual([2, 1]);
  });

  it("a wrong code keeps the session (40103); enable without a pending setup and setup once enabled are 40900; enable and disable keep this session and end the other (SE-2)", async () => {
    const harness = await serve();
    const { client } = await signedInClient(harness, "heidi");
    const other = harness.client();
    await other.login({ username: "heidi", password: testPassword });
    const events = recordEvents(client);

    expect(await rejection(client.totp.enable({ code: "123456" }))).toMatchObject({
      code: 40900,
      status: statusIn(statusMode, 409),
    });
    const secret = base32Decode((await client.totp.setup()).secret);
    expect(await rejection(client.totp.enable({ code: "000000" }))).toMatchObject({
      code: 40103,
      status: statusIn(statusMode, 401),
    });
    expect(events).toEqual([]);
    expect((await client.me()).totpEnabled).toBe(false);
    await client.totp.enable({ code: await nextTotpCode(harness, secret) });
    expect(await rejection(other.me())).toMatchObject({ code: 40101 });
    expect(await rejection(client.totp.setup())).toMatchObject({ code: 40900 });
    expect(await rejection(client.totp.disable({ code: "000000" }))).toMatchObject({ code: 40103 });
    expect((await client.me()).totpEnabled).toBe(true);

    const step = await other.login({ username: "heidi", password: testPassword });
    if (step.status !== "totp_required") throw new Error("expected the second factor");
    await step.verifyTotp(await nextTotpCode(harness, secret));
    await client.totp.disable({ code: await nextTotpCode(harness, secret) });
    expect(harness.countSent("POST", disablePath)).toBe(2);
    expect(events).toEqual([]);
    expect((await client.me()).totpEnabled).toBe(false);
    expect(await rejection(other.me())).toMatchObject({ code: 40101 });
    expect((await other.login({ username: "heidi", password: testPassword })).status).toBe("authenticated");
  });
});
