// LDAP-2: after the user's bind, the entry is read back at the DN that was bound, and it must be
// the entry the search found. A client that re-encodes a DN's escapes could bind, and read, an
// entry other than the one found: this file stands in such a client by answering the read-back
// with another entry (vi.mock is per file), against a real slapd for everything else.
import { type DirectorySettings, ErrorCode, isAuthError } from "@portcullis/core";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { directorySettingsFor } from "../../../test/fixtures/directory-settings.js";
import { describeNeedingService } from "../../../test/fixtures/required-service.js";
import { type SlapdServer, ldapPeople, slapdMissing, startSlapd } from "../../../test/fixtures/slapd.js";
import type { LdapEntry } from "./ldap-client.js";

/** When set, a base-scope read returns this entry instead of the one at the DN. */
const readBack: { substitute: LdapEntry | null } = { substitute: null };

vi.mock("./ldap-client.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("./ldap-client.js")>();
  return {
    ...original,
    async openLdapConnection(options: Parameters<typeof original.openLdapConnection>[0]) {
      const connection = await original.openLdapConnection(options);
      return {
        ...connection,
        async search(baseDn: string, search: Parameters<typeof connection.search>[1]) {
          const found = await connection.search(baseDn, search);
          return search.scope === "base" && readBack.substitute ? [readBack.substitute] : found;
        },
      };
    },
  };
});

const { ldapDirectory } = await import("./index.js");

const describeWithSlapd = describeNeedingService("packages/ldap/src/ldap-directory-readback.test.ts", slapdMissing());
let slapd: SlapdServer;
const settings = (changes: Partial<DirectorySettings> = {}) => directorySettingsFor(slapd, changes);

describeWithSlapd("ldapDirectory reading back the bound entry", () => {
  beforeAll(async () => {
    slapd = await startSlapd();
  });
  afterAll(async () => {
    await slapd?.stop();
  });

  it("LDAP-2: an entry read back with another stable id than the one found fails closed with 50300", async () => {
    const directory = ldapDirectory();
    const { alice, bob } = ldapPeople;
    readBack.substitute = null;
    const aliceResult = await directory.authenticate(settings(), alice.uid, alice.password);
    expect(aliceResult.status).toBe("authenticated");
    const bobEntry = await directory.lookup(settings(), { username: bob.uid });
    readBack.substitute = {
      dn: alice.dn,
      attributes: new Map([
        ["entryuuid", [Buffer.from(bobEntry?.stableId as string)]],
        ["uid", [Buffer.from(alice.uid)]],
      ]),
    } as LdapEntry;
    const error = await directory.authenticate(settings(), alice.uid, alice.password).catch((caught: unknown) => caught);
    expect(isAuthError(error) && error.code).toBe(ErrorCode.Unavailable);
    readBack.substitute = null;
  });
});
