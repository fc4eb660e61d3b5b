import { once } from "node:events";
import { connect } from "node:net";
import { AuthError, type DirectoryCandidate, type DirectorySettings, ErrorCode, isAuthError } from "@portcullis/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { directorySettingsFor } from "../../../test/fixtures/directory-settings.js";
import { openConnectionsTo } from "../../../test/fixtures/open-connections.js";
import { describeNeedingService } from "../../../test/fixtures/required-service.js";
import {
  type SlapdServer,
  ldapAdGroups,
  ldapAdUsers,
  ldapBaseDn,
  ldapGroups,
  ldapOus,
  ldapPeople,
  ldapPosixGroups,
  slapdMissing,
  startSlapd,
} from "../../../test/fixtures/slapd.js";
import { ldapOperationTags, startTcpForwarder } from "../../../test/fixtures/tcp-forwarder.js";
import { ldapDirectory } from "./index.js";

const describeWithSlapd = describeNeedingService("packages/ldap/src/ldap-directory.test.ts", slapdMissing());
const directory = ldapDirectory();
let slapd: SlapdServer;

const settings = (changes: Partial<DirectorySettings> = {}) => directorySettingsFor(slapd, changes);

const adSettings = () =>
  settings({
    userBaseDn: ldapOus.adUsers,
    userFilter: "(sAMAccountName={{username}})",
    stableIdAttribute: "objectGUID",
    usernameAttribute: "sAMAccountName",
  });

/** The protocolOp tag of a SearchRequest (RFC 4511 §4.2). */
const searchRequest = 0x63;

const lower = (dns: readonly string[]) => dns.map((dn) => dn.toLowerCase()).sort();

describeWithSlapd("ldapDirectory against slapd", () => {
  beforeAll(async () => {
    slapd = await startSlapd();
  });
  afterAll(async () => {
    await slapd?.stop();
  });

  it("LDAP-2: finds a user in nested OUs, binds as the returned DN and reads identity and memberOf groups", async () => {
    const { alice } = ldapPeople;
    const result = await directory.authenticate(settings(), alice.uid, alice.password);
    expect(result.status).toBe("authenticated");
    if (result.status !== "authenticated") return;
    expect(result.entry).toMatchObject({ dn: alice.dn, username: alice.uid, displayName: alice.displayName, email: alice.mail });
    expect(result.entry.stableId).toMatch(/^[0-9a-f-]{36}$/);
    // Nested groups are not resolved by OpenLDAP's memberof: staff is absent.
    expect(lower(result.entry.groups)).toEqual(lower([ldapGroups.engineers.dn, ldapGroups.admins.dn]));
  });

  it("LDAP-2: binds a DN slapd returns with \\2C", async () => {
    const { johnSmith } = ldapPeople;
    const result = await directory.authenticate(settings(), johnSmith.uid, johnSmith.password);
    expect(result).toMatchObject({
      status: "authenticated",
      entry: { username: johnSmith.uid, displayName: johnSmith.displayName },
    });
  });

  it("LDAP-4: ldaps:// with the policy's CA", async () => {
    const { bob } = ldapPeople;
    const result = await directory.authenticate(settings({ serverUrl: slapd.ldapsUrl as string }), bob.uid, bob.password);
    expect(result).toMatchObject({ status: "authenticated", entry: { username: bob.uid, groups: [] } });
  });

  it("finds groups by a group search for the user's DN", async () => {
    const { alice } = ldapPeople;
    const groupSearch = { baseDn: ldapOus.groups, filter: "(&(objectClass=groupOfNames)(member={{dn}}))" };
    const result = await directory.authenticate(
      settings({ groupAttribute: "description", groupSearch }),
      alice.uid,
      alice.password,
    );
    expect(result.status).toBe("authenticated");
    if (result.status !== "authenticated") return;
    expect(lower(result.entry.groups)).toEqual(lower([ldapGroups.engineers.dn, ldapGroups.admins.dn]));
  });

  it("finds posix groups by a group search for the username (memberUid), and both kinds in one filter", async () => {
    const { bob, alice } = ldapPeople;
    const byUid = { baseDn: ldapOus.posixGroups, filter: "(&(objectClass=posixGroup)(memberUid={{username}}))" };
    const bobs = await directory.authenticate(settings({ groupSearch: byUid }), bob.uid, bob.password);
    expect(bobs.status === "authenticated" && lower(bobs.entry.groups)).toEqual(
      lower([ldapPosixGroups.developers.dn, ldapPosixGroups.sales.dn]),
    );
    const both = {
      baseDn: ldapBaseDn,
      filter: "(|(&(objectClass=groupOfNames)(member={{dn}}))(&(objectClass=posixGroup)(memberUid={{username}})))",
    };
    const alices = await directory.lookup(settings({ groupAttribute: "description", groupSearch: both }), {
      username: alice.uid,
    });
    expect(lower(alices?.groups ?? [])).toEqual(
      lower([ldapGroups.engineers.dn, ldapGroups.admins.dn, ldapPosixGroups.developers.dn]),
    );
  });

  it("EN-1: a wrong password is invalid_credentials; an unknown user no_entry; two entries ambiguous", async () => {
    expect(await directory.authenticate(settings(), ldapPeople.alice.uid, "wrong")).toEqual({ status: "invalid_credentials" });
    expect(await directory.authenticate(settings(), "nobody", "x")).toEqual({ status: "no_entry" });
    expect(await directory.authenticate(settings(), "dave", ldapPeople.daveInSales.password)).toEqual({ status: "ambiguous" });
  });

  it("LDAP-1: filter characters in a username match only that username", async () => {
    const { eve, alice } = ldapPeople;
    expect(await directory.authenticate(settings(), eve.uid, eve.password)).toMatchObject({ status: "authenticated" });
    for (const username of ["*", "admin*", "a*", "*)(uid=*))(|(uid=*", "alice\u0000", "alice)(uid=*", "\\2a", "\\", "alice\\"]) {
      const result = await directory.authenticate(settings(), username, alice.password);
      expect(result, username).toEqual({ status: "no_entry" });
    }
  });

  it("RL-1: beforeBind is told the entry as the directory holds it, whatever spelling of the name found it", async () => {
    const { alice } = ldapPeople;
    const stableId = (await directory.lookup(settings(), { username: alice.uid }))?.stableId;
    // OpenLDAP's matching rules (RFC 4518) drop outer spaces of any kind, fold case (even the
    // Turkish dotted capital I) and map full-width letters: each of these finds alice's entry.
    const spellings = [" ALICE ", "alice  ", "Alice", "\u00a0alice\u00a0", "alice\u2003", "\uff41lice", "AL\u0130CE"];
    for (const typed of spellings) {
      const told: DirectoryCandidate[] = [];
      const result = await directory.authenticate(settings(), typed, alice.password, {
        beforeBind: async (entry) => {
          told.push(entry);
        },
      });
      expect(result, JSON.stringify(typed)).toMatchObject({ status: "authenticated", entry: { username: "alice" } });
      expect(told, JSON.stringify(typed)).toEqual([{ dn: alice.dn, stableId, username: "alice" }]);
    }
  });

  it("RL-1: beforeBind is not called when no entry, several entries, or an empty password is found", async () => {
    const told: DirectoryCandidate[] = [];
    const beforeBind = async (entry: DirectoryCandidate) => {
      told.push(entry);
    };
    expect(await directory.authenticate(settings(), "nobody", "x", { beforeBind })).toEqual({ status: "no_entry" });
    expect(await directory.authenticate(settings(), "dave", "x", { beforeBind })).toEqual({ status: "ambiguous" });
    expect(await directory.authenticate(settings(), "alice", "", { beforeBind })).toEqual({ status: "invalid_credentials" });
    expect(told).toEqual([]);
  });

  it("RL-1: beforeBind runs after the search and before the user's bind; what it throws ends the login unchanged, with no bind as the user", async () => {
    const { alice } = ldapPeople;
    const recorder = await startTcpForwarder(slapd.port);
    try {
      // In plaintext the recorder reads what the client sends: the user's DN goes out only in the bind as the user.
      const plaintext = settings({ serverUrl: `ldap://127.0.0.1:${recorder.port}`, startTls: false, allowPlaintext: true });
      const sentDn = () => recorder.sent().includes(Buffer.from(alice.dn));
      const refused = new Error("the account's throttle refuses this attempt");
      const steps: string[] = [];
      for (const password of [alice.password, "a wrong password"]) {
        const outcome = await directory
          .authenticate(plaintext, alice.uid, password, {
            beforeBind: async () => {
              steps.push(`searched: ${ldapOperationTags(recorder.sent()).includes(searchRequest)}, bound: ${sentDn()}`);
              throw refused;
            },
          })
          .catch((error: unknown) => error);
        expect(outcome).toBe(refused);
      }
      expect(steps).toEqual(["searched: true, bound: false", "searched: true, bound: false"]);
      expect(sentDn()).toBe(false);
      const allowed = await directory.authenticate(plaintext, alice.uid, alice.password, { beforeBind: async () => {} });
      expect(allowed).toMatchObject({ status: "authenticated" });
      expect(sentDn()).toBe(true);
    } finally {
      await recorder.close();
    }
  });

  it("RL-1: an AuthError thrown by beforeBind reaches the caller as it is, not as 50300", async () => {
    const throttled = new AuthError(ErrorCode.TooManyAttempts, "Too many attempts");
    const outcome = await directory
      .authenticate(settings(), ldapPeople.bob.uid, ldapPeople.bob.password, {
        beforeBind: async () => {
          throw throttled;
        },
      })
      .catch((error: unknown) => error);
    expect(outcome).toBe(throttled);
  });

  it("LDAP-3: an empty username or password is refused before any connection", async () => {
    const unreachable = settings({ serverUrl: "ldaps://127.0.0.1:1" });
    expect(await directory.authenticate(unreachable, ldapPeople.alice.uid, "")).toEqual({ status: "invalid_credentials" });
    expect(await directory.authenticate(unreachable, "", "x")).toEqual({ status: "invalid_credentials" });
  });

  it("sends a non-ASCII password byte for byte, never normalised", async () => {
    const { zoe } = ldapPeople;
    expect(await directory.authenticate(settings(), zoe.uid, zoe.password)).toMatchObject({
      status: "authenticated",
      entry: { displayName: zoe.displayName },
    });
    expect(await directory.authenticate(settings(), zoe.uid, zoe.password.normalize("NFKC"))).toEqual({
      status: "invalid_credentials",
    });
  });

  it("AD-like layout: sAMAccountName, objectGUID as lower-case hex, lookup by it", async () => {
    const { carol, dan } = ldapAdUsers;
    const result = await directory.authenticate(adSettings(), carol.sAMAccountName, carol.password);
    expect(result).toMatchObject({ status: "authenticated", entry: { stableId: carol.objectGuidHex, username: "cjones" } });
    if (result.status !== "authenticated") return;
    expect(lower(result.entry.groups)).toEqual(lower([ldapAdGroups.vpnUsers.dn, ldapAdGroups.finance.dn]));
    expect(await directory.lookup(adSettings(), { stableId: carol.objectGuidHex })).toEqual(result.entry);
    const danByGuid = await directory.lookup(adSettings(), { stableId: dan.objectGuidHex });
    // ldapjs hands DNs back re-serialised (\2c for \2C): the same DN, to be compared parsed.
    expect(danByGuid?.dn.toLowerCase()).toBe(dan.dn.toLowerCase());
    expect(danByGuid?.username).toBe(dan.sAMAccountName);
    expect(await directory.authenticate(adSettings(), dan.sAMAccountName, dan.password)).toMatchObject({
      status: "authenticated",
    });
    expect(await directory.lookup(adSettings(), { stableId: "not hex" })).toBeNull();
  });

  it("lookup by username and by entryUUID reads the same entry with the service account", async () => {
    const byName = await directory.lookup(settings(), { username: ldapPeople.alice.uid });
    expect(byName).toMatchObject({ dn: ldapPeople.alice.dn, username: "alice" });
    expect(await directory.lookup(settings(), { stableId: byName?.stableId as string })).toEqual(byName);
    expect(await directory.lookup(settings(), { username: "dave" })).toBeNull();
    expect(await directory.lookup(settings(), { username: "*" })).toBeNull();
  });

  it("LDAP-5: by stable id, an entry the user filter no longer admits is no one; nor is one of two entries its username finds", async () => {
    const alice = await directory.lookup(settings(), { username: ldapPeople.alice.uid });
    const stableId = alice?.stableId as string;
    const narrowed = settings({ userFilter: "(&(uid={{username}})(mail=*@elsewhere.test))" });
    expect(await directory.lookup(narrowed, { stableId })).toBeNull();
    const byDn = settings({ userFilter: "(&(uid={{username}})(ou=nowhere))" });
    expect(await directory.lookup(byDn, { stableId })).toBeNull();
    expect(
      await directory.lookup(settings({ userFilter: "(&(objectClass=inetOrgPerson)(uid={{username}}))" }), { stableId }),
    ).toEqual(alice);
    const dave = await directory.lookup(settings({ userFilter: "(&(uid={{username}})(sn=Engineer))" }), { username: "dave" });
    expect(dave).toMatchObject({ username: "dave" });
    expect(await directory.lookup(settings(), { stableId: dave?.stableId as string })).toBeNull();
  });

  it("LDAP-4: a CA that did not sign the server certificate fails closed with 50300, over StartTLS and ldaps://", async () => {
    for (const serverUrl of [slapd.url, slapd.ldapsUrl as string]) {
      const error = await directory
        .authenticate(settings({ serverUrl, caBundle: slapd.wrongCaPem }), ldapPeople.alice.uid, ldapPeople.alice.password)
        .catch((caught: unknown) => caught);
      expect(isAuthError(error, ErrorCode.Unavailable), serverUrl).toBe(true);
      expect(await directory.check(settings({ serverUrl, caBundle: slapd.wrongCaPem }))).toMatchObject({
        ok: false,
        category: "tls",
      });
    }
  });

  it("LDAP-4: the host name is verified: a certificate for 127.0.0.1 and localhost does not pass for 127.0.0.2", async () => {
    const elsewhere = await startTcpForwarder(slapd.ldapsPort as number, "127.0.0.2");
    try {
      const serverUrl = `ldaps://127.0.0.2:${elsewhere.port}`;
      await expect(
        directory.authenticate(settings({ serverUrl }), ldapPeople.alice.uid, ldapPeople.alice.password),
      ).rejects.toSatisfy((error: unknown) => isAuthError(error, ErrorCode.Unavailable));
      expect(await directory.check(settings({ serverUrl }))).toMatchObject({ ok: false, category: "tls" });
    } finally {
      await elsewhere.close();
    }
  });

  it("leaves no connection open after 200 sign-ins", async () => {
    const { alice } = ldapPeople;
    const probe = connect(slapd.port, "127.0.0.1");
    await once(probe, "connect");
    expect(openConnectionsTo(slapd.port)).toBe(1);
    probe.destroy();
    await once(probe, "close");
    for (let round = 0; round < 20; round++) {
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, index) =>
          directory.authenticate(settings(), alice.uid, index % 2 ? alice.password : "wrong"),
        ),
      );
      expect(results.filter((result) => result.status === "authenticated")).toHaveLength(5);
    }
    await expect.poll(() => openConnectionsTo(slapd.port), { timeout: 3000 }).toBe(0);
  });

  it("check: ok, then bind and search categories, with no secret in the message", async () => {
    expect(await directory.check(settings())).toEqual({ ok: true });
    const badBind = await directory.check(settings({ bindPassword: "not the reader password" }));
    expect(badBind).toMatchObject({ ok: false, category: "bind" });
    expect(JSON.stringify(badBind)).not.toContain("not the reader password");
    expect(await directory.check(settings({ userBaseDn: "ou=missing,dc=example,dc=test" }))).toMatchObject({
      ok: false,
      category: "search",
    });
    expect(await directory.check(settings({ bindPassword: null }))).toMatchObject({ ok: false, category: "configuration" });
    expect(await directory.check(settings({ startTls: false }))).toMatchObject({ ok: false, category: "configuration" });
  });
});
