// The account around the sign-in, through @portcullis/client against real servers: sign-up, the
// password change, and the user's sessions (list, end one, end the others, end all), on Express 5
// and Hono in both status modes.
import { describe, expect, it } from "vitest";
import { createTestUser, testPassword } from "../fixtures/auth.js";
import { clientTargets, recordEvents, rejection, servedPerTest, statusIn } from "./client-servers.js";

describe.each(clientTargets)("client.register against %s", (_name, start, statusMode) => {
  const serve = servedPerTest(start, statusMode);

  it("SU-1: signs up and in at once (the server's default roles, signedIn emitted), then the new account signs in with its password", async () => {
    const harness = await serve({ signUp: { enabled: true, defaultRoles: ["reader"] } });
    const client = harness.client();
    const events = recordEvents(client);
    const signedUp = await client.register({ username: "newcomer", password: testPassword });
    expect(signedUp).toEqual({
      status: "authenticated",
      user: { id: expect.any(String), username: "newcomer", roles: ["reader"], totpEnabled: false, createdAt: harness.clock.now },
    });
    expect(events).toEqual([["signedIn", { user: signedUp.user }]]);
    expect(await client.me()).toEqual(signedUp.user);
    await client.logout();
    expect(await client.login({ username: "newcomer", password: testPassword })).toMatchObject({ status: "authenticated" });
  });

  it("SU-1: a taken username is 40900 and a refused password 42200, with nothing stored; sign-up off is 40400", async () => {
    const harness = await serve({ signUp: { enabled: true } });
    await createTestUser(harness.auth, "taken");
    const client = harness.client();
    expect(await rejection(client.register({ username: "taken", password: testPassword }))).toMatchObject({
      code: 40900,
      status: statusIn(statusMode, 409),
    });
    expect(await rejection(client.register({ username: "short", password: "short" }))).toMatchObject({
      code: 42200,
      status: statusIn(statusMode, 422),
    });
    expect(await client.currentUser()).toBeNull();

    const off = await serve();
    expect(await rejection(off.client().register({ username: "newcomer", password: testPassword }))).toMatchObject({
      code: 40400,
      status: statusIn(statusMode, 404),
    });
  });
});
