import { type DirectorySettings, saveDirectoryPolicy } from "@portcullis/core";
import { ldapDirectory } from "@portcullis/ldap";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestUser, testPassword } from "../fixtures/auth.js";
import { directorySettingsFor } from "../fixtures/directory-settings.js";
import { addGroup, addPerson, removeMember } from "../fixtures/ldap-changes.js";
import { describeNeedingService } from "../fixtures/required-service.js";
import { type SlapdServer, ldapGroups, ldapPeople, slapdMissing, startSlapd } from "../fixtures/slapd.js";
import { startTcpForwarder } from "../fixtures/tcp-forwarder.js";
import { type ServeClient, clientTargets, recordEvents, rejection, servedPerTest, statusIn } from "./client-servers.js";

const describeWithSlapd = describeNeedingService("test/client/directory.test.ts", slapdMissing());
const { alice, johnSmith } = ldapPeople;

let slapd: SlapdServer;
/** A loopback port nothing listens on. */
let deadPort: number;

/** Starts a server whose directory policy is `changes` over the test directory (admins → admin, engineers → engineer); notes its internal errors' request ids. */
async function serveWithDirectory(serve: ServeClient, changes: Partial<DirectorySettings> = {}) {
  const reportedRequestIds: string[] = [];
  const harness = await serve({
    directory: ldapDirectory(),
    onInternalError: (_error, requestId) => reportedRequestIds.push(requestId),
  });
  await saveDirectoryPolicy(
    harness.auth,
    directorySettingsFor(slapd, {
      mappings: [
        { group: ldapGroups.admins.dn, role: "admin", priority: 1 },
        { group: ldapGroups.engineers.dn, role: "engineer", priority: 5 },
      ],
      ...changes,
    }),
  );
  return { harness, reportedRequestIds };
}

describeWithSlapd('client.login({ provider: "directory" }) against slapd', () => {
  beforeAll(async () => {
    slapd = await startSlapd();
    const stopped = await startTcpForwarder(null);
    deadPort = stopped.port;
    await stopped.close();
  });
  afterAll(async () => {
    await slapd?.stop();
  });

  describe.each(clientTargets)("%s", (_name, start, statusMode) => {
    const serve = servedPerTest(start, statusMode);

    it("LDAP: signs in through the directory with the roles its groups map to; me, refresh and logout as for a local user", async () => {
      const { harness } = await serveWithDirectory(serve);
      const client = harness.client();
      const events = recordEvents(client);

      const step = await client.login({ username: alice.uid, password: alice.password, provider: "directory" });
      expect(step).toMatchObject({
        status: "authenticated",
        user: { username: alice.uid, roles: ["admin"], totpEnabled: false },
      });
      expect((await client.me()).roles).toEqual(["admin"]);
      expect((await client.fetch("/api/v1/things")).status).toBe(200);
      expect((await client.refresh()).roles).toEqual(["admin"]);
      await client.logout();
      expect(events.map(([name]) => name)).toEqual(["signedIn", "signedOut"]);

      const engineer = await client.login({ username: johnSmith.uid, password: johnSmith.password, provider: "directory" });
      expect(engineer).toMatchObject({ status: "authenticated", user: { roles: ["engineer"] } });
    });

    it("a wrong password, an unknown name and a local account's password are the same 40100 through the directory", async () => {
      const { harness } = await serveWithDirectory(serve);
      await createTestUser(harness.auth, "local-only");
      const client = harness.client();
      const attempts = [
        { username: alice.uid, password: "not alice's password" },
        { username: "nobody-here", password: alice.password },
        { username: "local-only", password: testPassword },
      ];
      for (const attempt of attempts) {
        const refused = await rejection(client.login({ ...attempt, provider: "directory" }));
        expect(refused).toMatchObject({ kind: "server", code: 40100, status: statusIn(statusMode, 401) });
        expect(refused.message).not.toContain(attempt.password);
      }
      expect(await client.currentUser()).toBeNull();
      expect((await client.login({ username: "local-only", password: testPassword })).status).toBe("authenticated");
    });

    it("LDAP-5: a refresh after the user lost every mapped group is refused: the client signs out once (session_ended)", async () => {
      const person = await addPerson(slapd, "client");
      const group = await addGroup(slapd, "client-group", [person.dn]);
      const { harness } = await serveWithDirectory(serve, { mappings: [{ group, role: "member", priority: 1 }] });
      const client = harness.client();
      const events = recordEvents(client);
      await client.login({ username: person.uid, password: person.password, provider: "directory" });
      expect((await client.refresh()).roles).toEqual(["member"]);

      await removeMember(slapd, group, person.dn);
      expect(await rejection(client.refresh())).toMatchObject({ code: 40101 });
      expect(events.at(-1)).toEqual(["signedOut", { reason: "session_ended" }]);
      expect(await client.currentUser()).toBeNull();
    });

    it("HTTP-5: a directory that cannot be reached is 50300 whose requestId is the one the server reported", async () => {
      const { harness, reportedRequestIds } = await serveWithDirectory(serve, {
        serverUrl: `ldap://127.0.0.1:${deadPort}`,
        connectTimeoutSecs: 1,
        searchTimeoutSecs: 1,
      });
      const unavailable = await rejection(
        harness.client().login({ username: alice.uid, password: alice.password, provider: "directory" }),
      );
      expect(unavailable).toMatchObject({ kind: "server", code: 50300, status: statusIn(statusMode, 503) });
      expect(reportedRequestIds).toHaveLength(1);
      expect(unavailable.requestId).toBe(reportedRequestIds[0]);
    });
  });
});
