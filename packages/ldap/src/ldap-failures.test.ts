import { type DirectorySettings, ErrorCode, isAuthError } from "@portcullis/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { directorySettingsFor } from "../../../test/fixtures/directory-settings.js";
import { describeNeedingService } from "../../../test/fixtures/required-service.js";
import { type SlapdServer, ldapPeople, slapdMissing, startSlapd } from "../../../test/fixtures/slapd.js";
import { ldapOperationTags, startTcpForwarder } from "../../../test/fixtures/tcp-forwarder.js";
import { ldapDirectory } from "./index.js";

const describeWithSlapd = describeNeedingService("packages/ldap/src/ldap-failures.test.ts", slapdMissing());
const directory = ldapDirectory();
const { alice } = ldapPeople;
const bindRequest = 0x60;
const extendedRequest = 0x77;

/** A server without TLS that accepts unauthenticated binds: what a login must never trust. */
let plainSlapd: SlapdServer;
const settings = (changes: Partial<DirectorySettings> = {}) => directorySettingsFor(plainSlapd, changes);

async function unavailableError(attempt: Promise<unknown>): Promise<unknown> {
  const error = await attempt.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(isAuthError(error, ErrorCode.Unavailable), String(error)).toBe(true);
  return error;
}

describeWithSlapd("ldapDirectory when the directory fails", () => {
  beforeAll(async () => {
    plainSlapd = await startSlapd({ tls: false, allowUnauthenticatedBind: true });
  });
  afterAll(async () => {
    await plainSlapd?.stop();
  });

  it("LDAP-4: StartTLS refused by the server is 50300 and nothing is bound in plaintext", async () => {
    const recorder = await startTcpForwarder(plainSlapd.port);
    try {
      const serverUrl = `ldap://127.0.0.1:${recorder.port}`;
      await unavailableError(directory.authenticate(settings({ serverUrl }), alice.uid, alice.password));
      await unavailableError(directory.lookup(settings({ serverUrl }), { username: alice.uid }));
      expect(await directory.check(settings({ serverUrl }))).toMatchObject({ ok: false, category: "tls" });
      const tags = ldapOperationTags(recorder.sent());
      expect(tags).toContain(extendedRequest);
      expect(tags).not.toContain(bindRequest);
    } finally {
      await recorder.close();
    }
  });

  it("LDAP-3: an empty password is invalid_credentials against a server that accepts unauthenticated binds", async () => {
    const plaintext = settings({ startTls: false, allowPlaintext: true });
    expect(await directory.authenticate(plaintext, alice.uid, alice.password)).toMatchObject({ status: "authenticated" });
    expect(await directory.authenticate(plaintext, alice.uid, "")).toEqual({ status: "invalid_credentials" });
  });

  it("LDAP-3: a service account with a DN and no password is refused, never bound unauthenticated", async () => {
    const plaintext = settings({ startTls: false, allowPlaintext: true, bindPassword: null });
    await unavailableError(directory.authenticate(plaintext, alice.uid, alice.password));
    expect(await directory.check(plaintext)).toMatchObject({ ok: false, category: "configuration" });
  });

  it("LDAP-4: plaintext without allowPlaintext never connects", async () => {
    await unavailableError(directory.authenticate(settings({ startTls: false }), alice.uid, alice.password));
  });

  it("LDAP-4: a stopped server is 50300, and check says connection", async () => {
    const stopped = await startTcpForwarder(null);
    await stopped.close();
    const serverUrl = `ldaps://127.0.0.1:${stopped.port}`;
    await unavailableError(directory.authenticate(settings({ serverUrl }), alice.uid, alice.password));
    expect(await directory.check(settings({ serverUrl }))).toMatchObject({ ok: false, category: "connection" });
  });

  it("LDAP-4: a server that accepts and never answers is 50300 within the timeouts", async () => {
    const silent = await startTcpForwarder(null);
    try {
      const quick = { connectTimeoutSecs: 0.5, searchTimeoutSecs: 0.5 };
      for (const changes of [
        { serverUrl: `ldaps://127.0.0.1:${silent.port}` },
        { serverUrl: `ldap://127.0.0.1:${silent.port}` },
        { serverUrl: `ldap://127.0.0.1:${silent.port}`, startTls: false, allowPlaintext: true },
      ]) {
        const started = Date.now();
        await unavailableError(directory.authenticate(settings({ ...quick, ...changes }), alice.uid, alice.password));
        expect(Date.now() - started, changes.serverUrl).toBeLessThan(1500);
        expect(await directory.check(settings({ ...quick, ...changes }))).toMatchObject({ ok: false, category: "timeout" });
      }
    } finally {
      await silent.close();
    }
  });
});
