// Organizations end to end on every adapter (issue 40): an organization created, an address
// invited by email and the invitation accepted, the session switched to it (its access token
// carries org and org_roles), a route of the app behind requireAuth's `org` option, a role
// change that refuses the old token while the refresh carries the new roles, and a removal that
// refuses the member's token (OR-7, OR-8). Then every route of the organizations once, so that
// the OpenAPI drift check reads a real answer of each. The clock is frozen (test/fixtures/auth.ts).
import { type Auth, type EmailMessage, createUser } from "@portcullis/core";
import { requireAuth as requireAuthExpress } from "@portcullis/express";
import { requireAuth as requireAuthFastify } from "@portcullis/fastify";
import { requireAuth as requireAuthHono } from "@portcullis/hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestAuth, generousThrottle, makeTestAuth, testPassword } from "../fixtures/auth.js";
import { type CallResult, call, post } from "./client.js";
import { expectEnvelope } from "./contract-suite.js";
import { describeOpenApiDrift } from "./openapi-drift.js";
import { type RunningServer, adapters, orgAdminRoute } from "./servers.js";

const base = "/api/v1/auth";
const invitationUrl = "https://app.example.com/accept-invitation";

/** The claims of a JWT, unverified: what the test reads of a token the server issued. */
const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(token.split(".")[1] as string, "base64url").toString("utf8")) as Record<string, unknown>;

/** The token of an invitation's link: what follows `#token=`. */
function linkToken(message: EmailMessage | undefined): string {
  const token = new URL(message?.link ?? "https://invalid.example/").hash.replace(/^#token=/, "");
  if (token === "") throw new Error("the message holds no link");
  return token;
}

describe.each(adapters)("organizations over HTTP on %s", (_name, start) => {
  let testAuth: TestAuth;
  let server: RunningServer;
  const outbox: EmailMessage[] = [];

  beforeAll(async () => {
    testAuth = makeTestAuth({
      throttle: generousThrottle,
      organizations: { enabled: true, verifyDomain: async ({ domain }) => domain === "acme.example" },
      email: {
        send: async (message) => {
          outbox.push(message);
        },
        resetUrl: "https://app.example.com/reset-password",
        verifyUrl: "https://app.example.com/verify-email",
        invitationUrl,
        recipientLimit: [{ limit: 10_000, window: "1h" }],
      },
    });
    server = await start(testAuth.auth);
  });
  afterAll(async () => {
    await server.close();
  });

  const get = (path: string, token: string) => call(server, "GET", path, { token });
  const send = (method: string, path: string, token: string, json: unknown = {}) => call(server, method, path, { token, json });
  /** The data of a Portcullis answer that must be code 0. */
  function ok<T = Record<string, unknown>>(answer: CallResult): T {
    expectEnvelope(answer, 0);
    return answer.body.data as T;
  }
  /** A success of the app's own route, which answers in the envelope's shape without Portcullis's headers. */
  const expectAppAnswer = (answer: CallResult) => expect([answer.status, answer.body.code], answer.text).toEqual([200, 0]);

  /** A user with a verified address, signed in with the password: the id, the address and the tokens. */
  async function signedInUser(username: string, email = `${username}@people.example`) {
    const user = await createUser(testAuth.auth, { username, password: testPassword, email, emailVerified: true });
    const answer = await post(server, `${base}/login`, { username, password: testPassword });
    const tokens = ok<{ accessToken: string; refreshToken: string }>(answer);
    return { id: user.id, email, ...tokens };
  }

  /** Invites an address: the invitation and the token of the link the message carries. */
  async function invite(token: string, orgId: string, email: string, roles?: string[]) {
    const before = outbox.length;
    const answer = await send(
      "POST",
      `${base}/orgs/${orgId}/invitations`,
      token,
      roles === undefined ? { email } : { email, roles },
    );
    const invitation = ok<{ id: string }>(answer);
    expect(outbox.slice(before).map((message) => [message.kind, message.to])).toEqual([["organization_invitation", email]]);
    return { invitation, token: linkToken(outbox.at(-1)) };
  }

  it("OR-7, OR-8: create, list, invite by email, accept with a verified address, switch (org and org_roles in the token), requireAuth({ org: { roles: ['admin'] } }), a role change refuses the old token and the refresh carries the new roles, a removal refuses the member's token", async () => {
    const tag = _name.replace(/\W/g, "").toLowerCase();
    const owner = await signedInUser(`olive-${tag}`);
    const invitee = await signedInUser(`ivy-${tag}`);

    const created = ok<{ id: string; roles: string[] }>(
      await send("POST", `${base}/orgs`, owner.accessToken, { name: `Acme ${tag}` }),
    );
    expect(created.roles).toEqual(["owner"]);
    const orgId = created.id;
    const mine = ok<{ id: string; active: boolean }[]>(await get(`${base}/orgs`, owner.accessToken));
    expect(mine).toEqual([expect.objectContaining({ id: orgId, active: false, roles: ["owner"] })]);

    const { token } = await invite(owner.accessToken, orgId, invitee.email);
    expect(outbox.at(-1)?.link).toBe(`${invitationUrl}#token=${token}`);
    const accepted = ok(await post(server, `${base}/orgs/invitations/accept`, { token }, { token: invitee.accessToken }));
    expect(accepted).toMatchObject({ id: orgId, roles: ["member"] });

    const switched = ok<{ accessToken: string; org: unknown }>(
      await post(server, `${base}/orgs/active`, { orgId }, { token: invitee.accessToken }),
    );
    expect(switched.org).toEqual({ id: orgId, roles: ["member"] });
    expect(claimsOf(switched.accessToken)).toMatchObject({ sub: invitee.id, org: orgId, org_roles: ["member"] });
    // The token of the session from before the switch carries no organization: it is refused now.
    expectEnvelope(await get(`${base}/me`, invitee.accessToken), 40101);

    // The app's route for the organization's administrators: a member is 40300, as is a token without an organization.
    expectEnvelope(await get(orgAdminRoute, switched.accessToken), 40300);
    expectEnvelope(await get(orgAdminRoute, owner.accessToken), 40300);

    const promoted = await send("PATCH", `${base}/orgs/${orgId}/members/${invitee.id}`, owner.accessToken, { roles: ["admin"] });
    expect(ok(promoted)).toMatchObject({ userId: invitee.id, roles: ["admin"], email: invitee.email });
    expectEnvelope(await get(orgAdminRoute, switched.accessToken), 40101);
    expectEnvelope(await get(`${base}/me`, switched.accessToken), 40101);
    const refreshed = ok<{ accessToken: string; refreshToken: string }>(
      await post(server, `${base}/refresh`, { refreshToken: invitee.refreshToken }),
    );
    expect(claimsOf(refreshed.accessToken)).toMatchObject({ org: orgId, org_roles: ["admin"] });
    const passed = await get(orgAdminRoute, refreshed.accessToken);
    expectAppAnswer(passed);
    expect(passed.body.data).toEqual({ userId: invitee.id, org: { id: orgId, roles: ["admin"] } });

    ok(await send("DELETE", `${base}/orgs/${orgId}/members/${invitee.id}`, owner.accessToken));
    expectEnvelope(await get(orgAdminRoute, refreshed.accessToken), 40101);
    expectEnvelope(await get(`${base}/me`, refreshed.accessToken), 40101);
    // Not signed out: the refresh carries no organization any more.
    const outside = ok<{ accessToken: string }>(await post(server, `${base}/refresh`, { refreshToken: refreshed.refreshToken }));
    expect(claimsOf(outside.accessToken)).not.toHaveProperty("org");
    expectEnvelope(await get(`${base}/me`, outside.accessToken), 0);
    expectEnvelope(await get(orgAdminRoute, outside.accessToken), 40300);
  });

  it("every organization route answers as the document says (read by the drift check below), and OR-2: another organization is 40400 as an unknown one", async () => {
    const tag = _name.replace(/\W/g, "").toLowerCase();
    const owner = await signedInUser(`owner-${tag}`);
    const admin = await signedInUser(`admin-${tag}`);
    const worker = await signedInUser(`worker-${tag}`, `worker-${tag}@acme.example`);
    const orgId = ok<{ id: string }>(
      await send("POST", `${base}/orgs`, owner.accessToken, { name: `Org ${tag}`, slug: `org-${tag}` }),
    ).id;
    const org = `${base}/orgs/${orgId}`;

    ok(await get(org, owner.accessToken));
    const renamed = await send("PATCH", org, owner.accessToken, { name: "Renamed", rules: { signInMethods: ["passkey"] } });
    expect(ok(renamed)).toMatchObject({ name: "Renamed", rules: { requireSecondFactor: false, signInMethods: ["passkey"] } });
    // OR-10: a password session does not make it active; the refusal names the ways it allows.
    const refused = await post(server, `${base}/orgs/active`, { orgId }, { token: owner.accessToken });
    // A 40300 with data, which expectEnvelope does not allow other refusals.
    expect([refused.status, refused.body]).toEqual([
      403,
      { code: 40300, message: expect.any(String), data: { signInMethods: ["passkey"] } },
    ]);
    ok(await send("PATCH", org, owner.accessToken, { rules: { signInMethods: null } }));

    const { invitation, token } = await invite(owner.accessToken, orgId, admin.email, ["admin"]);
    expect(ok<unknown[]>(await get(`${org}/invitations`, owner.accessToken))).toEqual([invitation]);
    const resent = await call(server, "POST", `${org}/invitations/${invitation.id}/resend`, {
      token: owner.accessToken,
      json: {},
      headers: { "accept-language": "en" },
    });
    expect(ok(resent)).toMatchObject({ id: invitation.id });
    expectEnvelope(await post(server, `${base}/orgs/invitations/accept`, { token }, { token: admin.accessToken }), 40101);
    ok(await post(server, `${base}/orgs/invitations/accept`, { token: linkToken(outbox.at(-1)) }, { token: admin.accessToken }));
    const revocable = await invite(owner.accessToken, orgId, `later-${tag}@people.example`);
    expect(
      ok(await call(server, "DELETE", `${org}/invitations/${revocable.invitation.id}`, { token: owner.accessToken })),
    ).toEqual({
      revoked: true,
    });

    const claimed = ok(await send("POST", `${org}/domains`, admin.accessToken, { domain: "acme.example" }));
    expect(claimed).toMatchObject({
      domain: "acme.example",
      recordName: "_portcullis-verification.acme.example",
      verifiedAt: null,
    });
    ok(await send("POST", `${org}/domains`, admin.accessToken, { domain: "other.example" }));
    expectEnvelope(await send("POST", `${org}/domains/other.example/verify`, admin.accessToken), 42200);
    ok(await send("POST", `${org}/domains/acme.example/verify`, admin.accessToken));
    expect(ok<unknown[]>(await get(`${org}/domains`, admin.accessToken))).toHaveLength(2);
    expect(ok(await call(server, "DELETE", `${org}/domains/other.example`, { token: admin.accessToken }))).toEqual({
      removed: true,
    });
    expect(ok<unknown[]>(await get(`${base}/orgs/joinable`, worker.accessToken))).toEqual([
      { id: orgId, slug: `org-${tag}`, name: "Renamed" },
    ]);
    expect(ok(await send("POST", `${org}/join`, worker.accessToken))).toMatchObject({ id: orgId, roles: ["member"] });
    const page = ok<{ members: { userId: string }[]; nextCursor: string | null }>(
      await get(`${org}/members?limit=2`, worker.accessToken),
    );
    expect(page.members).toHaveLength(2);
    const rest = ok<{ members: { userId: string }[] }>(await get(`${org}/members?cursor=${page.nextCursor}`, worker.accessToken));
    expect([...page.members, ...rest.members].map((member) => member.userId).sort()).toEqual(
      [owner.id, admin.id, worker.id].sort(),
    );
    expect(ok(await send("DELETE", `${org}/members/${worker.id}`, worker.accessToken))).toEqual({ removed: true });

    // OR-2: an outsider (the worker now) is answered as for an id that does not exist.
    const theirs = await get(org, worker.accessToken);
    const unknown = await get(`${base}/orgs/no-such-org`, worker.accessToken);
    expectEnvelope(theirs, 40400);
    expect(theirs.text).toBe(unknown.text);

    // The instance's administrators list and delete any organization, with a re-authentication.
    const operator = await createUser(testAuth.auth, { username: `root-${tag}`, password: testPassword, roles: ["admin"] });
    const operatorTokens = ok<{ accessToken: string }>(
      await post(server, `${base}/login`, { username: `root-${tag}`, password: testPassword }),
    );
    const listed = ok<{ organizations: { id: string }[] }>(await get(`${base}/admin/orgs?limit=100`, operatorTokens.accessToken));
    expect(listed.organizations.map((entry) => entry.id)).toContain(orgId);
    expectEnvelope(await get(`${base}/admin/orgs`, owner.accessToken), 40300);
    const other = ok<{ id: string }>(await send("POST", `${base}/orgs`, owner.accessToken, { name: `Second ${tag}` }));
    expect(
      ok(await send("DELETE", `${base}/admin/orgs/${other.id}`, operatorTokens.accessToken, { password: testPassword })),
    ).toEqual({ deleted: true });
    expect(operator.roles).toEqual(["admin"]);

    expect(ok(await send("DELETE", org, owner.accessToken, { password: testPassword }))).toEqual({ deleted: true });
    expectEnvelope(await get(org, owner.accessToken), 40400);
  });
});

describe("requireAuth's org option on every adapter", () => {
  it("a bad org value is a TypeError when requireAuth is called; a good one is taken", () => {
    const { auth } = makeTestAuth();
    for (const requireAuth of [requireAuthExpress, requireAuthHono, requireAuthFastify] as ((
      auth: Auth,
      options: { org?: unknown },
    ) => unknown)[]) {
      for (const org of [false, "admin", { roles: "admin" }, { roles: [""] }, { role: ["admin"] }]) {
        expect(() => requireAuth(auth, { org }), JSON.stringify(org)).toThrow(TypeError);
      }
      expect(() => requireAuth(auth, { org: true })).not.toThrow();
      expect(() => requireAuth(auth, { org: { roles: ["admin"] } })).not.toThrow();
    }
  });
});

describeOpenApiDrift({
  exercises: [
    "login",
    "refresh",
    "getPublicUser",
    "createOrganization",
    "listMyOrganizations",
    "listJoinableOrganizations",
    "switchOrganization",
    "acceptInvitation",
    "getOrganization",
    "updateOrganization",
    "deleteOrganization",
    "joinOrganization",
    "listMembers",
    "changeMemberRoles",
    "removeMember",
    "inviteMember",
    "listInvitations",
    "resendInvitation",
    "revokeInvitation",
    "addDomain",
    "listDomains",
    "verifyDomain",
    "removeDomain",
    "listAllOrganizations",
    "deleteAnyOrganization",
  ],
});
