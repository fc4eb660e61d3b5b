import type { RegistrationResponseJSON } from "@simplewebauthn/browser";
import { describe, expect, it, vi } from "vitest";
import { createAuthClient } from "./client.js";
import type { AuthClientError } from "./errors.js";
import type { PasskeyCeremonies } from "./passkeys.js";
import { type ScriptedAnswer, scriptedBaseUrl, scriptedServer, scriptedUser, tokenSet } from "./scripted-server.test-support.js";
import { memoryTokenStore } from "./token-store.js";

const attestation: RegistrationResponseJSON = {
  id: "credential-1",
  rawId: "credential-1",
  type: "public-key",
  response: { clientDataJSON: "e30", attestationObject: "AA", transports: ["internal"] },
  clientExtensionResults: {},
};

const passkey = {
  id: "credential-1",
  label: "Laptop",
  transports: ["internal"],
  createdAt: 0,
  lastUsedAt: null,
  backupEligible: false,
  backupState: false,
};

const recoveryCodes = ["AAAA-BBBB-CCCC-DDDD-EEEE-FFFF"];

/** A client whose server answers `answers` by path (40400 elsewhere), with a registration ceremony that answers {@link attestation}. */
function clientAnswering(answers: Record<string, ScriptedAnswer>) {
  const server = scriptedServer((request) => answers[request.path] ?? { code: 40400, message: "No such route", status: 404 });
  const registrations: unknown[] = [];
  const passkeyCeremonies: PasskeyCeremonies = {
    startAuthentication: () => Promise.reject(new Error("no sign-in ceremony here")),
    startRegistration: async (options) => {
      registrations.push(options);
      return attestation;
    },
  };
  const store = memoryTokenStore();
  const client = createAuthClient({ baseUrl: scriptedBaseUrl, fetch: server.fetch, passkeyCeremonies, store });
  const signedIn: unknown[] = [];
  client.on("signedIn", (detail) => signedIn.push(detail));
  return { client, server, registrations, store, signedIn };
}

const errorOf = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: unknown) => error as AuthClientError,
  );

const enrolmentAnswer: ScriptedAnswer = {
  code: 40105,
  message: "A second factor must be enrolled first",
  data: { tempToken: "enrol-1" },
};

describe("STUP-4: a sign-in that must enrol a second factor first (40105)", () => {
  it("STUP-4, ASVS 6.3.3: login answers enrolment_required; TOTP setup and enable send the temporary token, and enable signs in and answers the recovery codes, which are not stored", async () => {
    const { client, server, store, signedIn } = clientAnswering({
      "/auth/login": enrolmentAnswer,
      "/auth/2fa/enrolment/setup": { code: 0, data: { secret: "JBSWY3DPEHPK3PXP", otpauthUrl: "otpauth://totp/x" } },
      "/auth/2fa/enrolment/enable": { code: 0, data: { ...tokenSet(1), deviceToken: "device-1", recoveryCodes } },
    });
    const step = await client.login({ username: "alice", password: "pw" });
    expect(step.status).toBe("enrolment_required");
    if (step.status !== "enrolment_required") return;
    expect(JSON.stringify(step)).not.toContain("enrol-1");
    expect(await step.setupTotp()).toEqual({ secret: "JBSWY3DPEHPK3PXP", otpauthUrl: "otpauth://totp/x" });
    expect(await client.accessToken()).toBeNull();
    expect(await step.enableTotp("123456")).toEqual({
      status: "authenticated",
      user: scriptedUser,
      offerPasskey: false,
      recoveryCodes,
    });
    expect(signedIn).toEqual([{ user: scriptedUser }]);
    expect(await client.accessToken()).toBe("access-1");
    expect(JSON.stringify(await store.load())).not.toContain(recoveryCodes[0]);
    expect(server.sent.map(({ path, body, authorization }) => [path, body, authorization])).toEqual([
      ["/auth/login", { username: "alice", password: "pw" }, null],
      ["/auth/2fa/enrolment/setup", { tempToken: "enrol-1" }, null],
      ["/auth/2fa/enrolment/enable", { tempToken: "enrol-1", code: "123456" }, null],
    ]);
    await client.login({ username: "alice", password: "pw" });
    expect(server.sent.at(-1)?.body).toEqual({ username: "alice", password: "pw", deviceToken: "device-1" });
  });

  it("STUP-4, ASVS 6.3.3: registerPasskey runs the registration ceremony between begin and finish, with the ceremony header and the temporary token, and signs in", async () => {
    const options = { challenge: "Y2hhbGxlbmdl", rp: { name: "Example" } };
    const { client, server, registrations } = clientAnswering({
      "/auth/login": enrolmentAnswer,
      "/auth/public-key/enrolment/begin": { code: 0, data: { ceremonyId: "ceremony-1", options } },
      "/auth/public-key/enrolment/finish": { code: 0, data: { ...tokenSet(2), passkey } },
    });
    const step = await client.login({ username: "alice", password: "pw" });
    if (step.status !== "enrolment_required") throw new Error(step.status);
    expect(await step.registerPasskey({ label: "Laptop" })).toEqual({
      status: "authenticated",
      user: scriptedUser,
      offerPasskey: false,
      passkey,
    });
    expect(registrations).toEqual([{ optionsJSON: options }]);
    const [begin, finish] = server.sent.slice(1);
    expect(begin?.body).toEqual({ tempToken: "enrol-1", label: "Laptop" });
    expect(finish?.body).toEqual({ tempToken: "enrol-1", response: attestation });
    expect(finish?.headers.get("x-webauthn-ceremony")).toBe("ceremony-1");
    expect(await client.accessToken()).toBe("access-2");
  });

  it("STUP-4: a wrong code rejects with 40103 and the step may be tried again; a void token rejects with 40100; nothing is stored", async () => {
    const answers: Record<string, ScriptedAnswer> = {
      "/auth/login": enrolmentAnswer,
      "/auth/2fa/enrolment/enable": { code: 40103, message: "Wrong", status: 401 },
    };
    const { client } = clientAnswering(answers);
    const step = await client.login({ username: "alice", password: "pw" });
    if (step.status !== "enrolment_required") throw new Error(step.status);
    expect((await errorOf(step.enableTotp("000000")))?.code).toBe(40103);
    answers["/auth/2fa/enrolment/enable"] = { code: 40100, message: "Expired", status: 401 };
    expect((await errorOf(step.enableTotp("123456")))?.code).toBe(40100);
    expect(await client.currentUser()).toBeNull();
  });

  it("STUP-4: an enrolment's success without its recovery codes, or without its passkey, is invalid_response and stores nothing", async () => {
    const { client } = clientAnswering({
      "/auth/login": enrolmentAnswer,
      "/auth/2fa/enrolment/enable": { code: 0, data: tokenSet(1) },
      "/auth/public-key/enrolment/begin": { code: 0, data: { ceremonyId: "ceremony-1", options: { challenge: "Y2g" } } },
      "/auth/public-key/enrolment/finish": { code: 0, data: tokenSet(2) },
    });
    const step = await client.login({ username: "alice", password: "pw" });
    if (step.status !== "enrolment_required") throw new Error(step.status);
    expect((await errorOf(step.enableTotp("123456")))?.kind).toBe("invalid_response");
    expect((await errorOf(step.registerPasskey({ label: "Laptop" })))?.kind).toBe("invalid_response");
    expect(await client.accessToken()).toBeNull();
  });

  it("STUP-4: a 40105 without a temporary token is invalid_response", async () => {
    for (const data of [undefined, {}, { tempToken: 7 }]) {
      const { client } = clientAnswering({ "/auth/login": { code: 40105, message: "Enrol", data } });
      expect((await errorOf(client.login({ username: "alice", password: "pw" })))?.kind).toBe("invalid_response");
    }
  });

  it("STUP-4: sign-up, a passkey sign-in and a provider's callback may answer the enrolment step too", async () => {
    const { client } = clientAnswering({
      "/auth/register": enrolmentAnswer,
      "/auth/oauth/corp/callback?code=c&state=s": { ...enrolmentAnswer, data: { tempToken: "enrol-1", returnPath: "/home" } },
    });
    expect((await client.register({ username: "newcomer", password: "pw" })).status).toBe("enrolment_required");
    const replaced: (string | undefined)[] = [];
    vi.stubGlobal("history", { replaceState: (_data: unknown, _unused: string, url?: string) => replaced.push(url) });
    try {
      const finished = await client.oauth.finish({ url: "https://app.example.com/cb?code=c&state=s", provider: "corp" });
      expect(finished).toMatchObject({ status: "enrolment_required", returnPath: "/home" });
      expect(replaced).toEqual(["/home"]);
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
