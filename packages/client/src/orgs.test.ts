import { describe, expect, it, vi } from "vitest";
import { AuthClientError } from "./errors.js";
import type { Organization } from "./orgs.js";
import { activeOrganizationOf } from "./orgs.js";
import { type ScriptedAnswer, type ScriptedRequest, signedInScriptedClient, tokenSet } from "./scripted-server.test-support.js";

/** An access token shaped like the server's (a JWT), whose payload holds `claims`; the client checks no signature. */
function jwtWith(claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "HS256", typ: "at+jwt" })}.${part(claims)}.c2lnbmF0dXJl`;
}

const noOrgToken = jwtWith({ sub: "user-1", sid: "session-1" });
const acmeToken = jwtWith({ sub: "user-1", sid: "session-1", org: "org/1", org_roles: ["owner"] });

const acme: Organization = {
  id: "org/1",
  slug: "acme",
  name: "Acme",
  rules: { requireSecondFactor: false, signInMethods: null },
  createdAt: 1,
  roles: ["owner"],
};

const switched = (accessToken: string, org: unknown) => ({
  code: 0,
  data: { accessToken, tokenType: "Bearer", expiresIn: 900, org },
});
const reauthenticationNeeded = { code: 40001, message: "Confirm it is you", status: 400 };

/** A client signed in with `accessToken` (no organization by default) to a scripted server whose other routes `route` answers. */
const signedInOrgsClient = (
  route: (request: ScriptedRequest) => ScriptedAnswer | Promise<ScriptedAnswer>,
  options: Parameters<typeof signedInScriptedClient>[1] = {},
) => signedInScriptedClient(route, { accessToken: noOrgToken, ...options });

describe("client.orgs: the organization routes", () => {
  it("lists, creates, reads, updates and joins with the bearer token, ids encoded in the path", async () => {
    const { client, server } = await signedInOrgsClient(({ method, path }) => ({
      code: 0,
      data: method === "GET" && (path === "/auth/orgs" || path === "/auth/orgs/joinable") ? [acme] : acme,
    }));
    expect(await client.orgs.list()).toEqual([acme]);
    expect(await client.orgs.joinable()).toEqual([acme]);
    expect(await client.orgs.create({ name: "Acme" })).toEqual(acme);
    await client.orgs.create({ name: "Acme", slug: "acme-2" });
    expect(await client.orgs.get("org/1")).toEqual(acme);
    await client.orgs.update("org/1", { name: "Acme Ltd" });
    await client.orgs.join("org/1");
    expect(server.sent.slice(1).map(({ method, path, body, authorization }) => [method, path, body, authorization])).toEqual([
      ["GET", "/auth/orgs", undefined, `Bearer ${noOrgToken}`],
      ["GET", "/auth/orgs/joinable", undefined, `Bearer ${noOrgToken}`],
      ["POST", "/auth/orgs", { name: "Acme" }, `Bearer ${noOrgToken}`],
      ["POST", "/auth/orgs", { name: "Acme", slug: "acme-2" }, `Bearer ${noOrgToken}`],
      ["GET", "/auth/orgs/org%2F1", undefined, `Bearer ${noOrgToken}`],
      ["PATCH", "/auth/orgs/org%2F1", { name: "Acme Ltd" }, `Bearer ${noOrgToken}`],
      ["POST", "/auth/orgs/org%2F1/join", {}, `Bearer ${noOrgToken}`],
    ]);
  });

  it("OR-2: a 40400 (not a member, exactly as an unknown id) rejects with the server's code", async () => {
    const { client } = await signedInOrgsClient(() => ({ code: 40400, message: "No such organization", status: 404 }));
    await expect(client.orgs.get("org-2")).rejects.toMatchObject({ kind: "server", code: 40400, status: 404 });
  });

  it("a signed-out client sends nothing and rejects not_signed_in", async () => {
    const { client, server } = await signedInOrgsClient(() => ({ code: 0, data: { ended: 1 } }));
    await client.sessions.endAll();
    const before = server.sent.length;
    await expect(client.orgs.list()).rejects.toMatchObject({ kind: "not_signed_in" });
    await expect(client.orgs.members.leave("org/1")).rejects.toMatchObject({ kind: "not_signed_in" });
    expect(server.sent.length).toBe(before);
  });
});

describe("client.orgs.switch and active", () => {
  it("OR-7: stores the new access token, keeps the refresh token, emits nothing; active() reads org and org_roles", async () => {
    const { client, server, signedOut } = await signedInOrgsClient(({ path }) =>
      path === "/auth/orgs/active" ? switched(acmeToken, { id: "org/1", roles: ["owner"] }) : { code: 0, data: tokenSet(2) },
    );
    const signedIn = vi.fn();
    client.on("signedIn", signedIn);
    expect(await client.orgs.active()).toBeNull();
    expect(await client.orgs.switch("org/1")).toEqual({ id: "org/1", roles: ["owner"] });
    expect(server.sentTo("/auth/orgs/active").map(({ method, body, authorization }) => [method, body, authorization])).toEqual([
      ["POST", { orgId: "org/1" }, `Bearer ${noOrgToken}`],
    ]);
    expect(await client.accessToken()).toBe(acmeToken);
    expect(await client.orgs.active()).toEqual({ id: "org/1", roles: ["owner"] });
    expect((await client.currentUser())?.id).toBe("user-1");
    await client.refresh();
    expect(server.sentTo("/auth/refresh").map(({ body }) => body)).toEqual([{ refreshToken: "refresh-1" }]);
    expect([signedIn.mock.calls, signedOut]).toEqual([[], []]);
  });

  it("a switch answered while a refresh is under way keeps the refresh token that refresh stored, not the one it replaced", async () => {
    let releaseRefresh: () => void = () => {};
    const refreshHeld = new Promise<void>((resolve) => {
      releaseRefresh = resolve;
    });
    let refreshes = 0;
    const { client, server } = await signedInOrgsClient(async ({ path }) => {
      if (path !== "/auth/refresh") return switched(acmeToken, { id: "org/1", roles: ["owner"] });
      refreshes += 1;
      if (refreshes === 1) await refreshHeld;
      return { code: 0, data: { ...tokenSet(refreshes + 1), accessToken: noOrgToken } };
    });
    const refreshing = client.refresh();
    const switching = client.orgs.switch("org/1");
    await vi.waitFor(() => expect(server.sentTo("/auth/orgs/active")).toHaveLength(1));
    releaseRefresh();
    await Promise.all([refreshing, switching]);
    expect(await client.accessToken()).toBe(acmeToken);
    await client.refresh();
    expect(server.sentTo("/auth/refresh").map(({ body }) => body)).toEqual([
      { refreshToken: "refresh-1" },
      { refreshToken: "refresh-2" },
    ]);
  });

  it("switch(null) sends orgId null and leaves the session without an organization", async () => {
    const { client, server } = await signedInOrgsClient(() => switched(noOrgToken, null), { accessToken: acmeToken });
    expect(await client.orgs.active()).toEqual({ id: "org/1", roles: ["owner"] });
    expect(await client.orgs.switch(null)).toBeNull();
    expect(server.sentTo("/auth/orgs/active").map(({ body }) => body)).toEqual([{ orgId: null }]);
    expect(await client.orgs.active()).toBeNull();
  });

  it("a token refused (40101) before the switch is refreshed once, and the switch sent again with the renewed token", async () => {
    let refused = false;
    const { client, server } = await signedInOrgsClient(({ path, authorization }) => {
      if (path === "/auth/refresh") return { code: 0, data: { ...tokenSet(2), accessToken: noOrgToken.replace("c2ln", "bmV3") } };
      if (!refused && authorization === `Bearer ${noOrgToken}`) {
        refused = true;
        return { code: 40101, message: "Invalid token", status: 401 };
      }
      return switched(acmeToken, { id: "org/1", roles: ["owner"] });
    });
    await client.orgs.switch("org/1");
    expect(server.sent.slice(1).map(({ path }) => path)).toEqual(["/auth/orgs/active", "/auth/refresh", "/auth/orgs/active"]);
    expect(await client.accessToken()).toBe(acmeToken);
    await client.refresh();
    expect(server.sentTo("/auth/refresh").map(({ body }) => body)).toEqual([
      { refreshToken: "refresh-1" },
      { refreshToken: "refresh-2" },
    ]);
  });

  it("OR-9: a 40104 emits stepUpRequired; once the listener re-authenticated, the switch is sent once more with the new session's token", async () => {
    const stepUpToken = jwtWith({ sub: "user-1", sid: "session-2" });
    const { client, server } = await signedInOrgsClient(({ path, authorization }) => {
      if (path === "/auth/reauthenticate") return { code: 0, data: { ...tokenSet(3), accessToken: stepUpToken } };
      return authorization === `Bearer ${stepUpToken}`
        ? switched(acmeToken, { id: "org/1", roles: ["owner"] })
        : {
            code: 40104,
            message: "This organization requires a second factor",
            status: 401,
            data: { required: { amr: ["mfa"] }, enrolmentRequired: false },
          };
    });
    const required: unknown[] = [];
    client.on("stepUpRequired", (step) => {
      required.push(step.required);
      void step.reauthenticate({ password: "pw", totpCode: "123456" });
    });
    expect(await client.orgs.switch("org/1")).toEqual({ id: "org/1", roles: ["owner"] });
    expect(required).toEqual([{ amr: ["mfa"] }]);
    expect(server.sent.slice(1).map(({ path }) => path)).toEqual([
      "/auth/orgs/active",
      "/auth/reauthenticate",
      "/auth/orgs/active",
    ]);
    expect(await client.orgs.active()).toEqual({ id: "org/1", roles: ["owner"] });
  });

  it("OR-9: the 40104 is thrown, with its data, without a listener, when it cancels, or when the user must enrol first (no event)", async () => {
    const answer = (enrolmentRequired: boolean) => () => ({
      code: 40104,
      message: "This organization requires a second factor",
      status: 401,
      data: { required: { amr: ["mfa"] }, enrolmentRequired },
    });
    const alone = await signedInOrgsClient(answer(false));
    await expect(alone.client.orgs.switch("org/1")).rejects.toMatchObject({ code: 40104, data: { required: { amr: ["mfa"] } } });

    const cancelling = await signedInOrgsClient(answer(false));
    cancelling.client.on("stepUpRequired", (step) => step.cancel());
    await expect(cancelling.client.orgs.switch("org/1")).rejects.toMatchObject({ code: 40104 });
    expect(cancelling.server.sentTo("/auth/orgs/active")).toHaveLength(1);

    const enrolling = await signedInOrgsClient(answer(true));
    const listener = vi.fn();
    enrolling.client.on("stepUpRequired", listener);
    await expect(enrolling.client.orgs.switch("org/1")).rejects.toMatchObject({ code: 40104, data: { enrolmentRequired: true } });
    expect(listener).not.toHaveBeenCalled();
    expect(await enrolling.client.orgs.active()).toBeNull();
  });

  it("OR-10: a 40300 carries the organization's sign-in methods in error.data; the stored token stays", async () => {
    const { client } = await signedInOrgsClient(() => ({
      code: 40300,
      message: "This organization allows other ways of signing in",
      status: 403,
      data: { signInMethods: ["passkey"] },
    }));
    const error = await client.orgs.switch("org/1").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AuthClientError);
    expect((error as AuthClientError).data).toEqual({ signInMethods: ["passkey"] });
    expect(await client.accessToken()).toBe(noOrgToken);
  });

  it("an answer without an access token is invalid_response and keeps the stored token", async () => {
    const { client } = await signedInOrgsClient(() => ({ code: 0, data: { org: null } }));
    await expect(client.orgs.switch(null)).rejects.toMatchObject({ kind: "invalid_response" });
    expect(await client.accessToken()).toBe(noOrgToken);
  });

  it("active() is null for a token that is no JWT, or whose org claims are of the wrong shape; signed out, null", async () => {
    for (const token of [
      "access-1",
      "a.%%%.c",
      jwtWith({ org: "org-1" }),
      jwtWith({ org: 1, org_roles: [] }),
      jwtWith({ org: "org-1", org_roles: [1] }),
    ]) {
      expect(activeOrganizationOf(token)).toBeNull();
    }
    expect(activeOrganizationOf(jwtWith({ org: "org-1", org_roles: [], note: "ÿÿÿ~~~" }))).toEqual({ id: "org-1", roles: [] });
    const { client } = await signedInOrgsClient(() => ({ code: 0, data: { ended: 1 } }), { accessToken: acmeToken });
    await client.sessions.endAll();
    expect(await client.orgs.active()).toBeNull();
  });
});

describe("client.orgs.members", () => {
  const member = { userId: "user-2", username: "bob", email: null, roles: ["member"], joinedAt: 2 };

  it("lists a page with cursor and limit in the query, and none without them", async () => {
    const { client, server } = await signedInOrgsClient(() => ({ code: 0, data: { members: [member], nextCursor: "c/2" } }));
    expect(await client.orgs.members.list("org/1")).toEqual({ members: [member], nextCursor: "c/2" });
    await client.orgs.members.list("org/1", { cursor: "c/2", limit: 50 });
    expect(server.sent.slice(1).map(({ method, path }) => [method, path])).toEqual([
      ["GET", "/auth/orgs/org%2F1/members"],
      ["GET", "/auth/orgs/org%2F1/members?cursor=c%2F2&limit=50"],
    ]);
  });

  it("OR-4: changes roles with PATCH, the proof in the body when given", async () => {
    const { client, server } = await signedInOrgsClient(() => ({ code: 0, data: { ...member, roles: ["admin"] } }));
    expect(await client.orgs.members.changeRoles("org/1", "user/2", ["admin"])).toEqual({ ...member, roles: ["admin"] });
    await client.orgs.members.changeRoles("org/1", "user/2", ["member"], { password: "pw" });
    expect(server.sent.slice(1).map(({ method, path, body }) => [method, path, body])).toEqual([
      ["PATCH", "/auth/orgs/org%2F1/members/user%2F2", { roles: ["admin"] }],
      ["PATCH", "/auth/orgs/org%2F1/members/user%2F2", { roles: ["member"], password: "pw" }],
    ]);
  });

  it("a 40001 asks reauthenticate once (changeRoles, remove, the organization's deletion), and sends the request once more with the proof", async () => {
    const reauthenticate = vi.fn(() => ({ password: "pw", totpCode: "123456" }));
    const { client, server } = await signedInOrgsClient(
      ({ body }) =>
        (body as { password?: string } | undefined)?.password
          ? { code: 0, data: { ...member, removed: true, deleted: true } }
          : reauthenticationNeeded,
      { reauthenticate },
    );
    await client.orgs.members.changeRoles("org/1", "user-2", ["admin"]);
    await client.orgs.members.remove("org/1", "user-2");
    await client.orgs.remove("org/1");
    expect(reauthenticate.mock.calls).toEqual([
      [{ operation: "orgs.members.changeRoles", accepts: ["password", "totpCode"] }],
      [{ operation: "orgs.members.remove", accepts: ["password", "totpCode"] }],
      [{ operation: "orgs.remove", accepts: ["password", "totpCode"] }],
    ]);
    expect(server.sent.slice(1).map(({ method, path, body }) => [method, path, body])).toEqual([
      ["PATCH", "/auth/orgs/org%2F1/members/user-2", { roles: ["admin"] }],
      ["PATCH", "/auth/orgs/org%2F1/members/user-2", { roles: ["admin"], password: "pw", totpCode: "123456" }],
      ["DELETE", "/auth/orgs/org%2F1/members/user-2", undefined],
      ["DELETE", "/auth/orgs/org%2F1/members/user-2", { password: "pw", totpCode: "123456" }],
      ["DELETE", "/auth/orgs/org%2F1", undefined],
      ["DELETE", "/auth/orgs/org%2F1", { password: "pw", totpCode: "123456" }],
    ]);
  });

  it("without reauthenticate, or when it gives nothing, the 40001 rejects after one request", async () => {
    const { client, server } = await signedInOrgsClient(() => reauthenticationNeeded, { reauthenticate: () => null });
    await expect(client.orgs.members.remove("org/1", "user-2")).rejects.toMatchObject({ code: 40001 });
    expect(server.sent).toHaveLength(2);
  });

  it("leave deletes the user's own membership (no proof) and, from the active organization, refreshes to a token without it", async () => {
    const { client, server } = await signedInOrgsClient(
      ({ path }) =>
        path === "/auth/refresh"
          ? { code: 0, data: { ...tokenSet(2), accessToken: noOrgToken } }
          : { code: 0, data: { removed: true } },
      { accessToken: acmeToken },
    );
    await client.orgs.members.leave("org/2");
    expect(server.sentTo("/auth/refresh")).toHaveLength(0);
    await client.orgs.members.leave("org/1");
    expect(server.sent.slice(1).map(({ method, path, body }) => [method, path, body])).toEqual([
      ["DELETE", "/auth/orgs/org%2F2/members/user-1", undefined],
      ["DELETE", "/auth/orgs/org%2F1/members/user-1", undefined],
      ["POST", "/auth/refresh", { refreshToken: "refresh-1" }],
    ]);
    expect(await client.orgs.active()).toBeNull();
  });

  it("removing another member of the active organization refreshes nothing; deleting the active organization refreshes", async () => {
    const { client, server } = await signedInOrgsClient(
      ({ path }) =>
        path === "/auth/refresh"
          ? { code: 0, data: { ...tokenSet(2), accessToken: noOrgToken } }
          : { code: 0, data: { removed: true } },
      { accessToken: acmeToken },
    );
    await client.orgs.members.remove("org/1", "user-2", { password: "pw" });
    expect(server.sentTo("/auth/refresh")).toHaveLength(0);
    await client.orgs.remove("org/1", { password: "pw" });
    expect(server.sentTo("/auth/refresh")).toHaveLength(1);
  });

  it("a change of the active organization's rules refreshes the tokens; of its name, not", async () => {
    const { client, server } = await signedInOrgsClient(
      ({ path }) =>
        path === "/auth/refresh" ? { code: 0, data: { ...tokenSet(2), accessToken: noOrgToken } } : { code: 0, data: acme },
      { accessToken: acmeToken },
    );
    await client.orgs.update("org/1", { name: "Acme Ltd" });
    expect(server.sentTo("/auth/refresh")).toHaveLength(0);
    await client.orgs.update("org/1", { rules: { requireSecondFactor: true } });
    expect(server.sentTo("/auth/orgs/org%2F1").map(({ body }) => body)).toEqual([
      { name: "Acme Ltd" },
      { rules: { requireSecondFactor: true } },
    ]);
    expect(server.sentTo("/auth/refresh")).toHaveLength(1);
  });
});

describe("client.orgs.invitations and domains", () => {
  const invitation = {
    id: "inv/1",
    email: "bob@example.com",
    roles: ["member"],
    invitedBy: "user-1",
    createdAt: 1,
    expiresAt: 2,
  };
  const domain = {
    domain: "example.com",
    recordName: "_portcullis-verification.example.com",
    recordValue: "v",
    createdAt: 1,
    verifiedAt: null,
  };

  it("OR-5: invites, lists, resends, revokes and accepts on their routes", async () => {
    const { client, server } = await signedInOrgsClient(({ method, path }) => ({
      code: 0,
      data: method === "GET" ? [invitation] : path.endsWith("/accept") ? acme : invitation,
    }));
    await client.orgs.invitations.create("org/1", { email: "bob@example.com" });
    await client.orgs.invitations.create("org/1", { email: "bob@example.com", roles: ["admin"] });
    expect(await client.orgs.invitations.list("org/1")).toEqual([invitation]);
    await client.orgs.invitations.resend("org/1", "inv/1");
    await client.orgs.invitations.revoke("org/1", "inv/1");
    expect(await client.orgs.invitations.accept("secret")).toEqual(acme);
    expect(server.sent.slice(1).map(({ method, path, body }) => [method, path, body])).toEqual([
      ["POST", "/auth/orgs/org%2F1/invitations", { email: "bob@example.com" }],
      ["POST", "/auth/orgs/org%2F1/invitations", { email: "bob@example.com", roles: ["admin"] }],
      ["GET", "/auth/orgs/org%2F1/invitations", undefined],
      ["POST", "/auth/orgs/org%2F1/invitations/inv%2F1/resend", {}],
      ["DELETE", "/auth/orgs/org%2F1/invitations/inv%2F1", undefined],
      ["POST", "/auth/orgs/invitations/accept", { token: "secret" }],
    ]);
  });

  it("OR-5: an invitation refused (40101 for a spent link or another address) refreshes once and rejects; the user stays signed in", async () => {
    const { client, server, signedOut } = await signedInOrgsClient(({ path }) =>
      path === "/auth/refresh" ? { code: 0, data: tokenSet(2) } : { code: 40101, message: "Invalid token", status: 401 },
    );
    await expect(client.orgs.invitations.accept("spent")).rejects.toMatchObject({ code: 40101 });
    expect(server.sentTo("/auth/orgs/invitations/accept")).toHaveLength(2);
    expect(signedOut).toEqual([]);
  });

  it("OR-11: adds, lists, verifies and removes a domain on its routes", async () => {
    const { client, server } = await signedInOrgsClient(({ method }) => ({
      code: 0,
      data: method === "GET" ? [domain] : domain,
    }));
    expect(await client.orgs.domains.add("org/1", "example.com")).toEqual(domain);
    expect(await client.orgs.domains.list("org/1")).toEqual([domain]);
    await client.orgs.domains.verify("org/1", "example.com");
    await client.orgs.domains.remove("org/1", "example.com");
    expect(server.sent.slice(1).map(({ method, path, body }) => [method, path, body])).toEqual([
      ["POST", "/auth/orgs/org%2F1/domains", { domain: "example.com" }],
      ["GET", "/auth/orgs/org%2F1/domains", undefined],
      ["POST", "/auth/orgs/org%2F1/domains/example.com/verify", {}],
      ["DELETE", "/auth/orgs/org%2F1/domains/example.com", undefined],
    ]);
  });
});
