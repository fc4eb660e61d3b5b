import { describe, expect, it } from "vitest";
import type { AuthConfig } from "../config.js";
import { addUserWithEmail, makeEmailAuth, sentTo, tokenOf } from "../email/email.test-support.js";
import { ErrorCode } from "../errors/codes.js";
import { createUser } from "../flows/create-user.js";
import {
  type AuthOverrides,
  type Harness,
  codeAt,
  decodeBase32,
  generousThrottle,
  goodPassword,
  nextCode,
  outcome,
} from "../flows/fixtures.test-support.js";
import { login } from "../flows/login.js";
import { verifyTotp } from "../flows/verify-totp.js";
import { type AccessTokensOnly, type AuthorizeOptions, authorizeRequest, handleRequest } from "../http/handle-request.js";
import { routes } from "../http/routes/index.js";
import type { AccessContext } from "../tokens/access-token.js";
import { claimsOf, invitationUrl } from "./organizations.test-support.js";

/**
 * The organizations' HTTP surface (issue 40) through core's `handleRequest`, as every adapter
 * serves it: the security rules of `docs/flows/organizations.md` (OR-2…OR-10), the
 * re-authentication of role changes and removals, and `requireAuth`'s `org` option.
 */

const minutes = (count: number) => count * 60_000;

/** An auth with organizations on, invitation mail collected in `outbox`, and domains that always verify. */
function makeOrgAuth(overrides: AuthOverrides = {}) {
  return makeEmailAuth(
    {
      organizations: { enabled: true, verifyDomain: async () => true },
      throttle: generousThrottle as AuthConfig["throttle"],
      ...overrides,
    },
    { invitationUrl },
  );
}
type OrgHarness = ReturnType<typeof makeOrgAuth>;

/** An answer of core: the HTTP status and the envelope. */
interface Answer {
  status: number;
  code: number;
  message: string;
  data?: unknown;
  body: Record<string, unknown>;
}

/** Sends a request to core over TLS, with a JSON body unless none is given, and a bearer token. */
async function call(
  harness: Harness,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  // A POST, PUT or PATCH always carries a JSON body, `{}` when it has nothing to say (HTTP-2).
  const body = options.body ?? (["POST", "PUT", "PATCH"].includes(method) ? {} : undefined);
  if (body !== undefined) headers["content-type"] = "application/json";
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  const response = await handleRequest(harness.auth, {
    method,
    url: `/api/v1${path}`,
    header: (name) => headers[name],
    body:
      body === undefined
        ? null
        : (async function* () {
            yield new TextEncoder().encode(JSON.stringify(body));
          })(),
    peerAddress: "192.0.2.1",
    secure: true,
  });
  if (response === null) throw new Error(`${method} ${path} is not Portcullis's`);
  const envelope = JSON.parse(response.body) as Record<string, unknown>;
  return {
    status: response.status,
    code: envelope.code as number,
    message: envelope.message as string,
    data: envelope.data,
    body: envelope,
  };
}

/** The data of an answer that must be code 0. */
function ok<T = Record<string, unknown>>(answer: Answer): T {
  expect(answer.code, JSON.stringify(answer.body)).toBe(0);
  return answer.data as T;
}

/** A signed-in user: the id, the address, the tokens of a password sign-in. */
interface Person {
  id: string;
  username: string;
  email: string;
  accessToken: string;
  refreshToken: string;
}

/** Creates a user with a password and an address (verified unless told), and signs it in. */
async function person(harness: OrgHarness, username: string, options: { verified?: boolean; email?: string } = {}) {
  const email = options.email ?? `${username}@people.example`;
  const id = await addUserWithEmail(harness.auth, username, email, options.verified ?? true);
  return { id, username, email, ...(await passwordSession(harness, username)) };
}

/** A new password session of a user without TOTP: its tokens. */
async function passwordSession(harness: Harness, username: string) {
  const result = await login(harness.auth, { username, password: goodPassword });
  if (result.status !== "authenticated") throw new Error(`expected a session, got ${result.status}`);
  return { accessToken: result.tokens.accessToken, refreshToken: result.tokens.refreshToken as string };
}

/** A holder of the instance's `adminRole`, signed in: no member of any organization. */
async function instanceAdministrator(harness: OrgHarness) {
  const email = "root@people.example";
  await createUser(harness.auth, { username: "root", password: goodPassword, email, emailVerified: true, roles: ["admin"] });
  return { username: "root", email, ...(await passwordSession(harness, "root")) };
}

async function createOrg(harness: OrgHarness, owner: Person, name: string): Promise<string> {
  return ok<{ id: string }>(await call(harness, "POST", "/auth/orgs", { token: owner.accessToken, body: { name } })).id;
}

/** Invites an address; answers the invitation and the token of the link mailed. */
async function invite(harness: OrgHarness, inviter: Person, orgId: string, email: string, roles?: string[]) {
  const to = email.toLowerCase();
  const before = sentTo(harness, to, "organization_invitation").length;
  const answer = await call(harness, "POST", `/auth/orgs/${orgId}/invitations`, {
    token: inviter.accessToken,
    body: roles === undefined ? { email } : { email, roles },
  });
  const invitation = ok<{ id: string }>(answer);
  const sent = sentTo(harness, to, "organization_invitation");
  expect(sent).toHaveLength(before + 1);
  return { invitation, token: tokenOf(sent.at(-1)) };
}

const accept = (harness: OrgHarness, who: Person, token: string) =>
  call(harness, "POST", "/auth/orgs/invitations/accept", { token: who.accessToken, body: { token } });

/** Makes `who` a member of the organization with `roles`, by an invitation `inviter` sends. */
async function join(harness: OrgHarness, inviter: Person, orgId: string, who: Person, roles: string[]) {
  const { token } = await invite(harness, inviter, orgId, who.email, roles);
  ok(await accept(harness, who, token));
}

/** Switches the session of `who`'s access token to the organization: the new access token. */
async function switchTo(harness: OrgHarness, who: Person, orgId: string | null): Promise<string> {
  const answer = await call(harness, "POST", "/auth/orgs/active", { token: who.accessToken, body: { orgId } });
  return ok<{ accessToken: string }>(answer).accessToken;
}

const me = (harness: Harness, token: string) => call(harness, "GET", "/auth/me", { token });

const refreshed = async (harness: Harness, refreshToken: string) =>
  ok<{ accessToken: string; refreshToken: string }>(await call(harness, "POST", "/auth/refresh", { body: { refreshToken } }));

/** `requireAuth`'s check on a host route, as the adapters call it. */
const authorize = (harness: Harness, token: string, options: AuthorizeOptions & AccessTokensOnly) =>
  authorizeRequest(
    harness.auth,
    { header: (name) => (name === "authorization" ? `Bearer ${token}` : undefined), peerAddress: "192.0.2.1", secure: true },
    options,
  );

/** An organization with an owner, an admin and two plain members, each signed in. */
async function staffedOrg(harness: OrgHarness) {
  const owner = await person(harness, "olive");
  const orgId = await createOrg(harness, owner, "Acme");
  const admin = await person(harness, "adam");
  const member = await person(harness, "mia");
  const other = await person(harness, "milo");
  await join(harness, owner, orgId, admin, ["admin"]);
  await join(harness, owner, orgId, member, ["member"]);
  await join(harness, owner, orgId, other, ["member"]);
  return { orgId, owner, admin, member, other };
}

describe("organizations over HTTP", () => {
  it("are 40400 on every route without organizations.enabled", async () => {
    const harness = makeEmailAuth({}, { invitationUrl });
    await addUserWithEmail(harness.auth, "nobody", "nobody@people.example");
    const { accessToken } = await passwordSession(harness, "nobody");
    const organizationRoutes = routes.filter((route) => /^\/auth\/(admin\/)?orgs(\/|$)/.test(route.path));
    expect(organizationRoutes.length).toBeGreaterThanOrEqual(22);
    for (const route of organizationRoutes) {
      const path = route.path.replace(/:[A-Za-z]+/g, "x1");
      const answer = await call(harness, route.method, path, {
        token: accessToken,
        body: route.method === "GET" ? undefined : {},
      });
      expect([answer.status, answer.code], `${route.method} ${route.path}`).toEqual([404, ErrorCode.NotFound]);
    }
  });

  it("create, list, get, rename, invite, accept, list members, switch, and the instance administrators' view", async () => {
    const harness = makeOrgAuth();
    const owner = await person(harness, "olive");
    const created = ok(await call(harness, "POST", "/auth/orgs", { token: owner.accessToken, body: { name: "Acme Corp" } }));
    expect(created).toEqual({
      id: expect.any(String),
      slug: "acme-corp",
      name: "Acme Corp",
      rules: { requireSecondFactor: false, signInMethods: null },
      createdAt: harness.clock.now,
      roles: ["owner"],
    });
    const orgId = created.id as string;
    expect(ok(await call(harness, "GET", "/auth/orgs", { token: owner.accessToken }))).toEqual([{ ...created, active: false }]);
    expect(ok(await call(harness, "GET", `/auth/orgs/${orgId}`, { token: owner.accessToken }))).toEqual(created);
    const renamed = await call(harness, "PATCH", `/auth/orgs/${orgId}`, { token: owner.accessToken, body: { name: "Acme" } });
    expect(ok(renamed)).toMatchObject({ name: "Acme", slug: "acme-corp" });

    const invitee = await person(harness, "ivy");
    const { invitation, token } = await invite(harness, owner, orgId, "Ivy@People.example", ["admin"]);
    expect(invitation).toEqual({
      id: expect.any(String),
      email: "ivy@people.example",
      roles: ["admin"],
      invitedBy: owner.id,
      createdAt: harness.clock.now,
      expiresAt: harness.clock.now + 7 * 86_400_000,
    });
    expect(ok(await call(harness, "GET", `/auth/orgs/${orgId}/invitations`, { token: owner.accessToken }))).toEqual([invitation]);
    expect(ok(await accept(harness, invitee, token))).toMatchObject({ id: orgId, roles: ["admin"] });
    expect(ok(await call(harness, "GET", `/auth/orgs/${orgId}/invitations`, { token: owner.accessToken }))).toEqual([]);
    const members = ok(await call(harness, "GET", `/auth/orgs/${orgId}/members?limit=1`, { token: invitee.accessToken }));
    expect(members).toEqual({ members: [expect.objectContaining({ roles: expect.any(Array) })], nextCursor: expect.any(String) });
    const rest = await call(harness, "GET", `/auth/orgs/${orgId}/members?cursor=${members.nextCursor}`, {
      token: invitee.accessToken,
    });
    expect(
      [...(members.members as { userId: string }[]), ...ok<{ members: { userId: string }[] }>(rest).members]
        .map((m) => m.userId)
        .sort(),
    ).toEqual([owner.id, invitee.id].sort());
    expect((await call(harness, "GET", `/auth/orgs/${orgId}/members?limit=abc`, { token: owner.accessToken })).code).toBe(40002);
    expect((await call(harness, "GET", `/auth/orgs/${orgId}/members?limit=500`, { token: owner.accessToken })).code).toBe(42200);

    const switched = await call(harness, "POST", "/auth/orgs/active", { token: invitee.accessToken, body: { orgId } });
    const data = ok<{ accessToken: string; org: unknown; tokenType: string; expiresIn: number }>(switched);
    expect(data).toEqual({
      accessToken: expect.any(String),
      tokenType: "Bearer",
      expiresIn: expect.any(Number),
      org: { id: orgId, roles: ["admin"] },
    });
    expect(claimsOf(data.accessToken)).toMatchObject({ org: orgId, org_roles: ["admin"] });
    expect(ok<{ active: boolean }[]>(await call(harness, "GET", "/auth/orgs", { token: data.accessToken }))[0]?.active).toBe(
      true,
    );
    expect((await call(harness, "POST", "/auth/orgs/active", { token: data.accessToken, body: {} })).code).toBe(40001);
    const none = await switchTo(harness, { ...invitee, accessToken: data.accessToken }, null);
    expect(claimsOf(none)).not.toHaveProperty("org");

    const domain = ok(
      await call(harness, "POST", `/auth/orgs/${orgId}/domains`, { token: owner.accessToken, body: { domain: "Acme.Example" } }),
    );
    expect(domain).toEqual({
      domain: "acme.example",
      recordName: "_portcullis-verification.acme.example",
      recordValue: expect.stringMatching(/^portcullis-verification=/),
      createdAt: harness.clock.now,
      verifiedAt: null,
    });
    const verified = await call(harness, "POST", `/auth/orgs/${orgId}/domains/acme.example/verify`, { token: owner.accessToken });
    expect(ok(verified)).toMatchObject({ verifiedAt: harness.clock.now });
    const worker = await person(harness, "walt", { email: "walt@acme.example" });
    expect(ok(await call(harness, "GET", "/auth/orgs/joinable", { token: worker.accessToken }))).toEqual([
      { id: orgId, slug: "acme-corp", name: "Acme" },
    ]);
    expect(ok(await call(harness, "POST", `/auth/orgs/${orgId}/join`, { token: worker.accessToken }))).toMatchObject({
      roles: ["member"],
    });
    expect((await call(harness, "POST", `/auth/orgs/${orgId}/join`, { token: worker.accessToken })).code).toBe(40900);
    expect(ok(await call(harness, "DELETE", `/auth/orgs/${orgId}/domains/acme.example`, { token: owner.accessToken }))).toEqual({
      removed: true,
    });
    expect(ok(await call(harness, "GET", `/auth/orgs/${orgId}/domains`, { token: owner.accessToken }))).toEqual([]);

    const admin = await instanceAdministrator(harness);
    const listed = await call(harness, "GET", "/auth/admin/orgs?limit=10", { token: admin.accessToken });
    expect(ok(listed)).toEqual({
      organizations: [
        {
          id: orgId,
          slug: "acme-corp",
          name: "Acme",
          rules: created.rules,
          createdAt: created.createdAt,
          updatedAt: harness.clock.now,
        },
      ],
      nextCursor: null,
    });
    expect((await call(harness, "GET", "/auth/admin/orgs", { token: owner.accessToken })).code).toBe(40300);
    const deleted = await call(harness, "DELETE", `/auth/admin/orgs/${orgId}`, { token: admin.accessToken, body: {} });
    expect(ok(deleted)).toEqual({ deleted: true });
    expect((await call(harness, "GET", `/auth/orgs/${orgId}`, { token: owner.accessToken })).code).toBe(40400);
  });

  it("OR-2: every organization route answers an organization of which the caller is not a member exactly as an unknown id (40400, same body)", async () => {
    const harness = makeOrgAuth();
    const owner = await person(harness, "olive");
    const orgId = await createOrg(harness, owner, "Acme");
    const { invitation } = await invite(harness, owner, orgId, "ivy@people.example");
    ok(
      await call(harness, "POST", `/auth/orgs/${orgId}/domains`, { token: owner.accessToken, body: { domain: "acme.example" } }),
    );
    const outsider = await person(harness, "otto", { email: "otto@acme.example" });
    const operator = await instanceAdministrator(harness);
    // Every route of an organization by id, from the table: a new one is covered without a change here.
    const byId = routes.filter((route) => route.path.startsWith("/auth/orgs/:orgId"));
    expect(byId.length).toBeGreaterThanOrEqual(15);
    const body = {
      name: "Mine",
      slug: "mine",
      roles: ["member"],
      email: "eve@people.example",
      domain: "acme.example",
      password: goodPassword,
    };
    const pathTo = (path: string, id: string) =>
      path
        .replace(":orgId", id)
        .replace(":userId", owner.id)
        .replace(":invitationId", invitation.id)
        .replace(":domain", "acme.example");
    for (const caller of [outsider, operator]) {
      for (const route of byId) {
        const send = (id: string) =>
          call(harness, route.method, pathTo(route.path, id), {
            token: caller.accessToken,
            body: route.method === "GET" ? undefined : body,
          });
        const theirs = await send(orgId);
        const unknown = await send("no-such-organization");
        expect(theirs.code, `${route.method} ${route.path}`).toBe(ErrorCode.NotFound);
        expect({ status: theirs.status, body: theirs.body }, `${route.method} ${route.path}`).toEqual({
          status: unknown.status,
          body: unknown.body,
        });
      }
    }
    // Nothing above changed the organization: it has its owner and its pending invitation still.
    expect(ok(await call(harness, "GET", `/auth/orgs/${orgId}/invitations`, { token: owner.accessToken }))).toHaveLength(1);
    expect(
      ok<{ members: unknown[] }>(await call(harness, "GET", `/auth/orgs/${orgId}/members`, { token: owner.accessToken })).members,
    ).toHaveLength(1);
  });

  it("OR-4: no escalation above one's own role", async () => {
    const harness = makeOrgAuth();
    const { orgId, owner, admin, member, other } = await staffedOrg(harness);
    const patchRoles = (who: Person, target: Person, roles: string[]) =>
      call(harness, "PATCH", `/auth/orgs/${orgId}/members/${target.id}`, {
        token: who.accessToken,
        body: { roles, password: goodPassword },
      });
    const remove = (who: Person, target: Person) =>
      call(harness, "DELETE", `/auth/orgs/${orgId}/members/${target.id}`, {
        token: who.accessToken,
        body: { password: goodPassword },
      });
    const forbidden = (answer: Answer, what: string) =>
      expect([answer.status, answer.code], what).toEqual([403, ErrorCode.Forbidden]);

    // An admin grants no owner, invites no owner, and neither changes nor removes an owner.
    forbidden(await patchRoles(admin, member, ["owner"]), "an admin makes a member an owner");
    forbidden(await patchRoles(admin, admin, ["owner"]), "an admin makes themselves an owner");
    forbidden(
      await call(harness, "POST", `/auth/orgs/${orgId}/invitations`, {
        token: admin.accessToken,
        body: { email: "x@people.example", roles: ["owner"] },
      }),
      "an admin invites an owner",
    );
    forbidden(await patchRoles(admin, owner, ["member"]), "an admin demotes an owner");
    forbidden(await remove(admin, owner), "an admin removes an owner");
    forbidden(
      await call(harness, "DELETE", `/auth/orgs/${orgId}`, { token: admin.accessToken, body: { password: goodPassword } }),
      "an admin deletes the organization",
    );
    // An owner's invitation to owner is resent or revoked by owners only.
    const { invitation } = await invite(harness, owner, orgId, "boss@people.example", ["owner"]);
    forbidden(
      await call(harness, "POST", `/auth/orgs/${orgId}/invitations/${invitation.id}/resend`, { token: admin.accessToken }),
      "an admin resends an owner's invitation",
    );
    forbidden(
      await call(harness, "DELETE", `/auth/orgs/${orgId}/invitations/${invitation.id}`, { token: admin.accessToken }),
      "an admin revokes an owner's invitation",
    );

    // A plain member administers nothing.
    forbidden(await patchRoles(member, other, ["member"]), "a member changes roles");
    forbidden(await patchRoles(member, member, ["admin"]), "a member promotes themselves");
    forbidden(await remove(member, other), "a member removes another");
    forbidden(
      await call(harness, "PATCH", `/auth/orgs/${orgId}`, { token: member.accessToken, body: { name: "Mine" } }),
      "a member renames",
    );
    forbidden(
      await call(harness, "POST", `/auth/orgs/${orgId}/invitations`, {
        token: member.accessToken,
        body: { email: "x@people.example" },
      }),
      "a member invites",
    );
    forbidden(
      await call(harness, "GET", `/auth/orgs/${orgId}/invitations`, { token: member.accessToken }),
      "a member lists invitations",
    );
    forbidden(
      await call(harness, "POST", `/auth/orgs/${orgId}/domains`, { token: member.accessToken, body: { domain: "a.example" } }),
      "a member claims a domain",
    );
    forbidden(await call(harness, "GET", `/auth/orgs/${orgId}/domains`, { token: member.accessToken }), "a member lists domains");

    // Within their own rank an admin administers: promotes a member to admin, removes one.
    expect(ok(await patchRoles(admin, member, ["admin"]))).toMatchObject({ userId: member.id, roles: ["admin"] });
    expect(ok(await remove(admin, other))).toEqual({ removed: true });
    const members = ok<{ members: { userId: string; roles: string[] }[] }>(
      await call(harness, "GET", `/auth/orgs/${orgId}/members`, { token: owner.accessToken }),
    );
    expect(members.members.find((entry) => entry.userId === owner.id)?.roles).toEqual(["owner"]);
    expect(members.members.map((entry) => entry.userId)).not.toContain(other.id);
  });

  it("OR-3: the last owner can neither leave nor be demoted", async () => {
    const harness = makeOrgAuth();
    const owner = await person(harness, "olive");
    const orgId = await createOrg(harness, owner, "Acme");
    const leave = (who: Person) => call(harness, "DELETE", `/auth/orgs/${orgId}/members/${who.id}`, { token: who.accessToken });
    const setRoles = (who: Person, target: Person, roles: string[]) =>
      call(harness, "PATCH", `/auth/orgs/${orgId}/members/${target.id}`, {
        token: who.accessToken,
        body: { roles, password: goodPassword },
      });
    expect((await leave(owner)).code).toBe(ErrorCode.Conflict);
    expect((await setRoles(owner, owner, ["admin"])).code).toBe(ErrorCode.Conflict);
    expect((await setRoles(owner, owner, ["member"])).code).toBe(ErrorCode.Conflict);

    const second = await person(harness, "otis");
    await join(harness, owner, orgId, second, ["owner"]);
    // With two owners one may step down; the other is then the last.
    expect(ok(await setRoles(owner, owner, ["admin"]))).toMatchObject({ roles: ["admin"] });
    expect((await leave(second)).code).toBe(ErrorCode.Conflict);
    expect((await setRoles(second, second, ["member"])).code).toBe(ErrorCode.Conflict);
    // The owner it lost may leave now: it is no owner.
    expect(ok(await leave(owner))).toEqual({ removed: true });
    const members = ok<{ members: { userId: string; roles: string[] }[] }>(
      await call(harness, "GET", `/auth/orgs/${orgId}/members`, { token: second.accessToken }),
    );
    expect(members.members).toEqual([expect.objectContaining({ userId: second.id, roles: ["owner"] })]);
  });

  it("OR-5: an invitation is accepted only by a signed-in user holding the invited address verified", async () => {
    const harness = makeOrgAuth();
    const owner = await person(harness, "olive");
    const orgId = await createOrg(harness, owner, "Acme");
    const unverified = await person(harness, "una", { verified: false });
    const stranger = await person(harness, "sam");
    const invitee = await person(harness, "ivy");

    const { token } = await invite(harness, owner, orgId, invitee.email);
    // No signed-in user: 40101 before anything.
    expect((await call(harness, "POST", "/auth/orgs/invitations/accept", { body: { token } })).code).toBe(ErrorCode.InvalidToken);
    // No verified address: 40300.
    const { token: forUna } = await invite(harness, owner, orgId, unverified.email);
    const refusedUnverified = await accept(harness, unverified, forUna);
    expect([refusedUnverified.status, refusedUnverified.code]).toEqual([403, ErrorCode.Forbidden]);
    // Another address: 40101, exactly as an unknown token.
    const another = await accept(harness, stranger, token);
    expect(another.code).toBe(ErrorCode.InvalidToken);
    expect((await accept(harness, stranger, "not-a-token")).body).toEqual(another.body);
    // The holder accepts once; a replay is the same 40101.
    expect(ok(await accept(harness, invitee, token))).toMatchObject({ id: orgId, roles: ["member"] });
    expect((await accept(harness, invitee, token)).body).toEqual(another.body);

    // A resend voids the link sent before.
    const late = await person(harness, "lee");
    const first = await invite(harness, owner, orgId, late.email);
    const resent = await call(harness, "POST", `/auth/orgs/${orgId}/invitations/${first.invitation.id}/resend`, {
      token: owner.accessToken,
      headers: { "accept-language": "fr" },
    });
    expect(ok(resent)).toMatchObject({ id: first.invitation.id });
    const second = tokenOf(sentTo(harness, late.email, "organization_invitation").at(-1));
    expect(second).not.toBe(first.token);
    expect((await accept(harness, late, first.token)).body).toEqual(another.body);
    expect(ok(await accept(harness, late, second))).toMatchObject({ id: orgId });

    // A revocation voids it.
    const revokedOne = await person(harness, "rex");
    const revoked = await invite(harness, owner, orgId, revokedOne.email);
    expect(
      ok(await call(harness, "DELETE", `/auth/orgs/${orgId}/invitations/${revoked.invitation.id}`, { token: owner.accessToken })),
    ).toEqual({
      revoked: true,
    });
    expect((await accept(harness, revokedOne, revoked.token)).body).toEqual(another.body);
    expect(
      (await call(harness, "DELETE", `/auth/orgs/${orgId}/invitations/${revoked.invitation.id}`, { token: owner.accessToken }))
        .code,
    ).toBe(ErrorCode.NotFound);

    // A newer invitation to the same address voids the older one.
    const twice = await person(harness, "tia");
    const older = await invite(harness, owner, orgId, twice.email);
    const newer = await invite(harness, owner, orgId, twice.email);
    expect((await accept(harness, twice, older.token)).body).toEqual(another.body);
    ok(await accept(harness, twice, newer.token));

    // It expires after organizations.invitationTtl (7 days).
    const slow = await person(harness, "sly");
    const expiring = await invite(harness, owner, orgId, slow.email);
    harness.clock.advance(7 * 86_400_000 + 1000);
    const later = { ...slow, ...(await passwordSession(harness, "sly")) };
    expect((await accept(harness, later, expiring.token)).body).toEqual(another.body);
  });

  describe.each([
    ["without a token-state cache", 0],
    ["with tokenStateCacheSeconds: 60", 60],
  ])("OR-8 %s", (_name, tokenStateCacheSeconds) => {
    it("OR-8: a removed member's token is refused at the next request; a role change refuses the old token and the refresh carries the new roles; a deleted organization's tokens are refused", async () => {
      const harness = makeOrgAuth({ tokenStateCacheSeconds });
      const { orgId, owner, admin, member } = await staffedOrg(harness);
      const memberToken = await switchTo(harness, member, orgId);
      expect(claimsOf(memberToken)).toMatchObject({ org: orgId, org_roles: ["member"] });
      // Used once, so that a cache holds its state.
      ok(await me(harness, memberToken));
      await expect(authorize(harness, memberToken, { org: { roles: ["admin"] } })).rejects.toMatchObject({
        code: ErrorCode.Forbidden,
      });

      ok(
        await call(harness, "PATCH", `/auth/orgs/${orgId}/members/${member.id}`, {
          token: owner.accessToken,
          body: { roles: ["admin"] },
        }),
      );
      expect((await me(harness, memberToken)).code).toBe(ErrorCode.InvalidToken);
      const promoted = await refreshed(harness, member.refreshToken);
      expect(claimsOf(promoted.accessToken)).toMatchObject({ org: orgId, org_roles: ["admin"] });
      expect((await authorize(harness, promoted.accessToken, { org: { roles: ["admin"] } })).org).toEqual({
        id: orgId,
        roles: ["admin"],
      });

      ok(await call(harness, "DELETE", `/auth/orgs/${orgId}/members/${member.id}`, { token: owner.accessToken, body: {} }));
      expect((await me(harness, promoted.accessToken)).code).toBe(ErrorCode.InvalidToken);
      // The member is not signed out: the refresh carries no organization any more.
      const outside = await refreshed(harness, promoted.refreshToken);
      expect(claimsOf(outside.accessToken)).not.toHaveProperty("org");
      ok(await me(harness, outside.accessToken));

      const ownerToken = await switchTo(harness, owner, orgId);
      const adminToken = await switchTo(harness, admin, orgId);
      ok(await me(harness, ownerToken));
      ok(await me(harness, adminToken));
      ok(await call(harness, "DELETE", `/auth/orgs/${orgId}`, { token: ownerToken, body: {} }));
      expect((await me(harness, ownerToken)).code).toBe(ErrorCode.InvalidToken);
      expect((await me(harness, adminToken)).code).toBe(ErrorCode.InvalidToken);
      const after = await refreshed(harness, owner.refreshToken);
      expect(claimsOf(after.accessToken)).not.toHaveProperty("org");

      // Deleted by the instance's administrators: the same.
      const secondId = await createOrg(harness, { ...owner, accessToken: after.accessToken }, "Second");
      const inSecond = await switchTo(harness, { ...owner, accessToken: after.accessToken }, secondId);
      ok(await me(harness, inSecond));
      const operator = await instanceAdministrator(harness);
      ok(await call(harness, "DELETE", `/auth/admin/orgs/${secondId}`, { token: operator.accessToken, body: {} }));
      expect((await me(harness, inSecond)).code).toBe(ErrorCode.InvalidToken);
    });
  });

  it("OR-9: an organization requiring a second factor is not made active by a session without one (40104, required.amr mfa)", async () => {
    const harness = makeOrgAuth();
    const { orgId, owner, member } = await staffedOrg(harness);
    ok(
      await call(harness, "PATCH", `/auth/orgs/${orgId}`, {
        token: owner.accessToken,
        body: { rules: { requireSecondFactor: true } },
      }),
    );
    const refused = await call(harness, "POST", "/auth/orgs/active", { token: member.accessToken, body: { orgId } });
    expect([refused.status, refused.code]).toEqual([401, ErrorCode.StepUpRequired]);
    expect(refused.data).toEqual({ required: { amr: ["mfa"] }, enrolmentRequired: true });

    // Enrolled now from this session, which goes on but proved no second factor: still 40104, enrolment not asked.
    const setup = ok<{ secret: string }>(await call(harness, "POST", "/auth/2fa/setup", { token: member.accessToken }));
    const secret = decodeBase32(setup.secret);
    const enabled = await call(harness, "POST", "/auth/2fa/enable", {
      token: member.accessToken,
      body: { code: codeAt(secret, harness.clock.now) },
    });
    ok(enabled);
    const again = await call(harness, "POST", "/auth/orgs/active", { token: member.accessToken, body: { orgId } });
    expect(again.code).toBe(ErrorCode.StepUpRequired);
    expect(again.data).toEqual({ required: { amr: ["mfa"] }, enrolmentRequired: false });

    const pending = await login(harness.auth, { username: member.username, password: goodPassword });
    if (pending.status !== "totp_required") throw new Error(`expected the second factor, got ${pending.status}`);
    const verified = await verifyTotp(harness.auth, { tempToken: pending.tempToken, code: nextCode(harness, secret) });
    const strong = await call(harness, "POST", "/auth/orgs/active", { token: verified.accessToken, body: { orgId } });
    expect(claimsOf(ok<{ accessToken: string }>(strong).accessToken)).toMatchObject({ org: orgId });
  });

  it("OR-7: a new sign-in starts in the organization the user made active last, when it meets its rules; otherwise in none", async () => {
    const harness = makeOrgAuth();
    const { orgId, owner, member } = await staffedOrg(harness);
    expect(claimsOf((await passwordSession(harness, member.username)).accessToken)).not.toHaveProperty("org");
    await switchTo(harness, member, orgId);
    const next = await passwordSession(harness, member.username);
    expect(claimsOf(next.accessToken)).toMatchObject({ org: orgId, org_roles: ["member"] });
    ok(await me(harness, next.accessToken));
    ok(
      await call(harness, "PATCH", `/auth/orgs/${orgId}`, {
        token: owner.accessToken,
        body: { rules: { requireSecondFactor: true } },
      }),
    );
    expect(claimsOf((await passwordSession(harness, member.username)).accessToken)).not.toHaveProperty("org");
  });

  it("OR-9: a change of rules ends the organization's activation: its tokens are refused, and the refresh carries none", async () => {
    const harness = makeOrgAuth();
    const { orgId, owner, member } = await staffedOrg(harness);
    const token = await switchTo(harness, member, orgId);
    ok(await me(harness, token));
    ok(
      await call(harness, "PATCH", `/auth/orgs/${orgId}`, {
        token: owner.accessToken,
        body: { rules: { requireSecondFactor: true } },
      }),
    );
    expect((await me(harness, token)).code).toBe(ErrorCode.InvalidToken);
    expect(claimsOf((await refreshed(harness, member.refreshToken)).accessToken)).not.toHaveProperty("org");
  });

  it("OR-10: signInMethods: a session signed in another way does not make the organization active (40300 naming the ways)", async () => {
    const harness = makeOrgAuth();
    const { orgId, owner, member } = await staffedOrg(harness);
    const setMethods = (signInMethods: string[] | null) =>
      call(harness, "PATCH", `/auth/orgs/${orgId}`, { token: owner.accessToken, body: { rules: { signInMethods } } });
    expect(ok(await setMethods(["passkey", "provider"]))).toMatchObject({
      rules: { requireSecondFactor: false, signInMethods: ["passkey", "provider"] },
    });
    const refused = await call(harness, "POST", "/auth/orgs/active", { token: member.accessToken, body: { orgId } });
    expect([refused.status, refused.code]).toEqual([403, ErrorCode.Forbidden]);
    expect(refused.data).toEqual({ signInMethods: ["passkey", "provider"] });
    expect((await setMethods(["nonsense"])).code).toBe(ErrorCode.ValidationFailed);
    ok(await setMethods(["password"]));
    expect(claimsOf(await switchTo(harness, member, orgId))).toMatchObject({ org: orgId });
  });

  it("STUP-3: changing a member's roles and removing another member ask for a re-authentication after the recent-sign-in window (40001 without proof); leaving does not", async () => {
    const harness = makeOrgAuth();
    const { orgId, owner, member, other } = await staffedOrg(harness);
    harness.clock.advance(minutes(6));
    const path = (target: Person) => `/auth/orgs/${orgId}/members/${target.id}`;
    const noProof = await call(harness, "PATCH", path(member), { token: owner.accessToken, body: { roles: ["admin"] } });
    expect(noProof.code).toBe(ErrorCode.MissingParameter);
    const wrong = await call(harness, "PATCH", path(member), {
      token: owner.accessToken,
      body: { roles: ["admin"], password: "not it" },
    });
    expect(wrong.code).toBe(ErrorCode.AuthenticationFailed);
    ok(
      await call(harness, "PATCH", path(member), {
        token: owner.accessToken,
        body: { roles: ["admin"], password: goodPassword },
      }),
    );

    expect((await call(harness, "DELETE", path(other), { token: owner.accessToken })).code).toBe(ErrorCode.MissingParameter);
    expect((await call(harness, "DELETE", path(other), { token: owner.accessToken, body: {} })).code).toBe(
      ErrorCode.MissingParameter,
    );
    ok(await call(harness, "DELETE", path(other), { token: owner.accessToken, body: { password: goodPassword } }));
    // Leaving is the member's own act: no proof.
    ok(await call(harness, "DELETE", path(member), { token: member.accessToken }));
    // Deleting the organization asks it too.
    expect((await call(harness, "DELETE", `/auth/orgs/${orgId}`, { token: owner.accessToken })).code).toBe(
      ErrorCode.MissingParameter,
    );
    ok(await call(harness, "DELETE", `/auth/orgs/${orgId}`, { token: owner.accessToken, body: { password: goodPassword } }));
  });

  it("invitations by email: the message goes through email.send with the inviter's and the organization's names, in the Accept-Language's template, and never the secret in answers or events", async () => {
    const harness = makeOrgAuth();
    const owner = await person(harness, "olive");
    const orgId = await createOrg(harness, owner, "Acme");
    const answer = await call(harness, "POST", `/auth/orgs/${orgId}/invitations`, {
      token: owner.accessToken,
      body: { email: "ivy@people.example" },
      headers: { "accept-language": "de-CH, de;q=0.9" },
    });
    ok(answer);
    const [message] = sentTo(harness, "ivy@people.example", "organization_invitation");
    expect(message).toMatchObject({ kind: "organization_invitation", to: "ivy@people.example" });
    const secret = tokenOf(message);
    expect(message?.link).toBe(`${invitationUrl}#token=${secret}`);
    expect(JSON.stringify(answer.body)).not.toContain(secret);
    expect(JSON.stringify(harness.events)).not.toContain(secret);
    expect(JSON.stringify(harness.events)).not.toContain("ivy@people.example");
  });

  it("without email.invitationUrl the routes that send an invitation are 40400; without verifyDomain so is the verification", async () => {
    const harness = makeEmailAuth({ organizations: { enabled: true } });
    await addUserWithEmail(harness.auth, "olive", "olive@people.example");
    const owner = { ...(await passwordSession(harness, "olive")) };
    const orgId = ok<{ id: string }>(
      await call(harness, "POST", "/auth/orgs", { token: owner.accessToken, body: { name: "Acme" } }),
    ).id;
    const routeMissing = (answer: Answer) => expect([answer.status, answer.code]).toEqual([404, ErrorCode.NotFound]);
    routeMissing(
      await call(harness, "POST", `/auth/orgs/${orgId}/invitations`, {
        token: owner.accessToken,
        body: { email: "a@b.example" },
      }),
    );
    routeMissing(await call(harness, "POST", `/auth/orgs/${orgId}/invitations/x/resend`, { token: owner.accessToken }));
    ok(
      await call(harness, "POST", `/auth/orgs/${orgId}/domains`, { token: owner.accessToken, body: { domain: "acme.example" } }),
    );
    routeMissing(await call(harness, "POST", `/auth/orgs/${orgId}/domains/acme.example/verify`, { token: owner.accessToken }));
  });
});

describe("requireAuth's org option (authorizeRequest)", () => {
  it("{ org: true } lets through only a token with an active organization; { org: { roles } } only a member holding one of them there (40300 otherwise)", async () => {
    const harness = makeOrgAuth();
    const { orgId, admin, member } = await staffedOrg(harness);
    await expect(authorize(harness, member.accessToken, { org: true })).rejects.toMatchObject({ code: ErrorCode.Forbidden });
    const memberToken = await switchTo(harness, member, orgId);
    const adminToken = await switchTo(harness, admin, orgId);
    const access: AccessContext = await authorize(harness, memberToken, { org: true });
    expect(access.org).toEqual({ id: orgId, roles: ["member"] });
    await expect(authorize(harness, memberToken, { org: { roles: ["admin"] } })).rejects.toMatchObject({
      code: ErrorCode.Forbidden,
    });
    expect((await authorize(harness, adminToken, { org: { roles: ["owner", "admin"] } })).org?.roles).toEqual(["admin"]);
    await expect(authorize(harness, adminToken, { org: { roles: [] } })).rejects.toMatchObject({ code: ErrorCode.Forbidden });
    // The instance's roles are not the organization's.
    await expect(authorize(harness, adminToken, { roles: ["admin"] })).rejects.toMatchObject({ code: ErrorCode.Forbidden });
    // Beside step-up and roles.
    await expect(authorize(harness, adminToken, { org: true, secondFactor: true })).rejects.toMatchObject({
      code: ErrorCode.StepUpRequired,
    });
    await expect(authorize(harness, "not-a-token", { org: true })).rejects.toMatchObject({ code: ErrorCode.InvalidToken });
  });

  it("a bad org value is a TypeError, before any request", async () => {
    const harness = makeOrgAuth();
    const { member } = await staffedOrg(harness);
    for (const org of [
      false,
      "admin",
      ["admin"],
      { roles: "admin" },
      { roles: [1] },
      { roles: [""] },
      { role: ["admin"] },
      { roles: ["admin"], extra: 1 },
      null,
    ]) {
      const options = { org } as unknown as AuthorizeOptions & AccessTokensOnly;
      await expect(authorize(harness, member.accessToken, options), JSON.stringify(org)).rejects.toThrow(TypeError);
    }
    expect(await outcome(authorize(harness, member.accessToken, {}))).toBe("fulfilled");
  });
});
