import {
  type AuthConfig,
  type CreateAuthOptions,
  type DirectorySettings,
  type PublicUser,
  type RoleMapping,
  beginTotpSetup,
  enableTotp,
  getDirectoryPolicy,
  saveDirectoryPolicy,
  setUserDisabled,
} from "@portcullis/core";
import { ldapDirectory } from "@portcullis/ldap";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type TestAuth,
  base32Decode,
  createTestUser,
  generousThrottle,
  makeTestAuth,
  testPassword,
  totpCodeAt,
} from "../fixtures/auth.js";
import { type DirectoryUnderTest, directorySettingsFor } from "../fixtures/directory-settings.js";
import { addGroup, addPerson, deleteEntry, removeMember, renamePerson, uniqueLdapName } from "../fixtures/ldap-changes.js";
import { openConnectionsTo } from "../fixtures/open-connections.js";
import { describeNeedingService } from "../fixtures/required-service.js";
import {
  type SlapdServer,
  ldapAdGroups,
  ldapAdUsers,
  ldapGroups,
  ldapOus,
  ldapPeople,
  runLdapTool,
  slapdMissing,
  startSlapd,
} from "../fixtures/slapd.js";
import { type TcpForwarder, ldapOperationTags, startTcpForwarder } from "../fixtures/tcp-forwarder.js";
import { type CallResult, call, post } from "./client.js";
import { describeOpenApiDrift } from "./openapi-drift.js";
import { type RunningServer, type StartServer, adapters } from "./servers.js";

const describeWithSlapd = describeNeedingService("test/http/directory.test.ts", slapdMissing());

const paths = {
  login: "/api/v1/auth/login",
  me: "/api/v1/auth/me",
  refresh: "/api/v1/auth/refresh",
  verify: "/api/v1/auth/2fa/verify",
  policy: "/api/v1/auth/directory/policy",
  test: "/api/v1/auth/directory/policy/test",
  preview: "/api/v1/auth/directory/policy/preview",
} as const;

/** LDAP protocolOp tags (RFC 4511 §4.2) a recording forwarder looks for. */
const bindRequest = 0x60;
const extendedRequest = 0x77;
const unbindRequest = 0x42;

/** The policy's timeouts in the failure tests: small, so a hanging directory costs about a second. */
const quick = { connectTimeoutSecs: 1, searchTimeoutSecs: 1 } as const;

const { alice, bob, johnSmith, eve, daveInEngineering, daveInSales, zoe } = ldapPeople;

/** admins → "admin" (priority 1), engineers → "engineer" (priority 5): alice is in both. */
const standardMappings = (): RoleMapping[] => [
  { group: ldapGroups.admins.dn, role: "admin", priority: 1 },
  { group: ldapGroups.engineers.dn, role: "engineer", priority: 5 },
];

let slapd: SlapdServer;
/** Accepts connections and never answers. */
let silent: TcpForwarder;
/** A loopback port nothing listens on. */
let deadPort: number;

/** The PUT body of a policy for `directory`: StartTLS with its CA, its service account, people, the standard mappings, then `changes`. */
function policyFor(directory: DirectoryUnderTest, changes: Partial<DirectorySettings> = {}): DirectorySettings {
  return directorySettingsFor(directory, { mappings: standardMappings(), ...changes });
}
const policy = (changes: Partial<DirectorySettings> = {}) => policyFor(slapd, changes);

interface Harness extends TestAuth {
  server: RunningServer;
  /** What the auth reported through `onInternalError` (50300s included). */
  internalErrors: unknown[];
}

const running: RunningServer[] = [];

/**
 * An auth with `ldapDirectory()`, generous throttling and a saved policy (`options.policy`, by
 * default `policy()`; null saves none), served by one adapter. Saving goes through core, before any login.
 */
async function serve(
  start: StartServer,
  options: { policy?: DirectorySettings | null; config?: Partial<AuthConfig> } = {},
): Promise<Harness> {
  const internalErrors: unknown[] = [];
  const overrides: Partial<AuthConfig> & CreateAuthOptions = {
    directory: ldapDirectory(),
    throttle: generousThrottle,
    onInternalError: (error) => internalErrors.push(error),
    ...options.config,
  };
  const testAuth = makeTestAuth(overrides);
  const saved = options.policy === undefined ? policy() : options.policy;
  if (saved !== null) await saveDirectoryPolicy(testAuth.auth, saved);
  const server = await start(testAuth.auth);
  running.push(server);
  return { ...testAuth, server, internalErrors };
}

const directoryLogin = (server: RunningServer, username: string, password: string) =>
  post(server, paths.login, { username, password, provider: "directory" });

const localLogin = (server: RunningServer, username: string, password = testPassword) =>
  post(server, paths.login, { username, password, provider: "local" });

/** The `data` of a completed sign-in. */
interface Tokens {
  accessToken: string;
  refreshToken: string;
  user: PublicUser;
}

/** Signs in through the directory and expects tokens. */
async function signedIn(server: RunningServer, username: string, password: string): Promise<Tokens> {
  const response = await directoryLogin(server, username, password);
  expect(response.body.code, `${username}: ${response.text}`).toBe(0);
  expect(response.status).toBe(200);
  return response.body.data as Tokens;
}

/** A local user with the admin role, signed in over HTTP: its access token. */
async function adminToken(harness: Harness, username = "operator"): Promise<string> {
  await createTestUser(harness.auth, username, ["admin"]);
  const response = await localLogin(harness.server, username);
  expect(response.body.code, response.text).toBe(0);
  return response.body.data.accessToken as string;
}

const me = (server: RunningServer, token: string) => call(server, "GET", paths.me, { token });

/** The payload of a JWT, unverified: for reading `roles` and `sid`. */
function claimsOf(token: string): { sub: string; sid: string; roles: string[]; tv: number } {
  return JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8"));
}

const lowerSorted = (dns: readonly string[]) => dns.map((dn) => dn.toLowerCase()).sort();

/** The headers that must match between two answers (EN-1): all but those a transport varies. */
function comparableHeaders(response: CallResult): Record<string, string> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (!["date", "keep-alive", "connection"].includes(name)) headers[name] = value;
  });
  return headers;
}

/** HTTP-5: a 50300 is the bare envelope with the fixed message and a request id, nothing of LDAP. */
function expectDirectoryUnavailable(response: CallResult): void {
  expect(response.status, response.text).toBe(503);
  expect(response.body).toEqual({ code: 50300, message: "The directory is unavailable", requestId: expect.any(String) });
  expect(Object.keys(response.body).sort()).toEqual(["code", "message", "requestId"]);
}

async function withRecorder<T>(targetPort: number | null, use: (recorder: TcpForwarder) => Promise<T>): Promise<T> {
  const recorder = await startTcpForwarder(targetPort);
  try {
    return await use(recorder);
  } finally {
    await recorder.close();
  }
}

describeWithSlapd("Directory (LDAP) login over HTTP against slapd", () => {
  beforeAll(async () => {
    slapd = await startSlapd();
    silent = await startTcpForwarder(null);
    const stopped = await startTcpForwarder(null);
    deadPort = stopped.port;
    await stopped.close();
  });
  afterAll(async () => {
    await silent?.close();
    await slapd?.stop();
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((server) => server.close()));
  });

  for (const [name, start] of adapters) {
    describe(name, () => {
      it("STUP-4, ASVS 6.3.3: a directory user of a role that requires a second factor gets 40105, reaches nothing with its token, enrols TOTP and gets tokens; the next directory sign-in asks for the code", async () => {
        const harness = await serve(start, { config: { secondFactor: { required: { roles: ["admin"] } } } });
        const { server, auth } = harness;
        const enrol = await directoryLogin(server, alice.uid, alice.password);
        expect([enrol.status, enrol.body.code], enrol.text).toEqual([200, 40105]);
        const { tempToken } = enrol.body.data;
        expect((await me(server, tempToken)).body.code).toBe(40101);
        const setup = await post(server, "/api/v1/auth/2fa/enrolment/setup", { tempToken });
        const secret = base32Decode(setup.body.data.secret);
        const enabled = await post(server, "/api/v1/auth/2fa/enrolment/enable", {
          tempToken,
          code: await totpCodeAt(auth, secret),
        });
        expect(enabled.body).toMatchObject({ code: 0, data: { user: { roles: ["admin"], totpEnabled: true } } });
        expect((await me(server, enabled.body.data.accessToken)).body.code).toBe(0);
        await signedIn(server, johnSmith.uid, johnSmith.password);
        expect((await directoryLogin(server, alice.uid, alice.password)).body.code).toBe(40102);
      });

      it("admin routes: no token is 40101, a user without the admin role 40300, and a refused PUT changes nothing", async () => {
        const harness = await serve(start);
        const { server, auth } = harness;
        const engineer = await signedIn(server, johnSmith.uid, johnSmith.password);
        expect(engineer.user.roles).toEqual(["engineer"]);
        const before = JSON.stringify(await auth.storage.settings.get("directory.policy"));
        const hostile = { ...policy({ serverUrl: `ldap://127.0.0.1:${deadPort}` }), bindPassword: "hostile password" };
        const requests = [
          { method: "GET", path: paths.policy, json: undefined },
          { method: "PUT", path: paths.policy, json: hostile },
          { method: "POST", path: paths.test, json: hostile },
          { method: "POST", path: paths.preview, json: { username: alice.uid } },
        ] as const;
        for (const { method, path, json } of requests) {
          const anonymous = await call(server, method, path, json === undefined ? {} : { json });
          expect([anonymous.status, anonymous.body.code], `${method} ${path} without a token`).toEqual([401, 40101]);
          const forbidden = await call(server, method, path, { json, token: engineer.accessToken });
          expect([forbidden.status, forbidden.body.code], `${method} ${path} as an engineer`).toEqual([403, 40300]);
          expect(forbidden.body).not.toHaveProperty("data");
        }
        expect(JSON.stringify(await auth.storage.settings.get("directory.policy"))).toBe(before);
        expect((await me(server, engineer.accessToken)).body.code).toBe(0);
        await signedIn(server, alice.uid, alice.password);
      });

      it("admin routes: PUT saves (42200 names the bad field), GET never returns bindPassword, an empty bindPassword keeps it, and it is not stored in plain text (ST-3)", async () => {
        const harness = await serve(start, { policy: null });
        const { server, auth } = harness;
        const token = await adminToken(harness);

        const initial = await call(server, "GET", paths.policy, { token });
        expect(initial.body).toMatchObject({ code: 0, data: { enabled: false, credentialConfigured: false } });
        expect((await directoryLogin(server, alice.uid, alice.password)).body.code).toBe(40400);

        const saved = await call(server, "PUT", paths.policy, { token, json: policy() });
        expect(saved.status, saved.text).toBe(200);
        expect(saved.body).toMatchObject({
          code: 0,
          data: { enabled: true, serverUrl: slapd.url, bindDn: slapd.serviceDn, credentialConfigured: true },
        });
        expect(saved.body.data).not.toHaveProperty("bindPassword");
        expect(saved.text).not.toContain(slapd.servicePassword);

        const read = await call(server, "GET", paths.policy, { token });
        expect(read.body.code).toBe(0);
        expect(read.body.data).not.toHaveProperty("bindPassword");
        expect(read.body.data).toMatchObject({
          credentialConfigured: true,
          mappings: standardMappings(),
          userBaseDn: ldapOus.people,
        });
        expect(read.text).not.toContain(slapd.servicePassword);
        await signedIn(server, alice.uid, alice.password);

        for (const [field, changes] of [
          ["userFilter", { userFilter: "(uid=alice)" }],
          ["connectTimeoutSecs", { connectTimeoutSecs: 0 }],
          ["serverUrl", { serverUrl: "https://ldap.example.test" }],
          ["mappings[0].priority", { mappings: [{ group: ldapGroups.admins.dn, role: "admin", priority: 1.5 }] }],
          ["loginOrder", { loginOrder: "local-first" }],
        ] as const) {
          const refused = await call(server, "PUT", paths.policy, { token, json: { ...policy(), ...changes } });
          expect([refused.status, refused.body.code], field).toEqual([422, 42200]);
          expect(refused.body.message.startsWith(field), refused.body.message).toBe(true);
        }
        expect((await call(server, "GET", paths.policy, { token })).body.data).toEqual(read.body.data);

        const kept = await call(server, "PUT", paths.policy, {
          token,
          json: { ...policy({ fallbackRole: "reader" }), bindPassword: "" },
        });
        expect(kept.body).toMatchObject({ code: 0, data: { credentialConfigured: true, fallbackRole: "reader" } });
        expect((await signedIn(server, bob.uid, bob.password)).user.roles).toEqual(["reader"]);
        const { bindPassword: _left, ...withoutPassword } = policy();
        expect((await call(server, "PUT", paths.policy, { token, json: withoutPassword })).body.data.credentialConfigured).toBe(
          true,
        );
        await signedIn(server, alice.uid, alice.password);

        const stored = JSON.stringify(await auth.storage.settings.get("directory.policy"));
        const secret = Buffer.from(slapd.servicePassword, "utf8");
        for (const form of [
          slapd.servicePassword,
          secret.toString("base64"),
          secret.toString("base64url"),
          secret.toString("hex"),
        ]) {
          expect(stored).not.toContain(form);
        }
      });

      it("admin routes: policy/test says ok, or which step failed (bind, tls, configuration, connection, timeout, search), and saves nothing", async () => {
        const harness = await serve(start);
        const { server, auth } = harness;
        const token = await adminToken(harness);
        const before = await getDirectoryPolicy(auth);
        const tried = async (json: unknown) => {
          const response = await post(server, paths.test, json, { token });
          expect(response.body.code, response.text).toBe(0);
          expect(response.text).not.toContain(slapd.servicePassword);
          return response.body.data;
        };
        expect(await tried({})).toEqual({ ok: true });
        expect(await tried({ bindPassword: "not the reader password" })).toMatchObject({ ok: false, category: "bind" });
        // A policy that sends the bind password elsewhere, or another way, needs it typed again (ST-3).
        const again = { bindPassword: slapd.servicePassword };
        const elsewhere = await tried({ caBundle: slapd.wrongCaPem });
        expect(elsewhere).toMatchObject({ ok: false, category: "configuration" });
        expect(elsewhere.message.startsWith("bindPassword must be given again")).toBe(true);
        expect(await tried({ caBundle: slapd.wrongCaPem, ...again })).toMatchObject({ ok: false, category: "tls" });
        expect(await tried({ serverUrl: slapd.ldapsUrl, caBundle: slapd.wrongCaPem, ...again })).toMatchObject({
          ok: false,
          category: "tls",
        });
        const configuration = await tried({ userFilter: "(uid=alice)" });
        expect(configuration).toMatchObject({ ok: false, category: "configuration" });
        expect(configuration.message.startsWith("userFilter")).toBe(true);
        expect(await tried({ serverUrl: `ldap://127.0.0.1:${deadPort}`, ...quick, ...again })).toMatchObject({
          ok: false,
          category: "connection",
        });
        const started = performance.now();
        expect(await tried({ serverUrl: `ldap://127.0.0.1:${silent.port}`, ...quick, ...again })).toMatchObject({
          ok: false,
          category: "timeout",
        });
        expect(performance.now() - started).toBeLessThan(quick.connectTimeoutSecs * 1000 + 2000);
        expect(await tried({ userBaseDn: `ou=nowhere,${slapd.baseDn}` })).toMatchObject({ ok: false, category: "search" });

        expect(await getDirectoryPolicy(auth)).toEqual(before);
        await signedIn(server, alice.uid, alice.password);
      });

      it("LDAP-5: policy/preview shows identity, groups, the matching rule and the roles; an unknown username is 40400", async () => {
        const harness = await serve(start);
        const { server } = harness;
        const token = await adminToken(harness);
        const preview = await post(server, paths.preview, { username: alice.uid }, { token });
        expect(preview.body.code, preview.text).toBe(0);
        expect(Object.keys(preview.body.data).sort()).toEqual([
          "displayName",
          "email",
          "groups",
          "matchedRule",
          "roles",
          "username",
        ]);
        expect(preview.body.data).toMatchObject({
          username: alice.uid,
          displayName: alice.displayName,
          email: alice.mail,
          matchedRule: { group: ldapGroups.admins.dn, role: "admin", priority: 1 },
          roles: ["admin"],
        });
        expect(lowerSorted(preview.body.data.groups)).toEqual(lowerSorted([ldapGroups.engineers.dn, ldapGroups.admins.dn]));

        const denied = await post(server, paths.preview, { username: bob.uid }, { token });
        expect(denied.body.data).toMatchObject({ username: bob.uid, groups: [], matchedRule: null, roles: [] });

        const unknown = await post(server, paths.preview, { username: "nobody-here" }, { token });
        expect([unknown.status, unknown.body.code]).toEqual([404, 40400]);
        expect((await post(server, paths.preview, { username: "" }, { token })).body.code).toBe(40001);
      });

      it("LDAP-2, LDAP-5: a directory login in nested OUs gives tokens, /me shows the user, and the lowest priority number among two mapped groups wins", async () => {
        const harness = await serve(start);
        const { server, auth } = harness;
        const signed = await signedIn(server, alice.uid, alice.password);
        expect(signed).toMatchObject({
          tokenType: "Bearer",
          user: { username: alice.uid, roles: ["admin"], totpEnabled: false },
        });
        expect(typeof signed.refreshToken).toBe("string");
        expect(claimsOf(signed.accessToken).roles).toEqual(["admin"]);
        const profile = await me(server, signed.accessToken);
        expect(profile.body).toMatchObject({ code: 0, data: { id: signed.user.id, username: alice.uid, roles: ["admin"] } });

        // A DN slapd returns with \2C: bound as returned.
        expect((await signedIn(server, johnSmith.uid, johnSmith.password)).user.roles).toEqual(["engineer"]);

        // The same two groups with the priorities swapped, and listed in the other order: priority decides, not order.
        await saveDirectoryPolicy(
          auth,
          policy({
            mappings: [
              { group: ldapGroups.engineers.dn, role: "engineer", priority: 1 },
              { group: ldapGroups.admins.dn, role: "admin", priority: 5 },
            ],
          }),
        );
        const swapped = await signedIn(server, alice.uid, alice.password);
        expect(swapped.user).toMatchObject({ id: signed.user.id, roles: ["engineer"] });
        expect((await me(server, swapped.accessToken)).body.data.roles).toEqual(["engineer"]);
      });

      it("LDAP-5: a user in no mapped group gets fallbackRole, or 40300 without one (told only after the password is proven: a wrong one is 40100)", async () => {
        const harness = await serve(start, { policy: policy({ fallbackRole: "reader" }) });
        const { server, auth } = harness;
        const fallback = await signedIn(server, bob.uid, bob.password);
        expect(fallback.user.roles).toEqual(["reader"]);
        expect((await me(server, fallback.accessToken)).body.data).toMatchObject({ username: bob.uid, roles: ["reader"] });

        await saveDirectoryPolicy(auth, policy({ fallbackRole: null }));
        const denied = await directoryLogin(server, bob.uid, bob.password);
        expect([denied.status, denied.body.code]).toEqual([403, 40300]);
        expect(denied.body).not.toHaveProperty("data");
        const wrong = await directoryLogin(server, bob.uid, "not bob's password");
        expect([wrong.status, wrong.body.code]).toEqual([401, 40100]);
        expect((await me(server, fallback.accessToken)).body.code).toBe(40101);
      });

      it("LDAP-5: groups come from memberOf or from groupSearch; a non-ASCII password deep in nested OUs is sent as typed", async () => {
        const staffMapping = { group: ldapGroups.staff.dn, role: "staff", priority: 3 };
        const harness = await serve(start, { policy: policy({ mappings: [...standardMappings(), staffMapping] }) });
        const { server, auth } = harness;
        // memberOf: zoe (ou=sales,ou=eu,ou=people) is in staff; nested groups are not resolved, so alice is not.
        expect((await signedIn(server, zoe.uid, zoe.password)).user.roles).toEqual(["staff"]);
        expect((await signedIn(server, alice.uid, alice.password)).user.roles).toEqual(["admin"]);

        // groupSearch over groupOfNames by the user's DN, with a groupAttribute no entry has.
        await saveDirectoryPolicy(
          auth,
          policy({
            groupAttribute: "description",
            groupSearch: { baseDn: ldapOus.groups, filter: "(&(objectClass=groupOfNames)(member={{dn}}))" },
            mappings: [staffMapping, { group: ldapGroups.engineers.dn, role: "engineer", priority: 5 }],
          }),
        );
        expect((await signedIn(server, johnSmith.uid, johnSmith.password)).user.roles).toEqual(["engineer"]);
        expect((await signedIn(server, zoe.uid, zoe.password)).user.roles).toEqual(["staff"]);
        const token = await adminToken(harness);
        const preview = await post(server, paths.preview, { username: johnSmith.uid }, { token });
        expect(lowerSorted(preview.body.data.groups)).toEqual(lowerSorted([ldapGroups.engineers.dn]));

        // Without either source of groups, the same users are denied.
        await saveDirectoryPolicy(auth, policy({ groupAttribute: "description", groupSearch: null }));
        expect((await directoryLogin(server, johnSmith.uid, johnSmith.password)).body.code).toBe(40300);
      });

      it("EN-1, LDAP-1: wrong password, unknown user, an ambiguous username and injection usernames give the local wrong password's status, headers and bytes", async () => {
        const harness = await serve(start);
        const { server } = harness;
        await createTestUser(harness.auth, "local-reference");
        const reference = await localLogin(server, "local-reference", "not the password");
        expect([reference.status, reference.body]).toEqual([401, { code: 40100, message: "Invalid username or password" }]);

        const attempts: [username: string, password: string][] = [
          [alice.uid, "not alice's password"],
          [alice.uid, `${alice.password} `],
          ["nobody-here", alice.password],
          [daveInEngineering.uid, daveInEngineering.password],
          [daveInSales.uid, daveInSales.password],
          ["*", alice.password],
          ["admin*", alice.password],
          ["ali*", alice.password],
          ["a*e", alice.password],
          ["*)(uid=*))(|(uid=*", alice.password],
          ["alice)(uid=*", alice.password],
          ["*)(|(objectClass=*", alice.password],
          ["\u0000", alice.password],
          ["alice\u0000", alice.password],
          ["ali\u0000ce", alice.password],
          ["\\", alice.password],
          ["alice\\", alice.password],
          ["\\2a", alice.password],
          ["ali\\2a", alice.password],
          ["\\61lice", alice.password],
          ["eve\\2a\\28ops\\29", eve.password],
        ];
        for (const [username, password] of attempts) {
          for (const provider of ["directory", undefined]) {
            const response = await post(server, paths.login, { username, password, provider });
            const label = `${JSON.stringify(username)} via ${provider ?? "no provider"}`;
            expect(response.status, label).toBe(reference.status);
            expect(response.text, label).toBe(reference.text);
            expect(comparableHeaders(response), label).toEqual(comparableHeaders(reference));
          }
        }
        // Escaping, not refusing: the uid with filter characters signs in as itself.
        expect((await signedIn(server, eve.uid, eve.password)).user).toMatchObject({ username: eve.uid, roles: ["engineer"] });
      });

      it("EN-1: a disabled directory account is told 40300 only after the directory proved the password; a wrong one stays 40100", async () => {
        const harness = await serve(start);
        const { server, auth } = harness;
        const signed = await signedIn(server, alice.uid, alice.password);
        await setUserDisabled(auth, { userId: signed.user.id, disabled: true });
        const wrong = await directoryLogin(server, alice.uid, "not alice's password");
        expect([wrong.status, wrong.body]).toEqual([401, { code: 40100, message: "Invalid username or password" }]);
        const right = await directoryLogin(server, alice.uid, alice.password);
        expect([right.status, right.body.code]).toEqual([403, 40300]);
        expect(right.body).not.toHaveProperty("data");
        expect((await me(server, signed.accessToken)).body.code).toBe(40101);
      });

      it("RL-1: directory failures count against the account like local ones: past the limit even the right password is 42900 with Retry-After", async () => {
        const harness = await serve(start, {
          config: { throttle: { account: [{ limit: 3, window: "15m" }], ip: [{ limit: 1000, window: "15m" }] } },
        });
        const { server } = harness;
        for (let attempt = 0; attempt < 3; attempt += 1) {
          expect((await directoryLogin(server, alice.uid, `wrong ${attempt}`)).body.code).toBe(40100);
        }
        for (const provider of ["directory", "local"]) {
          const throttled = await post(server, paths.login, { username: alice.uid, password: alice.password, provider });
          expect([throttled.status, throttled.body.code], provider).toEqual([429, 42900]);
          expect(Number(throttled.headers.get("retry-after")), provider).toBeGreaterThan(0);
        }
      });

      it("RL-1: once alice is locked, no spelling slapd matches to her gets her password through: spaces around it are refused before the directory, ALİCE spends her own counter", async () => {
        const harness = await serve(start, {
          config: { throttle: { account: [{ limit: 3, window: "15m" }], ip: [{ limit: 1000, window: "15m" }] } },
        });
        const { server } = harness;
        for (let attempt = 0; attempt < 3; attempt += 1) {
          expect((await directoryLogin(server, alice.uid, `wrong ${attempt}`)).body.code).toBe(40100);
        }
        for (const spelling of [
          ` ${alice.uid}`,
          `${alice.uid}  `,
          `    ${alice.uid}    `,
          `\u00a0${alice.uid}\u00a0`,
          `${alice.uid}\u2003`,
        ]) {
          expect((await directoryLogin(server, spelling, alice.password)).body.code, JSON.stringify(spelling)).toBe(40100);
        }
        // Another case mapping that slapd folds into alice's uid, and fullwidth letters NFKC folds: her counter, spent.
        for (const spelling of [alice.uid.toUpperCase().replace("I", "\u0130"), `\uff41${alice.uid.slice(1)}`]) {
          expect((await directoryLogin(server, spelling, alice.password)).body.code, JSON.stringify(spelling)).toBe(42900);
        }
      });

      it("LDAP-3: an empty password or username is 40001 before any bind, never a session", async () => {
        const harness = await serve(start);
        for (const body of [
          { username: alice.uid, password: "", provider: "directory" },
          { username: "", password: alice.password, provider: "directory" },
          { username: alice.uid, password: "" },
        ]) {
          const response = await post(harness.server, paths.login, body);
          expect([response.status, response.body], JSON.stringify(body)).toEqual([
            400,
            { code: 40001, message: `${body.password === "" ? "password" : "username"} is required` },
          ]);
        }
      });

      it("a directory username held by a local account is 40900 and the local account is unchanged", async () => {
        const harness = await serve(start, { policy: policy({ fallbackRole: "reader" }) });
        const { server, auth } = harness;
        const local = await createTestUser(auth, bob.uid);
        const before = await auth.storage.users.findById(local.id);
        for (let attempt = 0; attempt < 2; attempt += 1) {
          const collided = await directoryLogin(server, bob.uid, bob.password);
          expect([collided.status, collided.body.code], collided.text).toEqual([409, 40900]);
        }
        expect(await auth.storage.users.findById(local.id)).toEqual(before);
        expect(await auth.storage.identities.listByUser(local.id)).toEqual([]);
        const signedInLocally = await localLogin(server, bob.uid);
        expect(signedInLocally.body.data.user).toEqual({
          id: local.id,
          username: bob.uid,
          roles: ["user"],
          totpEnabled: false,
          email: null,
          emailVerified: false,
          createdAt: local.createdAt,
        });
      });

      it("EN-3, TMP-1: a directory user with TOTP gets 40102 and a temporary token, and 2fa/verify completes the login", async () => {
        const harness = await serve(start);
        const { server, auth } = harness;
        const first = await signedIn(server, alice.uid, alice.password);
        const { sid } = claimsOf(first.accessToken);
        const setup = await beginTotpSetup(auth, { userId: first.user.id, sessionId: sid });
        const secret = base32Decode(setup.secret);
        await enableTotp(auth, { userId: first.user.id, sessionId: sid, code: await totpCodeAt(auth, secret, -1) });

        const wrong = await directoryLogin(server, alice.uid, "not alice's password");
        expect(wrong.body.code).toBe(40100);
        const pending = await directoryLogin(server, alice.uid, alice.password);
        expect(pending.status).toBe(200);
        expect(pending.body.code).toBe(40102);
        expect(Object.keys(pending.body.data)).toEqual(["tempToken"]);
        const verified = await post(server, paths.verify, {
          tempToken: pending.body.data.tempToken,
          code: await totpCodeAt(auth, secret),
        });
        expect(verified.body.code, verified.text).toBe(0);
        expect(verified.body.data.user).toEqual({ ...first.user, totpEnabled: true });
        expect((await me(server, verified.body.data.accessToken)).body.data.id).toBe(first.user.id);
      });

      it("loginOrder directory-first: no provider signs a directory user in through the directory, and a local-only user falls back to local", async () => {
        const harness = await serve(start, { policy: policy({ loginOrder: "directory-first" }) });
        const { server, auth } = harness;
        const local = await createTestUser(auth, "local-only");
        const viaDirectory = await post(server, paths.login, { username: alice.uid, password: alice.password });
        expect(viaDirectory.body.data.user, viaDirectory.text).toMatchObject({ username: alice.uid, roles: ["admin"] });
        const viaLocal = await post(server, paths.login, { username: local.username, password: testPassword });
        expect(viaLocal.body.data.user, viaLocal.text).toMatchObject({ id: local.id, username: local.username });
        const wrongLocal = await post(server, paths.login, { username: local.username, password: "not the password" });
        expect(wrongLocal.body.code).toBe(40100);
        // A directory user's password is not tried against local accounts after the directory refused it.
        expect((await post(server, paths.login, { username: alice.uid, password: "wrong" })).body.code).toBe(40100);
      });

      it("LDAP-4: with loginOrder explicit, a login without provider never contacts the directory; directory-first with the directory down fails closed", async () => {
        await withRecorder(slapd.port, async (recorder) => {
          const serverUrl = `ldap://127.0.0.1:${recorder.port}`;
          const harness = await serve(start, { policy: policy({ serverUrl }) });
          const { server, auth } = harness;
          const local = await createTestUser(auth, "local-only");
          expect((await post(server, paths.login, { username: local.username, password: testPassword })).body.code).toBe(0);
          expect((await post(server, paths.login, { username: alice.uid, password: alice.password })).body.code).toBe(40100);
          expect(recorder.sent().length).toBe(0);
          await signedIn(server, alice.uid, alice.password);
          expect(recorder.sent().length).toBeGreaterThan(0);

          await saveDirectoryPolicy(auth, policy({ serverUrl: `ldap://127.0.0.1:${deadPort}`, ...quick }));
          expect((await post(server, paths.login, { username: local.username, password: testPassword })).body.code).toBe(0);
          await saveDirectoryPolicy(
            auth,
            policy({ serverUrl: `ldap://127.0.0.1:${deadPort}`, ...quick, loginOrder: "directory-first" }),
          );
          expectDirectoryUnavailable(await post(server, paths.login, { username: local.username, password: testPassword }));
          expect((await localLogin(server, local.username)).body.code).toBe(0);
        });
      });

      it("LDAP-5: at refresh the groups are read again: a lost group changes the roles, no mapped group left is 40101 and ends the older tokens", async () => {
        const person = await addPerson(slapd, "refresh");
        const alpha = await addGroup(slapd, "alpha", [person.dn]);
        const beta = await addGroup(slapd, "beta", [person.dn]);
        const harness = await serve(start, {
          policy: policy({
            mappings: [
              { group: alpha, role: "alpha", priority: 1 },
              { group: beta, role: "beta", priority: 2 },
            ],
          }),
        });
        const { server } = harness;
        const first = await signedIn(server, person.uid, person.password);
        expect(claimsOf(first.accessToken).roles).toEqual(["alpha"]);

        await removeMember(slapd, alpha, person.dn);
        const second = await post(server, paths.refresh, { refreshToken: first.refreshToken });
        expect(second.body.code, second.text).toBe(0);
        expect(second.body.data.user).toMatchObject({ id: first.user.id, roles: ["beta"] });
        expect(claimsOf(second.body.data.accessToken).roles).toEqual(["beta"]);
        expect((await me(server, second.body.data.accessToken)).body.data.roles).toEqual(["beta"]);

        await removeMember(slapd, beta, person.dn);
        const lost = await post(server, paths.refresh, { refreshToken: second.body.data.refreshToken });
        expect([lost.status, lost.body.code]).toEqual([401, 40101]);
        for (const token of [first.accessToken, second.body.data.accessToken]) {
          expect((await me(server, token)).body.code).toBe(40101);
        }
        expect((await post(server, paths.refresh, { refreshToken: second.body.data.refreshToken })).body.code).toBe(40101);
        // Denied at login too now.
        expect((await directoryLogin(server, person.uid, person.password)).body.code).toBe(40300);
      });

      it("LDAP-5: an entry deleted from the directory loses its session at the next refresh, and its older access token with it", async () => {
        const person = await addPerson(slapd, "deleted");
        const group = await addGroup(slapd, "kept", [person.dn]);
        const harness = await serve(start, {
          policy: policy({ fallbackRole: "reader", mappings: [{ group, role: "member", priority: 1 }] }),
        });
        const { server } = harness;
        const signed = await signedIn(server, person.uid, person.password);
        expect(signed.user.roles).toEqual(["member"]);
        await deleteEntry(slapd, person.dn);
        const refreshed = await post(server, paths.refresh, { refreshToken: signed.refreshToken });
        expect([refreshed.status, refreshed.body.code]).toEqual([401, 40101]);
        expect((await me(server, signed.accessToken)).body.code).toBe(40101);
        expect((await directoryLogin(server, person.uid, person.password)).body.code).toBe(40100);
      });

      it("LDAP-5: with refreshMapping false a refresh keeps the roles without reading the directory again", async () => {
        const person = await addPerson(slapd, "static");
        const group = await addGroup(slapd, "static", [person.dn]);
        const harness = await serve(start, {
          policy: policy({ refreshMapping: false, mappings: [{ group, role: "member", priority: 1 }] }),
        });
        const { server } = harness;
        const signed = await signedIn(server, person.uid, person.password);
        await removeMember(slapd, group, person.dn);
        await deleteEntry(slapd, person.dn);
        const refreshed = await post(server, paths.refresh, { refreshToken: signed.refreshToken });
        expect(refreshed.body.code, refreshed.text).toBe(0);
        expect(refreshed.body.data.user).toMatchObject({ id: signed.user.id, roles: ["member"] });
        expect((await me(server, refreshed.body.data.accessToken)).body.code).toBe(0);
      });

      // Core bug (reported): a role lost in the directory is applied to new tokens only; access tokens that carry
      // it stay valid until they expire, although the contract says changing roles raises the token version.
      it("TV-1, LDAP-5: a role lost in the directory ends the access tokens that still carry it, in every session", async () => {
        const person = await addPerson(slapd, "demoted");
        const admins = await addGroup(slapd, "admins", [person.dn]);
        const users = await addGroup(slapd, "users", [person.dn]);
        const harness = await serve(start, {
          policy: policy({
            mappings: [
              { group: admins, role: "admin", priority: 1 },
              { group: users, role: "user", priority: 2 },
            ],
          }),
        });
        const { server } = harness;
        const adminOnly = (token: string) => call(server, "DELETE", "/api/v1/things/1", { token });
        const first = await signedIn(server, person.uid, person.password);
        const otherSession = await signedIn(server, person.uid, person.password);
        expect((await adminOnly(first.accessToken)).body.code).toBe(0);

        await removeMember(slapd, admins, person.dn);
        const refreshed = await post(server, paths.refresh, { refreshToken: first.refreshToken });
        expect(refreshed.body.data.user.roles, refreshed.text).toEqual(["user"]);
        expect((await adminOnly(refreshed.body.data.accessToken)).body.code).toBe(40300);
        for (const [label, token] of [
          ["the refreshed session's older access token", first.accessToken],
          ["another session's access token", otherSession.accessToken],
        ] as const) {
          const stale = await adminOnly(token);
          expect.soft([stale.status, stale.body.code], label).toEqual([401, 40101]);
        }
      });

      // Core bug (reported): the write-only bind password goes to whatever server a policy test names.
      it("ST-3: policy/test never sends the stored bind password to a server other than the saved one", async () => {
        await withRecorder(null, async (recorder) => {
          const harness = await serve(start);
          const token = await adminToken(harness);
          const tried = await post(
            harness.server,
            paths.test,
            { serverUrl: `ldap://127.0.0.1:${recorder.port}`, startTls: false, allowPlaintext: true, ...quick },
            { token },
          );
          expect(tried.body.code, tried.text).toBe(0);
          expect(tried.body.data.ok).toBe(false);
          const leaked = recorder.sent().includes(Buffer.from(slapd.servicePassword, "utf8"));
          expect(leaked, "the stored bind password reached the server the test named").toBe(false);
        });
      });

      it("TV-1: saving the policy ends directory users' access and refresh tokens, not local users'", async () => {
        const harness = await serve(start);
        const { server } = harness;
        const token = await adminToken(harness);
        const directoryUser = await signedIn(server, alice.uid, alice.password);
        expect((await me(server, directoryUser.accessToken)).body.code).toBe(0);

        const saved = await call(server, "PUT", paths.policy, { token, json: { fallbackRole: "reader" } });
        expect(saved.body.code, saved.text).toBe(0);
        const stale = await me(server, directoryUser.accessToken);
        expect([stale.status, stale.body.code]).toEqual([401, 40101]);
        expect((await post(server, paths.refresh, { refreshToken: directoryUser.refreshToken })).body.code).toBe(40101);
        expect((await me(server, token)).body).toMatchObject({ code: 0, data: { username: "operator", roles: ["admin"] } });
        expect((await signedIn(server, alice.uid, alice.password)).user.id).toBe(directoryUser.user.id);
      });

      it("LDAP-4, HTTP-5: a stopped directory and a silent one are 50300 within the timeouts while local logins go on", async () => {
        const harness = await serve(start, { policy: policy({ serverUrl: `ldap://127.0.0.1:${deadPort}`, ...quick }) });
        const { server, auth } = harness;
        const local = await createTestUser(auth, "local-only");
        const budget = quick.connectTimeoutSecs * 1000 + 2000;

        let started = performance.now();
        expectDirectoryUnavailable(await directoryLogin(server, alice.uid, alice.password));
        expect(performance.now() - started).toBeLessThan(budget);
        expect((await localLogin(server, local.username)).body.code).toBe(0);

        for (const serverUrl of [`ldap://127.0.0.1:${silent.port}`, `ldaps://127.0.0.1:${silent.port}`]) {
          await saveDirectoryPolicy(auth, policy({ serverUrl, ...quick }));
          started = performance.now();
          const [directoryAnswer, localAnswer] = await Promise.all([
            directoryLogin(server, alice.uid, alice.password),
            localLogin(server, local.username),
          ]);
          expectDirectoryUnavailable(directoryAnswer);
          expect(performance.now() - started, serverUrl).toBeLessThan(budget);
          expect(localAnswer.body.code, serverUrl).toBe(0);
        }
        expect(harness.internalErrors).toHaveLength(3);
      });

      it("LDAP-4: StartTLS or ldaps:// with the wrong CA is 50300, and nothing is ever bound in plaintext", async () => {
        await withRecorder(slapd.port, async (recorder) => {
          const harness = await serve(start, {
            policy: policy({ serverUrl: `ldap://127.0.0.1:${recorder.port}`, caBundle: slapd.wrongCaPem }),
          });
          expectDirectoryUnavailable(await directoryLogin(harness.server, alice.uid, alice.password));
          const tags = ldapOperationTags(recorder.sent());
          expect(tags).toContain(extendedRequest);
          expect(tags).not.toContain(bindRequest);
          await saveDirectoryPolicy(harness.auth, policy({ serverUrl: slapd.ldapsUrl as string, caBundle: slapd.wrongCaPem }));
          expectDirectoryUnavailable(await directoryLogin(harness.server, alice.uid, alice.password));
        });
      });

      it("LDAP-4: 200 sequential directory logins leave no connection to slapd open", async () => {
        const harness = await serve(start, { policy: policy({ fallbackRole: "reader" }) });
        const baseline = openConnectionsTo(slapd.port);
        const cases: [string, string, number][] = [
          [alice.uid, alice.password, 0],
          [bob.uid, bob.password, 0],
          [alice.uid, "not alice's password", 40100],
          ["nobody-here", "whatever it is", 40100],
          [daveInSales.uid, daveInSales.password, 40100],
        ];
        for (let index = 0; index < 200; index += 1) {
          const [username, password, code] = cases[index % cases.length] as [string, string, number];
          const response = await directoryLogin(harness.server, username, password);
          if (response.body.code !== code) expect(response.body.code, `login ${index} as ${username}`).toBe(code);
        }
        let open = openConnectionsTo(slapd.port);
        for (let wait = 0; wait < 20 && open > baseline; wait += 1) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          open = openConnectionsTo(slapd.port);
        }
        expect(open).toBeLessThanOrEqual(baseline);
      });

      it("issue 20 item 11: 150 concurrent directory logins open at most directoryLimits.maxConcurrent connections to the directory at once", async () => {
        const maxConcurrent = 3;
        const harness = await serve(start, {
          policy: policy({ fallbackRole: "reader" }),
          config: { directoryLimits: { maxConcurrent, maxQueued: 150 } },
        });
        const baseline = openConnectionsTo(slapd.port);
        let peak = 0;
        const sampler = setInterval(() => {
          peak = Math.max(peak, openConnectionsTo(slapd.port) - baseline);
        }, 5);
        try {
          const answers = await Promise.all(
            Array.from({ length: 150 }, (_, index) =>
              index % 2
                ? directoryLogin(harness.server, bob.uid, bob.password)
                : directoryLogin(harness.server, alice.uid, alice.password),
            ),
          );
          expect(answers.map((answer) => answer.body.code)).toEqual(Array.from({ length: 150 }, () => 0));
        } finally {
          clearInterval(sampler);
        }
        expect(peak).toBeGreaterThan(0);
        expect(peak).toBeLessThanOrEqual(maxConcurrent);
      });

      it("LDAP-4, issue 20 item 11: a directory that goes silent is 50300 within directoryLimits.deadline for a login and a refresh (policy/test says timeout), whatever the step timeouts, and no connection is left open", async () => {
        await withRecorder(slapd.port, async (forwarder) => {
          // The policy's own step timeouts (5 s to connect, 8 s per operation) would let one login run for about a minute.
          const harness = await serve(start, {
            policy: policy({ serverUrl: `ldap://127.0.0.1:${forwarder.port}`, fallbackRole: "reader" }),
            config: { directoryLimits: { deadline: "1s" } },
          });
          const { server } = harness;
          const token = await adminToken(harness);
          const tokens = await signedIn(server, alice.uid, alice.password);
          forwarder.cut("stall");
          const budget = 1000 + 700;
          let started = performance.now();
          expectDirectoryUnavailable(await directoryLogin(server, alice.uid, alice.password));
          expect(performance.now() - started, "login").toBeLessThan(budget);
          started = performance.now();
          expectDirectoryUnavailable(await post(server, paths.refresh, { refreshToken: tokens.refreshToken }));
          expect(performance.now() - started, "refresh").toBeLessThan(budget);
          started = performance.now();
          const tested = await post(server, paths.test, {}, { token });
          expect(tested.body, tested.text).toMatchObject({ code: 0, data: { ok: false, category: "timeout" } });
          expect(performance.now() - started, "policy/test").toBeLessThan(budget);
          await expect.poll(() => openConnectionsTo(forwarder.port), { timeout: 2500, interval: 20 }).toBe(0);
          forwarder.restore();
          // The refresh token was not spent by the refresh the directory could not answer.
          expect((await post(server, paths.refresh, { refreshToken: tokens.refreshToken })).body.code).toBe(0);
          expect(harness.internalErrors).toHaveLength(2);
        });
      });

      it("LDAP-2, LDAP-5: an AD-like layout (sAMAccountName, objectGUID, groups named in another spelling) signs in, a DN with an escaped comma too", async () => {
        const { carol, dan } = ldapAdUsers;
        const harness = await serve(start, {
          policy: policy({
            userBaseDn: ldapOus.adUsers,
            userFilter: "(sAMAccountName={{username}})",
            usernameAttribute: "sAMAccountName",
            stableIdAttribute: "objectGUID",
            mappings: [
              { group: "CN=VPN Users, OU=Groups, OU=AD, DC=Example, DC=Test", role: "vpn", priority: 5 },
              { group: ldapAdGroups.finance.dn, role: "finance", priority: 1 },
            ],
          }),
        });
        const { server, auth } = harness;
        const carolIn = await signedIn(server, carol.sAMAccountName, carol.password);
        expect(carolIn.user).toMatchObject({ username: carol.sAMAccountName, roles: ["finance"] });
        const danIn = await signedIn(server, dan.sAMAccountName, dan.password);
        expect(danIn.user).toMatchObject({ username: dan.sAMAccountName, roles: ["vpn"] });
        expect((await me(server, danIn.accessToken)).body.data).toMatchObject({
          id: danIn.user.id,
          username: dan.sAMAccountName,
        });
        const links = await auth.storage.identities.listByUser(danIn.user.id);
        expect(links.map(({ provider, subject }) => ({ provider, subject }))).toEqual([
          { provider: "directory", subject: dan.objectGuidHex },
        ]);
        expect((await directoryLogin(server, dan.sAMAccountName, carol.password)).body.code).toBe(40100);
        expect((await directoryLogin(server, dan.userPrincipalName, dan.password)).body.code).toBe(40100);
      });

      it("a renamed entry is the same user: the new username signs in to the same id, the old one no longer", async () => {
        const person = await addPerson(slapd, "rename");
        const harness = await serve(start, { policy: policy({ fallbackRole: "reader" }) });
        const { server } = harness;
        const before = await signedIn(server, person.uid, person.password);
        const renamed = uniqueLdapName("renamed");
        await renamePerson(slapd, person, renamed);
        const after = await signedIn(server, renamed, person.password);
        expect(after.user).toMatchObject({ id: before.user.id, username: renamed, roles: ["reader"] });
        expect((await me(server, after.accessToken)).body.data).toMatchObject({ id: before.user.id, username: renamed });
        expect((await directoryLogin(server, person.uid, person.password)).body.code).toBe(40100);
      });
    });
  }

  describe("a directory without TLS that accepts unauthenticated binds", () => {
    let plain: SlapdServer;
    beforeAll(async () => {
      plain = await startSlapd({ tls: false, allowUnauthenticatedBind: true });
    });
    afterAll(async () => {
      await plain?.stop();
    });
    const plaintextPolicy = () => policyFor(plain, { startTls: false, allowPlaintext: true });

    for (const [name, start] of adapters) {
      describe(name, () => {
        it("LDAP-3: an empty password is 40001 and never a session, though this server binds a DN with no password", async () => {
          const unauthenticated = await runLdapTool("ldapwhoami", ["-x", "-H", plain.url, "-D", alice.dn, "-w", ""]);
          expect(unauthenticated.exitCode, unauthenticated.stderr).toBe(0);
          const harness = await serve(start, { policy: plaintextPolicy() });
          for (const provider of ["directory", undefined]) {
            for (const username of [alice.uid, "nobody-here"]) {
              const response = await post(harness.server, paths.login, { username, password: "", provider });
              expect([response.status, response.body], `${username} via ${provider}`).toEqual([
                400,
                { code: 40001, message: "password is required" },
              ]);
            }
          }
          await saveDirectoryPolicy(harness.auth, { ...plaintextPolicy(), loginOrder: "directory-first" });
          expect((await post(harness.server, paths.login, { username: alice.uid, password: "" })).body.code).toBe(40001);
          expect((await post(harness.server, paths.login, { username: alice.uid, password: " " })).body.code).toBe(40100);
          expect((await signedIn(harness.server, alice.uid, alice.password)).user.roles).toEqual(["admin"]);
        });

        it("LDAP-4: a server that refuses StartTLS is 50300 and nothing is bound in plaintext", async () => {
          await withRecorder(plain.port, async (recorder) => {
            const harness = await serve(start, { policy: policyFor(plain, { serverUrl: `ldap://127.0.0.1:${recorder.port}` }) });
            expectDirectoryUnavailable(await directoryLogin(harness.server, alice.uid, alice.password));
            // The StartTLS request, then at most an unbind: no bind, no search, no credentials in plaintext.
            const tags = ldapOperationTags(recorder.sent());
            expect(tags[0]).toBe(extendedRequest);
            expect(tags.slice(1).filter((tag) => tag !== unbindRequest)).toEqual([]);
          });
        });
      });
    }
  });

  describeOpenApiDrift({
    exercises: ["getDirectoryPolicy", "saveDirectoryPolicy", "testDirectoryPolicy", "previewDirectoryUser", "login", "refresh"],
  });
});
