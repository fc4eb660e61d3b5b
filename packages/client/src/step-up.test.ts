import { describe, expect, it } from "vitest";
import { AuthClientError } from "./errors.js";
import { createClientEvents } from "./events.js";
import { browserPasskeyCeremonies } from "./passkeys.js";
import {
  scriptedBaseUrl,
  scriptedServer,
  scriptedUser,
  signedInScriptedClient,
  tokenSet,
} from "./scripted-server.test-support.js";
import { createSession } from "./session.js";
import { type StepUpRequest, createStepUp, requirementOf } from "./step-up.js";
import { memoryTokenStore } from "./token-store.js";
import { createTransport } from "./transport.js";

/** A signed-in session of a scripted server whose re-authentication answers `access-9`, and its step-up. */
async function stepUpOf(reauthentication: () => { code: number; data?: unknown }) {
  const server = scriptedServer((request) =>
    request.path === "/auth/login" ? { code: 0, data: tokenSet(1) } : reauthentication(),
  );
  const store = memoryTokenStore();
  const events = createClientEvents();
  const session = createSession({
    transport: createTransport(scriptedBaseUrl, server.fetch),
    store,
    events,
    now: () => 0,
    refreshAheadSeconds: 0,
  });
  await session.begin({ ...tokenSet(1), tokenType: "Bearer" });
  return { server, store, events, stepUp: createStepUp(session, events, browserPasskeyCeremonies) };
}

const raised = { code: 0, data: { accessToken: "access-9", tokenType: "Bearer", expiresIn: 60, user: scriptedUser } };

describe("STUP-2, ASVS 7.5.3: the client's step-up", () => {
  it("STUP-2, ASVS 7.5.3: requests that meet a 40104 together wait on one stepUpRequired; a re-authentication lets them all go, and stores the new access token beside the refresh token", async () => {
    const { events, stepUp, store, server } = await stepUpOf(() => raised);
    const steps: StepUpRequest[] = [];
    events.on("stepUpRequired", (step) => steps.push(step));
    const waiting = [stepUp.satisfy({ maxAge: 300 }), stepUp.satisfy({ amr: ["mfa"] }), stepUp.satisfy({})];
    expect(steps.map((step) => step.required)).toEqual([{ maxAge: 300 }]);
    expect(await steps[0]?.reauthenticate({ password: "pw", totpCode: "123456" })).toEqual(scriptedUser);
    expect(await Promise.all(waiting)).toEqual([true, true, true]);
    expect(server.sentTo("/auth/reauthenticate").map((request) => [request.body, request.authorization])).toEqual([
      [{ password: "pw", totpCode: "123456" }, "Bearer access-1"],
    ]);
    expect(await store.load()).toEqual({
      accessToken: "access-9",
      refreshToken: "refresh-1",
      expiresAt: 60_000,
      user: scriptedUser,
    });
    // The next 40104 is a step-up of its own.
    void stepUp.satisfy({ maxAge: 60 });
    expect(steps).toHaveLength(2);
  });

  it("STUP-2, ASVS 7.5.3: without a listener nothing waits; a cancel lets every waiting request answer its 40104; a refused proof leaves them waiting", async () => {
    let answer: { code: number; data?: unknown } = { code: 40100 };
    const { events, stepUp } = await stepUpOf(() => answer);
    expect(await stepUp.satisfy({ maxAge: 300 })).toBe(false);
    const steps: StepUpRequest[] = [];
    events.on("stepUpRequired", (step) => steps.push(step));
    const waiting = [stepUp.satisfy({ maxAge: 300 }), stepUp.satisfy({ maxAge: 300 })];
    const refused = await steps[0]?.reauthenticate({ password: "wrong" }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AuthClientError);
    expect((refused as AuthClientError).code).toBe(40100);
    answer = { code: 0, data: { accessToken: 7 } };
    const malformed = await steps[0]?.reauthenticate({ password: "pw" }).catch((error: unknown) => error);
    expect((malformed as AuthClientError).kind).toBe("invalid_response");
    steps[0]?.cancel();
    expect(await Promise.all(waiting)).toEqual([false, false]);
    answer = raised;
    expect(await steps[0]?.reauthenticate({ password: "pw" })).toEqual(scriptedUser);
  });

  it("STUP-2, ASVS 7.5.3: the requirement of a 40104 is read as far as it is one: maxAge a number, amr the strings of a list", () => {
    expect(requirementOf({ required: { maxAge: 300, amr: ["mfa", 7, "hwk"] } })).toEqual({ maxAge: 300, amr: ["mfa", "hwk"] });
    expect(requirementOf({ required: { maxAge: "300", amr: "mfa" } })).toEqual({});
    for (const data of [undefined, null, {}, { required: null }, { required: "x" }]) expect(requirementOf(data)).toEqual({});
  });

  it("STUP-2, ASVS 7.5.3: client.fetch waits on a 40104 of the app, then sends the request once more with the raised token; a second 40104 is the answer", async () => {
    const stepUpRequired = (required: unknown) =>
      new Response(JSON.stringify({ code: 40104, message: "Step-up required", data: { required } }), {
        status: 401,
        headers: { "content-type": "application/json" },
      });
    const { client, server } = await signedInScriptedClient((request) => {
      if (request.path === "/auth/reauthenticate") return raised;
      if (request.path === "/auth/refresh") return { code: 0, data: tokenSet(2) };
      if (request.url.endsWith("/still")) return stepUpRequired({ amr: ["hwk"] });
      return request.authorization === "Bearer access-9" ? new Response("ok") : stepUpRequired({ maxAge: 300 });
    });
    const seen: unknown[] = [];
    client.on("stepUpRequired", (step) => {
      seen.push(step.required);
      void step.reauthenticate({ password: "pw" });
    });
    const answered = await client.fetch(`${scriptedBaseUrl}/things`);
    expect([answered.status, await answered.text()]).toEqual([200, "ok"]);
    const still = await client.fetch(`${scriptedBaseUrl}/still`);
    expect(still.status).toBe(401);
    expect(await still.json()).toMatchObject({ code: 40104 });
    expect(seen).toEqual([{ maxAge: 300 }, { amr: ["hwk"] }]);
    expect(server.sent.filter((request) => request.url.endsWith("/still"))).toHaveLength(2);
    expect(server.sentTo("/auth/refresh")).toHaveLength(0);
  });
});
