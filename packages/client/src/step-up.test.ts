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
import { type StepUpRequest, createStepUp, readReauthenticated, requirementOf } from "./step-up.js";
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

describe("STUP-2: what the client reads and sends", () => {
  it("STUP-2: a re-authentication answer without a string accessToken, a number expiresIn or a user with an id is invalid_response (code 0, status 200)", () => {
    const good = { accessToken: "access-9", expiresIn: 60, user: scriptedUser };
    expect(readReauthenticated(good)).toBe(good);
    for (const data of [
      undefined,
      null,
      { ...good, accessToken: 7 },
      { ...good, expiresIn: "60" },
      { ...good, user: {} },
      { accessToken: "access-9", expiresIn: 60 },
    ]) {
      let thrown: unknown;
      try {
        readReauthenticated(data);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, JSON.stringify(data)).toBeInstanceOf(AuthClientError);
      expect(thrown).toMatchObject({ kind: "invalid_response", code: 0, status: 200 });
    }
  });

  it("STUP-2, ASVS 7.5.3: a passkey re-authentication begins, runs the ceremony on its options and finishes with the assertion under the ceremony's header", async () => {
    const server = scriptedServer((request) => {
      if (request.path === "/auth/reauthenticate/public-key/begin") {
        return { code: 0, data: { ceremonyId: "ceremony-7", options: { challenge: "Y2g" } } };
      }
      return raised;
    });
    const events = createClientEvents();
    const store = memoryTokenStore();
    const session = createSession({
      transport: createTransport(scriptedBaseUrl, server.fetch),
      store,
      events,
      now: () => 0,
      refreshAheadSeconds: 0,
    });
    await session.begin({ ...tokenSet(1), tokenType: "Bearer" });
    const assertion = {
      id: "credential-1",
      rawId: "credential-1",
      type: "public-key" as const,
      response: { clientDataJSON: "e30", authenticatorData: "AA", signature: "AA" },
      clientExtensionResults: {},
    };
    const given: unknown[] = [];
    const stepUp = createStepUp(session, events, {
      startAuthentication: async (options) => {
        given.push(options);
        return assertion;
      },
      startRegistration: () => Promise.reject(new Error("no registration here")),
    });
    expect(await stepUp.client.reauthenticateWithPasskey()).toEqual(scriptedUser);
    expect(given).toEqual([{ optionsJSON: { challenge: "Y2g" } }]);
    expect(server.sent.map((request) => [request.method, request.path, request.body])).toEqual([
      ["POST", "/auth/reauthenticate/public-key/begin", {}],
      ["POST", "/auth/reauthenticate/public-key/finish", assertion],
    ]);
    expect(server.sentTo("/auth/reauthenticate/public-key/finish")[0]?.headers.get("x-webauthn-ceremony")).toBe("ceremony-7");
    expect((await store.load())?.accessToken).toBe("access-9");
  });

  it("STUP-2: client.fetch emits no stepUpRequired for an answer that is no 40104", async () => {
    const { client } = await signedInScriptedClient(() => new Response("ok"));
    const seen: unknown[] = [];
    client.on("stepUpRequired", (step) => {
      seen.push(step.required);
      step.cancel();
    });
    const answered = await client.fetch(`${scriptedBaseUrl}/things`);
    expect([answered.status, await answered.text()]).toEqual([200, "ok"]);
    expect(seen).toEqual([]);
  });
});
