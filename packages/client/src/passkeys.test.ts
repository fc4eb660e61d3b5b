import type { AuthenticationResponseJSON } from "@simplewebauthn/browser";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAuthClient } from "./client.js";
import type { PasskeyCeremonies } from "./passkeys.js";
import {
  type ScriptedAnswer,
  scriptedBaseUrl,
  scriptedServer,
  scriptedUser,
  signedInScriptedClient,
  tokenSet,
} from "./scripted-server.test-support.js";
import type { PasskeyInfo } from "./types.js";

const beginPath = "/auth/public-key/login/begin";
const finishPath = "/auth/public-key/login/finish";

const assertion: AuthenticationResponseJSON = {
  id: "credential-1",
  rawId: "credential-1",
  type: "public-key",
  response: { clientDataJSON: "e30", authenticatorData: "AA", signature: "AA" },
  clientExtensionResults: {},
};

/**
 * A client of a scripted server that begins and finishes passkey sign-ins, whose authenticator
 * answers `authenticate` (the assertion, or a throw). Records the options each ceremony was given.
 */
function passkeyClientOf(authenticate: () => AuthenticationResponseJSON = () => assertion) {
  const server = scriptedServer((request) =>
    request.path === beginPath
      ? { code: 0, data: { ceremonyId: "ceremony-1", options: { challenge: "Y2hhbGxlbmdl" } } }
      : { code: 0, data: tokenSet(1) },
  );
  const ceremonyOptions: Parameters<PasskeyCeremonies["startAuthentication"]>[0][] = [];
  const passkeyCeremonies: PasskeyCeremonies = {
    startAuthentication: async (options) => {
      ceremonyOptions.push(options);
      return authenticate();
    },
    startRegistration: () => Promise.reject(new Error("no registration in these tests")),
  };
  const client = createAuthClient({ baseUrl: scriptedBaseUrl, fetch: server.fetch, passkeyCeremonies });
  return { client, server, ceremonyOptions };
}

describe("client.passkeys.signIn against a scripted server", () => {
  it("asks the server for one user's passkeys when given a username, and for any (discoverable) without one", async () => {
    const { client, server } = passkeyClientOf();
    await client.passkeys.signIn({ username: "alice" });
    await client.passkeys.signIn();
    expect(server.sentTo(beginPath).map(({ body }) => body)).toEqual([{ username: "alice" }, {}]);
  });

  it("useBrowserAutofill (conditional mediation) reaches the ceremony only when asked for", async () => {
    const { client, ceremonyOptions } = passkeyClientOf();
    await client.passkeys.signIn({ useBrowserAutofill: true });
    await client.passkeys.signIn();
    expect(ceremonyOptions.map(({ useBrowserAutofill }) => useBrowserAutofill)).toEqual([true, undefined]);
    expect(Object.keys(ceremonyOptions[1] ?? {})).toEqual(["optionsJSON"]);
  });

  it("a failed ceremony is passkey_ceremony, naming its code or DOMException only when that is one word, with the cause kept and nothing sent to finish", async () => {
    const failures: [unknown, string][] = [
      [new DOMException("The operation either timed out or was not allowed.", "NotAllowedError"), " (NotAllowedError)"],
      [Object.assign(new Error("Cancelled"), { code: "ERROR_CEREMONY_ABORTED" }), " (ERROR_CEREMONY_ABORTED)"],
      [Object.assign(new Error("Cancelled"), { code: "not one word", name: "Error: see https://evil.example" }), ""],
      [undefined, ""],
    ];
    for (const [cause, named] of failures) {
      const { client, server } = passkeyClientOf(() => {
        throw cause;
      });
      const error = await client.passkeys.signIn().catch((thrown: unknown) => thrown);
      expect(error, String(cause)).toMatchObject({
        name: "AuthClientError",
        kind: "passkey_ceremony",
        message: `The passkey ceremony did not complete${named}`,
      });
      expect((error as Error).cause).toBe(cause);
      expect(server.sentTo(finishPath)).toEqual([]);
    }
  });
});

describe("client.passkeys: the user's own changes keep the session (SE-2)", () => {
  const passkey: PasskeyInfo = {
    id: "credential-1",
    label: "Laptop",
    transports: ["internal"],
    createdAt: 1,
    lastUsedAt: null,
    backupEligible: false,
    backupState: false,
  };

  /** A client signed in to a scripted server that registers and revokes passkeys. */
  function signedInPasskeyClient() {
    const passkeyCeremonies: PasskeyCeremonies = {
      startAuthentication: () => Promise.reject(new Error("no sign-in in these tests")),
      startRegistration: async () => ({
        id: "credential-1",
        rawId: "credential-1",
        type: "public-key",
        response: { clientDataJSON: "e30", attestationObject: "AA" },
        clientExtensionResults: {},
      }),
    };
    return signedInScriptedClient(
      (request) =>
        ({
          "/auth/public-key/register/begin": { code: 0, data: { ceremonyId: "ceremony-2", options: { challenge: "Y2g" } } },
          "/auth/public-key/register/finish": { code: 0, data: passkey },
          "/auth/public-key/credentials/credential-1": { code: 0, data: { revoked: true } },
        })[request.path] ?? { code: 40400, message: "No such route", status: 404 },
      { passkeyCeremonies },
    );
  }

  it("SE-2: registering a passkey keeps this client signed in: no signedOut, no logout sent, the tokens kept", async () => {
    const { client, server, signedOut } = await signedInPasskeyClient();
    expect(await client.passkeys.register({ label: "Laptop" })).toEqual(passkey);
    expect(
      server.sentTo("/auth/public-key/register/finish").map((request) => request.headers.get("x-webauthn-ceremony")),
    ).toEqual(["ceremony-2"]);
    expect(signedOut).toEqual([]);
    expect(server.sentTo("/auth/logout")).toEqual([]);
    expect(await client.accessToken()).toBe("access-1");
  });

  it("SE-2: revoking a passkey keeps this client signed in", async () => {
    const { client, server, signedOut } = await signedInPasskeyClient();
    await client.passkeys.revoke("credential-1");
    expect(server.sentTo("/auth/public-key/credentials/credential-1").map((request) => request.method)).toEqual(["DELETE"]);
    expect(signedOut).toEqual([]);
    expect(server.sentTo("/auth/logout")).toEqual([]);
    expect(await client.accessToken()).toBe("access-1");
  });
});

describe("client.passkeys.revoke: every factor of the account (STUP-3)", () => {
  it("STUP-3, ASVS 7.5.1: revoking sends the password and a TOTP code when given and no body without them; a 40001 asks reauthenticate for passkeys.revoke, taking the password and a code", async () => {
    const asked: unknown[] = [];
    const { client, server } = await signedInScriptedClient(
      (request) => {
        const body = request.body as { password?: string; totpCode?: string } | undefined;
        return body?.password || body?.totpCode
          ? { code: 0, data: { revoked: true } }
          : { code: 40001, message: "Confirm it is you", status: 400 };
      },
      {
        reauthenticate: async (request) => {
          asked.push(request);
          return { password: "pw", totpCode: "123456" };
        },
      },
    );
    const path = "/auth/public-key/credentials/credential-2";
    await client.passkeys.revoke("credential-2", { password: "pw" });
    await client.passkeys.revoke("credential-2", { totpCode: "654321" });
    expect(asked).toEqual([]);
    await client.passkeys.revoke("credential-2");
    expect(asked).toEqual([{ operation: "passkeys.revoke", accepts: ["password", "totpCode"] }]);
    expect(server.sentTo(path).map((request) => [request.method, request.body])).toEqual([
      ["DELETE", { password: "pw" }],
      ["DELETE", { totpCode: "654321" }],
      ["DELETE", undefined],
      ["DELETE", { password: "pw", totpCode: "123456" }],
    ]);
  });
});

describe("client.passkeys.autofill: conditional mediation against a scripted server", () => {
  const ttl = 300_000;

  /**
   * A client whose server numbers the autofill ceremonies it begins (`cm.1`, `cm.2`, …) and signs
   * in on finish, and whose authenticator holds each request until the test answers it or it is
   * cancelled (then it rejects with an AbortError, as the browser does).
   */
  function autofillClient({ supportsAutofill = true } = {}) {
    let begun = 0;
    const server = scriptedServer((request) =>
      request.path === beginPath
        ? { code: 0, data: { ceremonyId: `cm.${++begun}`, options: { challenge: `Y2g${begun}`, timeout: ttl } } }
        : { code: 0, data: tokenSet(1) },
    );
    const requests: {
      options: Parameters<PasskeyCeremonies["startAuthentication"]>[0];
      answer(assertion: AuthenticationResponseJSON): void;
      fail(error: unknown): void;
    }[] = [];
    let cancelled = 0;
    const passkeyCeremonies: PasskeyCeremonies = {
      startAuthentication: (options) =>
        new Promise((resolve, reject) => {
          requests.push({ options, answer: resolve, fail: reject });
        }),
      startRegistration: () => Promise.reject(new Error("no registration in these tests")),
      cancel: () => {
        cancelled += 1;
        requests.at(-1)?.fail(new DOMException("Cancelled", "AbortError"));
      },
      supportsAutofill: async () => supportsAutofill,
    };
    const client = createAuthClient({ baseUrl: scriptedBaseUrl, fetch: server.fetch, passkeyCeremonies });
    /** Waits (on the event loop, not on timers, which a test may fake) until `count` requests were made. */
    const requested = async (count: number) => {
      for (let turn = 0; turn < 1000 && requests.length < count; turn += 1) {
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(requests).toHaveLength(count);
    };
    return { client, server, requests, requested, cancelled: () => cancelled };
  }

  afterEach(() => {
    vi.useRealTimers();
  });

  it("begins a stateless ceremony (mediation conditional), runs the browser's autofill request and finishes with its id", async () => {
    const { client, server, requests, requested } = autofillClient();
    const step = client.passkeys.autofill();
    await requested(1);
    expect(server.sentTo(beginPath).map(({ body }) => body)).toEqual([{ mediation: "conditional" }]);
    expect(requests[0]?.options).toEqual({ optionsJSON: { challenge: "Y2g1", timeout: ttl }, useBrowserAutofill: true });
    requests[0]?.answer(assertion);
    expect((await step).status).toBe("authenticated");
    expect(server.sentTo(finishPath).map((request) => [request.headers.get("x-webauthn-ceremony"), request.body])).toEqual([
      ["cm.1", assertion],
    ]);
  });

  it("PL-11: an already-aborted signal rejects with its reason and sends nothing; a browser without autofill is passkey_ceremony, nothing sent", async () => {
    const { client, server } = autofillClient();
    const reason = new Error("the user left");
    await expect(client.passkeys.autofill({ signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(server.sent).toEqual([]);

    const unsupported = autofillClient({ supportsAutofill: false });
    await expect(unsupported.client.passkeys.autofill()).rejects.toMatchObject({
      name: "AuthClientError",
      kind: "passkey_ceremony",
      message: "This browser does not offer passkeys in its autofill (conditional mediation)",
    });
    expect(unsupported.server.sent).toEqual([]);
  });

  it("PL-11: aborting during the prompt cancels the browser's request and rejects with the reason; no finish is sent, even when the browser answers after all", async () => {
    const { client, server, requests, requested, cancelled } = autofillClient();
    const controller = new AbortController();
    const step = client.passkeys.autofill({ signal: controller.signal });
    await requested(1);
    const reason = new Error("signed in with the password");
    controller.abort(reason);
    await expect(step).rejects.toBe(reason);
    expect(cancelled()).toBe(1);
    requests[0]?.answer(assertion);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(server.sentTo(finishPath)).toEqual([]);
  });

  it("PL-11: aborting while the begin is on its way rejects with the reason once it answers; the browser is asked nothing", async () => {
    let answerBegin: () => void = () => {};
    const beginAnswered = new Promise<void>((resolve) => {
      answerBegin = resolve;
    });
    const server = scriptedServer(async () => {
      await beginAnswered;
      return { code: 0, data: { ceremonyId: "cm.1", options: { challenge: "Y2g", timeout: ttl } } };
    });
    const asked: unknown[] = [];
    const passkeyCeremonies: PasskeyCeremonies = {
      startAuthentication: async (options) => {
        asked.push(options);
        return assertion;
      },
      startRegistration: () => Promise.reject(new Error("no registration in these tests")),
    };
    const client = createAuthClient({ baseUrl: scriptedBaseUrl, fetch: server.fetch, passkeyCeremonies });
    const controller = new AbortController();
    const step = client.passkeys.autofill({ signal: controller.signal });
    const reason = new Error("the view went away");
    controller.abort(reason);
    answerBegin();
    await expect(step).rejects.toBe(reason);
    expect(asked).toEqual([]);
    expect(server.sentTo(finishPath)).toEqual([]);
  });

  it("PL-11: a browser that answers the request it is told to abort in the same turn (as Chromium may): the answer is not sent", async () => {
    const { client, server, requests, requested } = autofillClient();
    const controller = new AbortController();
    const step = client.passkeys.autofill({ signal: controller.signal });
    await requested(1);
    // The answer is on its way when the abort comes.
    requests[0]?.answer(assertion);
    controller.abort();
    await expect(step).rejects.toMatchObject({ name: "AbortError" });
    expect(server.sentTo(finishPath)).toEqual([]);
  });

  it("a second autofill replaces the first: the first rejects (passkey_ceremony, an AbortError as cause) and its request is cancelled; the second signs in", async () => {
    const { client, server, requests, requested, cancelled } = autofillClient();
    const first = client.passkeys.autofill();
    await requested(1);
    const second = client.passkeys.autofill();
    const error = await first.catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({
      name: "AuthClientError",
      kind: "passkey_ceremony",
      message: "The passkey autofill was replaced by a newer one",
    });
    expect((error as Error).cause).toMatchObject({ name: "AbortError" });
    expect(cancelled()).toBe(1);
    await requested(2);
    requests[1]?.answer(assertion);
    expect((await second).status).toBe("authenticated");
    expect(server.sentTo(finishPath).map((request) => request.headers.get("x-webauthn-ceremony"))).toEqual(["cm.2"]);
  });

  it("renews the ceremony a minute before its timeout, so a page left open keeps working; the renewed one signs in", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const { client, server, requests, requested, cancelled } = autofillClient();
    const step = client.passkeys.autofill();
    await requested(1);
    await vi.advanceTimersByTimeAsync(ttl - 60_000 - 1);
    expect(server.sentTo(beginPath)).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await requested(2);
    expect(cancelled()).toBe(1);
    expect(requests[1]?.options.optionsJSON.challenge).toBe("Y2g2");
    // And again, for a page open longer still.
    await vi.advanceTimersByTimeAsync(ttl - 60_000);
    await requested(3);
    requests[2]?.answer(assertion);
    expect((await step).status).toBe("authenticated");
    expect(server.sentTo(beginPath)).toHaveLength(3);
    expect(server.sentTo(finishPath).map((request) => request.headers.get("x-webauthn-ceremony"))).toEqual(["cm.3"]);
  });

  it("a failed browser request rejects as passkey_ceremony and sends no finish", async () => {
    const { client, server, requests, requested } = autofillClient();
    const step = client.passkeys.autofill();
    await requested(1);
    requests[0]?.fail(new DOMException("No passkey", "NotAllowedError"));
    await expect(step).rejects.toMatchObject({
      kind: "passkey_ceremony",
      message: "The passkey ceremony did not complete (NotAllowedError)",
    });
    expect(server.sentTo(finishPath)).toEqual([]);
  });
});

describe("client.passkeys: the offer after a sign-in (PL-13, PL-14)", () => {
  /** A client whose sign-in answers `offerPasskey` as given, on a device whose authenticator is `available`. */
  function offeringClient(offerPasskey: boolean | undefined, available?: () => Promise<boolean>) {
    const server = scriptedServer((request) =>
      request.path === "/auth/login"
        ? { code: 0, data: { ...tokenSet(1), ...(offerPasskey === undefined ? {} : { offerPasskey }) } }
        : { code: 0, data: { declined: true } },
    );
    const passkeyCeremonies: PasskeyCeremonies = {
      startAuthentication: () => Promise.reject(new Error("no sign-in in these tests")),
      startRegistration: () => Promise.reject(new Error("no registration in these tests")),
      ...(available ? { platformAuthenticatorAvailable: available } : {}),
    };
    return { client: createAuthClient({ baseUrl: scriptedBaseUrl, fetch: server.fetch, passkeyCeremonies }), server };
  }

  it("PL-13: the step carries the server's word, and shouldOffer adds the device's authenticator", async () => {
    const cases: [boolean | undefined, (() => Promise<boolean>) | undefined, boolean, boolean][] = [
      [true, async () => true, true, true],
      [true, async () => false, true, false],
      [true, () => Promise.reject(new Error("no WebAuthn here")), true, false],
      [true, undefined, true, true],
      [false, async () => true, false, false],
      [undefined, async () => true, false, false],
    ];
    for (const [said, available, offerPasskey, shouldOffer] of cases) {
      const { client } = offeringClient(said, available);
      const step = await client.login({ username: "alice", password: "pw" });
      expect(step, `${said} ${available}`).toMatchObject({ status: "authenticated", offerPasskey });
      expect(await client.passkeys.shouldOffer(step), `${said} ${available}`).toBe(shouldOffer);
    }
  });

  it("PL-13: a step that is not a completed sign-in is never one to offer after", async () => {
    const { client } = offeringClient(true, async () => true);
    const step = { status: "totp_required", verifyTotp: async () => never(), useRecoveryCode: async () => never() } as const;
    expect(await client.passkeys.shouldOffer(step)).toBe(false);
  });

  it("PL-14: declineOffer posts the decline with the access token", async () => {
    const { client, server } = offeringClient(true);
    await client.login({ username: "alice", password: "pw" });
    await client.passkeys.declineOffer();
    const [decline] = server.sentTo("/auth/public-key/offer/decline");
    expect(decline?.method).toBe("POST");
    expect(decline?.authorization).toBe("Bearer access-1");
  });
});

function never(): never {
  throw new Error("not called");
}

describe("client.passkeys: a passkey-only account re-authenticates with its passkey (PL-15)", () => {
  it("PL-15: the 40001's ways reach reauthenticate; { passkey: true } re-authenticates with a passkey, then the call goes again with no proof and the new token", async () => {
    const asked: unknown[] = [];
    const ceremonies: Parameters<PasskeyCeremonies["startAuthentication"]>[0][] = [];
    let reauthenticated = false;
    const { client, server } = await signedInScriptedClient(
      (request) => {
        if (request.path === "/auth/reauthenticate/public-key/begin") {
          return { code: 0, data: { ceremonyId: "reauth-1", options: { challenge: "cmVhdXRo" } } };
        }
        if (request.path === "/auth/reauthenticate/public-key/finish") {
          reauthenticated = true;
          return { code: 0, data: tokenSet(2) };
        }
        return reauthenticated
          ? { code: 0, data: { revoked: true } }
          : { code: 40001, message: "Confirm it is you", status: 400, data: { reauthenticateWith: ["passkey"] } };
      },
      {
        reauthenticate: async (request) => {
          asked.push(request);
          return request.reauthenticateWith?.includes("password") ? { password: "pw" } : { passkey: true };
        },
        passkeyCeremonies: {
          startAuthentication: async (options) => {
            ceremonies.push(options);
            return assertion;
          },
          startRegistration: () => Promise.reject(new Error("no registration in these tests")),
        },
      },
    );
    await client.passkeys.revoke("credential-3");
    expect(asked).toEqual([{ operation: "passkeys.revoke", accepts: ["password", "totpCode"], reauthenticateWith: ["passkey"] }]);
    expect(ceremonies).toEqual([{ optionsJSON: { challenge: "cmVhdXRo" } }]);
    const path = "/auth/public-key/credentials/credential-3";
    expect(server.sentTo(path).map((request) => [request.body, request.authorization])).toEqual([
      [undefined, "Bearer access-1"],
      [undefined, "Bearer access-2"],
    ]);
    const [finish] = server.sentTo("/auth/reauthenticate/public-key/finish");
    expect(finish?.headers.get("x-webauthn-ceremony")).toBe("reauth-1");
  });

  it("PL-15: a 40001 still answers when the passkey re-authentication fails, and nothing is sent again", async () => {
    const { client, server } = await signedInScriptedClient(
      (request) =>
        request.path === "/auth/reauthenticate/public-key/begin"
          ? { code: 40900, message: "The account has no passkey", status: 409 }
          : { code: 40001, message: "Confirm it is you", status: 400, data: { reauthenticateWith: [] } },
      { reauthenticate: async () => ({ passkey: true }) },
    );
    const error = await client.passkeys.revoke("credential-4").catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ name: "AuthClientError", code: 40900 });
    expect(server.sentTo("/auth/public-key/credentials/credential-4")).toHaveLength(1);
  });
});

describe("client.registerWithPasskey against a scripted server (PL-15)", () => {
  const signUpBegin = "/auth/register/public-key/begin";
  const signUpFinish = "/auth/register/public-key/finish";
  const attestation = {
    id: "credential-9",
    rawId: "credential-9",
    type: "public-key" as const,
    response: { clientDataJSON: "e30", attestationObject: "AA" },
    clientExtensionResults: {},
  };

  /** A client whose server answers the sign-up's begin and finish from `answers`, and whose authenticator runs `register`. */
  function signUpClient(
    answers: { begin?: ScriptedAnswer; finish?: ScriptedAnswer } = {},
    register: PasskeyCeremonies["startRegistration"] = async () => attestation,
  ) {
    const server = scriptedServer((request) =>
      request.path === signUpBegin
        ? (answers.begin ?? {
            code: 0,
            data: { ceremonyId: "ceremony-9", options: { challenge: "Y2g", user: { id: "aGFuZGxl" } } },
          })
        : (answers.finish ?? { code: 0, data: { ...tokenSet(1), deviceToken: "device-1" } }),
    );
    const registered: unknown[] = [];
    const passkeyCeremonies: PasskeyCeremonies = {
      startAuthentication: () => Promise.reject(new Error("no sign-in in these tests")),
      startRegistration: async (options) => {
        registered.push(options);
        return register(options);
      },
    };
    const client = createAuthClient({ baseUrl: scriptedBaseUrl, fetch: server.fetch, passkeyCeremonies });
    return { client, server, registered };
  }

  it("PL-15: begins with the username and what else is given, runs the registration with the server's options, finishes with the ceremony header; signed in", async () => {
    const { client, server, registered } = signUpClient();
    const signedIn: unknown[] = [];
    client.on("signedIn", (detail) => signedIn.push(detail));
    expect(await client.registerWithPasskey({ username: "newcomer", email: "n@example.com" })).toEqual({
      status: "authenticated",
      user: scriptedUser,
      offerPasskey: false,
    });
    expect(registered).toEqual([{ optionsJSON: { challenge: "Y2g", user: { id: "aGFuZGxl" } } }]);
    expect(server.sent.map(({ method, path, body }) => [method, path, body])).toEqual([
      ["POST", signUpBegin, { username: "newcomer", email: "n@example.com" }],
      ["POST", signUpFinish, attestation],
    ]);
    expect(server.sentTo(signUpFinish)[0]?.headers.get("x-webauthn-ceremony")).toBe("ceremony-9");
    expect(server.sentTo(signUpFinish)[0]?.authorization).toBeNull();
    expect(signedIn).toEqual([{ user: scriptedUser }]);
    expect(await client.accessToken()).toBe("access-1");
    await client.registerWithPasskey({ username: "other", label: "Phone", fields: { company: "Acme" } });
    expect(server.sentTo(signUpBegin)[1]?.body).toEqual({ username: "other", label: "Phone", fields: { company: "Acme" } });
  });

  it("PL-16: a refused begin (40900 taken, 40400 off) rejects before any prompt; a dismissed prompt sends no finish; nothing is signed in", async () => {
    for (const code of [40900, 40400]) {
      const { client, server, registered } = signUpClient({ begin: { code, message: "No", status: Math.floor(code / 100) } });
      const error = await client.registerWithPasskey({ username: "taken" }).catch((thrown: unknown) => thrown);
      expect(error).toMatchObject({ kind: "server", code });
      expect(registered).toEqual([]);
      expect(server.sentTo(signUpFinish)).toEqual([]);
      expect(await client.currentUser()).toBeNull();
    }
    const dismissed = signUpClient({}, async () => {
      throw new DOMException("The operation either timed out or was not allowed.", "NotAllowedError");
    });
    const error = await dismissed.client.registerWithPasskey({ username: "newcomer" }).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ kind: "passkey_ceremony", message: "The passkey ceremony did not complete (NotAllowedError)" });
    expect(dismissed.server.sentTo(signUpFinish)).toEqual([]);
    expect(await dismissed.client.currentUser()).toBeNull();
  });

  it("STUP-4: a 40105 answer is an enrolment step; a refused finish rejects with its code", async () => {
    const enrolling = signUpClient({ finish: { code: 40105, data: { tempToken: "temp-1" } } });
    expect((await enrolling.client.registerWithPasskey({ username: "newcomer" })).status).toBe("enrolment_required");
    expect(await enrolling.client.currentUser()).toBeNull();
    const refused = signUpClient({ finish: { code: 40100, message: "The passkey could not be registered", status: 401 } });
    const error = await refused.client.registerWithPasskey({ username: "newcomer" }).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ kind: "server", code: 40100 });
  });
});
