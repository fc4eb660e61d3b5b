// @vitest-environment happy-dom
import type { AuthClient } from "@portcullis/client";
import { createAuthClient } from "@portcullis/client";
import { act, createElement } from "react";
import { type Root, createRoot } from "react-dom/client";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type ScriptedRequest,
  scriptedBaseUrl,
  scriptedServer,
  scriptedUser,
  signedInScriptedClient,
  tokenSet,
} from "../../client/src/scripted-server.test-support.js";
import { AuthProvider, usePasskeys, useSession, useSessions, useSignIn, useStepUp } from "./index.js";

type Hooks = {
  useSession: ReturnType<typeof useSession>;
  useSignIn: ReturnType<typeof useSignIn>;
  usePasskeys: ReturnType<typeof usePasskeys>;
  useSessions: ReturnType<typeof useSessions>;
  useStepUp: ReturnType<typeof useStepUp>;
};

let root: Root | null = null;

beforeAll(() => {
  (globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
});

afterEach(async () => {
  await act(async () => root?.unmount());
  root = null;
});

/** happy-dom's document (the project's TypeScript has no DOM library). */
const page = globalThis as unknown as { document: { createElement(tag: "div"): Parameters<typeof createRoot>[0] } };

/** What every hook answered at the last render of {@link Probe}. */
let latest: Hooks | null = null;

/** Renders nothing; keeps what every hook answered in `latest`. */
function Probe() {
  latest = {
    useSession: useSession(),
    useSignIn: useSignIn(),
    usePasskeys: usePasskeys(),
    useSessions: useSessions(),
    useStepUp: useStepUp(),
  };
  return null;
}

/** Renders every hook under a provider of `client`; `now()` is what they answered at the last render. */
async function renderHooks(client: AuthClient) {
  latest = null;
  root = createRoot(page.document.createElement("div"));
  await act(async () => root?.render(createElement(AuthProvider, { client }, createElement(Probe))));
  const now = () => latest as unknown as Hooks;
  /** Lets the client's requests and React's updates settle until `ready` holds (a bounded number of turns). */
  const until = async (ready: (hooks: Hooks) => boolean) => {
    for (let turn = 0; turn < 200 && !ready(now()); turn++) {
      await act(async () => {
        await new Promise((resolve) => setTimeout(resolve, 0));
      });
    }
    expect(ready(now())).toBe(true);
  };
  return { now, until };
}

const sessionInfo = (id: string, current: boolean) => ({
  id,
  current,
  createdAt: 0,
  lastUsedAt: 0,
  expiresAt: 1,
  amr: ["pwd"],
  userAgent: null,
  address: null,
  impersonatedBy: null,
});

/** A server whose alice has TOTP on (code 123456), two sessions, and one route asking for a recent sign-in. */
function totpServer() {
  let sessions = [sessionInfo("s-1", true), sessionInfo("s-2", false)];
  let proven = false;
  let wrongCodes = 0;
  const server = scriptedServer((request: ScriptedRequest) => {
    const body = request.body as Record<string, string> | undefined;
    switch (`${request.method} ${request.path}`) {
      case "POST /auth/login":
        return { code: 40102, status: 401, data: { tempToken: "temp" } };
      case "POST /auth/2fa/verify":
        if (body?.code === "123456") return { code: 0, data: tokenSet(1) };
        wrongCodes++;
        return wrongCodes >= 3 ? { code: 40100, status: 401 } : { code: 40103, status: 401 };
      case "GET /auth/sessions":
        return { code: 0, data: sessions };
      case "DELETE /auth/sessions/s-2":
        sessions = sessions.filter((session) => session.id !== "s-2");
        return { code: 0 };
      case "GET /auth/public-key/credentials":
        return { code: 0, data: [] };
      case "POST /auth/reauthenticate":
        if (body?.password !== "right") return { code: 40100, status: 401 };
        proven = true;
        return { code: 0, data: tokenSet(2) };
      case "GET /payouts":
        return proven ? { code: 0, data: { paid: true } } : { code: 40104, status: 401, data: { required: { maxAge: 300 } } };
      default:
        return { code: 40400, status: 404 };
    }
  });
  const client = createAuthClient({ baseUrl: scriptedBaseUrl, fetch: server.fetch });
  return { client, server };
}

describe("hooks in a rendered tree", () => {
  it("reads a session the client already holds with no refresh or /me, then reads the lists", async () => {
    const { client, server } = await signedInScriptedClient(() => ({ code: 0, data: [] }));
    const sentBefore = server.sent.length;
    const { now, until } = await renderHooks(client);
    await until((hooks) => hooks.useSession.status === "signedIn" && !hooks.useSessions.loading);
    expect(now().useSession).toEqual({ status: "signedIn", user: scriptedUser });
    expect(server.sent.slice(sentBefore).map((request) => request.path)).toEqual(
      expect.arrayContaining(["/auth/sessions", "/auth/public-key/credentials"]),
    );
    expect(server.sent.slice(sentBefore).map((request) => request.path)).not.toContain("/auth/refresh");
    expect(server.sent.slice(sentBefore).map((request) => request.path)).not.toContain("/auth/me");
  });

  it("signs in through the 40102 step: a wrong code keeps the step, the right one signs the session in", async () => {
    const { client } = totpServer();
    const { now, until } = await renderHooks(client);
    await until((hooks) => hooks.useSession.status === "signedOut");
    expect(now().useSignIn.step).toBe("credentials");

    await act(async () => {
      await now().useSignIn.signIn({ username: "alice", password: "pw" });
    });
    expect(now().useSignIn.step).toBe("totp_required");
    expect(now().useSession.status).toBe("signedOut");

    await act(async () => {
      expect(await now().useSignIn.verifyTotp("000000")).toBeNull();
    });
    expect(now().useSignIn.step).toBe("totp_required");
    expect(now().useSignIn.error?.code).toBe(40103);

    await act(async () => {
      await now().useSignIn.verifyTotp("123456");
    });
    expect(now().useSignIn.step).toBe("authenticated");
    expect(now().useSignIn.error).toBeNull();
    expect(now().useSession).toEqual({ status: "signedIn", user: scriptedUser });
  });

  it("goes back to the credentials when the step is void (40100), keeping the error", async () => {
    const { client } = totpServer();
    const { now, until } = await renderHooks(client);
    await until((hooks) => hooks.useSession.status === "signedOut");
    await act(async () => {
      await now().useSignIn.signIn({ username: "alice", password: "pw" });
    });
    for (const code of ["000001", "000002"]) {
      await act(async () => {
        await now().useSignIn.verifyTotp(code);
      });
    }
    expect(now().useSignIn.step).toBe("totp_required");
    await act(async () => {
      await now().useSignIn.verifyTotp("000003");
    });
    expect(now().useSignIn.step).toBe("credentials");
    expect(now().useSignIn.error?.code).toBe(40100);
  });

  it("enrols TOTP in the 40105 step: the secret, then the code signs in and answers the recovery codes once", async () => {
    const server = scriptedServer((request: ScriptedRequest) => {
      switch (request.path) {
        case "/auth/login":
          return { code: 40105, status: 401, data: { tempToken: "enrol" } };
        case "/auth/2fa/enrolment/setup":
          return { code: 0, data: { secret: "JBSWY3DP", otpauthUrl: "otpauth://totp/x?secret=JBSWY3DP" } };
        case "/auth/2fa/enrolment/enable":
          return (request.body as { code?: string }).code === "123456"
            ? { code: 0, data: { ...tokenSet(1), recoveryCodes: ["AAAA-BBBB"] } }
            : { code: 40103, status: 401 };
        default:
          return { code: 0, data: [] };
      }
    });
    const { now, until } = await renderHooks(createAuthClient({ baseUrl: scriptedBaseUrl, fetch: server.fetch }));
    await until((hooks) => hooks.useSession.status === "signedOut");
    await act(async () => {
      await now().useSignIn.signIn({ username: "alice", password: "pw" });
    });
    expect(now().useSignIn.step).toBe("enrolment_required");
    await act(async () => {
      await now().useSignIn.setupTotp();
    });
    expect(now().useSignIn.totpSetup?.secret).toBe("JBSWY3DP");
    await act(async () => {
      await now().useSignIn.enableTotp("000000");
    });
    expect([now().useSignIn.step, now().useSignIn.error?.code]).toEqual(["enrolment_required", 40103]);
    await act(async () => {
      await now().useSignIn.enableTotp("123456");
    });
    expect(now().useSignIn.step).toBe("authenticated");
    expect(now().useSignIn.recoveryCodes).toEqual(["AAAA-BBBB"]);
    expect(server.sentTo("/auth/2fa/enrolment/enable").map((request) => request.body)).toEqual([
      { tempToken: "enrol", code: "000000" },
      { tempToken: "enrol", code: "123456" },
    ]);
    expect(now().useSession.status).toBe("signedIn");
    act(() => now().useSignIn.reset());
    expect([now().useSignIn.step, now().useSignIn.recoveryCodes, now().useSignIn.totpSetup]).toEqual(["credentials", null, null]);
  });

  it("lists the sessions once signed in, ends one and lists again, and empties the lists on sign-out", async () => {
    const { client, server } = totpServer();
    const { now, until } = await renderHooks(client);
    await until((hooks) => hooks.useSession.status === "signedOut");
    expect(server.sentTo("/auth/sessions")).toHaveLength(0);
    await act(async () => {
      await now().useSignIn.signIn({ username: "alice", password: "pw" });
      await now().useSignIn.verifyTotp("123456");
    });
    await until((hooks) => !hooks.useSessions.loading && !hooks.usePasskeys.loading);
    expect(now().useSessions.sessions.map((session) => session.id)).toEqual(["s-1", "s-2"]);
    expect(now().usePasskeys.passkeys).toEqual([]);

    await act(async () => {
      await now().useSessions.end("s-2");
    });
    expect(now().useSessions.sessions.map((session) => session.id)).toEqual(["s-1"]);

    await act(async () => {
      await client.logout().catch(() => {});
    });
    expect(now().useSession).toEqual({ status: "signedOut", user: null, reason: "logout" });
    expect(now().useSessions.sessions).toEqual([]);
  });

  it("holds a 40104 for the step-up dialog: a wrong password keeps it open, the right one sends the request again", async () => {
    const { client } = totpServer();
    const { now, until } = await renderHooks(client);
    await act(async () => {
      await now().useSignIn.signIn({ username: "alice", password: "pw" });
      await now().useSignIn.verifyTotp("123456");
    });
    expect(now().useStepUp).toBeNull();
    const answer = client.fetch(`${scriptedBaseUrl}/payouts`);
    await until((hooks) => hooks.useStepUp !== null);
    expect(now().useStepUp?.required).toEqual({ maxAge: 300 });

    await act(async () => {
      expect(await now().useStepUp?.reauthenticate({ password: "wrong" })).toBe(false);
    });
    expect(now().useStepUp?.error?.code).toBe(40100);

    await act(async () => {
      expect(await now().useStepUp?.reauthenticate({ password: "right" })).toBe(true);
    });
    expect(now().useStepUp).toBeNull();
    expect(await (await answer).json()).toMatchObject({ code: 0, data: { paid: true } });
  });

  it("answers the 40104 at once when the dialog cancels, and when no dialog is mounted", async () => {
    const { client } = totpServer();
    const { now, until } = await renderHooks(client);
    await act(async () => {
      await now().useSignIn.signIn({ username: "alice", password: "pw" });
      await now().useSignIn.verifyTotp("123456");
    });
    const cancelled = client.fetch(`${scriptedBaseUrl}/payouts`);
    await until((hooks) => hooks.useStepUp !== null);
    act(() => now().useStepUp?.cancel());
    expect((await cancelled).status).toBe(401);
    expect(now().useStepUp).toBeNull();

    const waiting = client.fetch(`${scriptedBaseUrl}/payouts`);
    await until((hooks) => hooks.useStepUp !== null);
    await act(async () => root?.unmount());
    root = null;
    expect((await waiting).status).toBe(401);
    expect((await client.fetch(`${scriptedBaseUrl}/payouts`)).status).toBe(401);
  });
});
