import { type DirectorySettings, ErrorCode, isAuthError } from "@portcullis/core";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { directorySettingsFor } from "../../../test/fixtures/directory-settings.js";
import { openConnectionsTo } from "../../../test/fixtures/open-connections.js";
import { describeNeedingService } from "../../../test/fixtures/required-service.js";
import { type SlapdServer, ldapPeople, slapdMissing, startSlapd } from "../../../test/fixtures/slapd.js";
import { type TcpForwarder, startTcpForwarder } from "../../../test/fixtures/tcp-forwarder.js";
import { ldapDirectory } from "./index.js";
import { LdapFailure } from "./ldap-client.js";

const describeWithSlapd = describeNeedingService("packages/ldap/src/ldap-deadline.test.ts", slapdMissing());
const directory = ldapDirectory();
const { alice } = ldapPeople;

let slapd: SlapdServer;
let forwarder: TcpForwarder;
const settings = (changes: Partial<DirectorySettings> = {}) => directorySettingsFor(slapd, changes);
/**
 * How soon an aborted step must end: well under the step timeouts it must not wait for (5 s to
 * connect, 8 s per operation), with room for a busy machine that takes a second to schedule it.
 */
const atOnce = 2500;
/** Through the forwarder, StartTLS, with the contract's step timeouts: 5 s to connect, 8 s per operation. */
const forwarded = () => settings({ serverUrl: `ldap://127.0.0.1:${forwarder.port}` });
/** Through the forwarder in plaintext, so that it reads what the client sends. */
const forwardedPlain = () => settings({ serverUrl: `ldap://127.0.0.1:${forwarder.port}`, startTls: false, allowPlaintext: true });

/** The error `attempt` fails with: 50300 whose cause is the aborted step. */
async function aborted(attempt: Promise<unknown>): Promise<LdapFailure> {
  const error = await attempt.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(isAuthError(error, ErrorCode.Unavailable), String(error)).toBe(true);
  const cause = (error as Error).cause;
  expect(cause).toBeInstanceOf(LdapFailure);
  expect(cause).toMatchObject({ kind: "timeout" });
  return cause as LdapFailure;
}

describeWithSlapd("ldapDirectory with an abort signal", () => {
  beforeAll(async () => {
    slapd = await startSlapd();
  });
  afterAll(async () => {
    await slapd?.stop();
  });
  afterEach(async () => {
    await forwarder?.close();
  });

  it("LDAP-4: a login aborted while the directory has gone silent ends at once, and its connection is closed", async () => {
    forwarder = await startTcpForwarder(slapd.port);
    const controller = new AbortController();
    let started = 0;
    const attempt = directory.authenticate(forwarded(), alice.uid, alice.password, {
      signal: controller.signal,
      // The search has answered; from now on the directory answers nothing, as a host gone without a reset.
      beforeBind: async () => {
        forwarder.cut("stall");
        setTimeout(() => {
          started = performance.now();
          controller.abort(new Error("the login's deadline passed"));
        }, 100);
      },
    });
    const cause = await aborted(attempt);
    expect(performance.now() - started).toBeLessThan(atOnce);
    expect(cause.message).toBe("bind was aborted");
    expect(cause.cause).toEqual(new Error("the login's deadline passed"));
    await expect.poll(() => openConnectionsTo(forwarder.port), { timeout: atOnce, interval: 20 }).toBe(0);
  });

  it("LDAP-4: once the signal is aborted nothing more is sent: no bind as the user after an abort in beforeBind", async () => {
    forwarder = await startTcpForwarder(slapd.port);
    const controller = new AbortController();
    const cause = await aborted(
      directory.authenticate(forwardedPlain(), alice.uid, alice.password, {
        signal: controller.signal,
        beforeBind: async () => controller.abort(),
      }),
    );
    expect(cause.message).toBe("bind was aborted");
    expect(forwarder.sent().includes(Buffer.from(alice.dn))).toBe(false);
    await expect.poll(() => openConnectionsTo(forwarder.port), { timeout: atOnce, interval: 20 }).toBe(0);
  });

  it("LDAP-4: an already aborted signal sends nothing; check says timeout", async () => {
    forwarder = await startTcpForwarder(slapd.port);
    const signal = AbortSignal.abort();
    await aborted(directory.authenticate(forwardedPlain(), alice.uid, alice.password, { signal }));
    await aborted(directory.lookup(forwardedPlain(), { username: alice.uid }, { signal }));
    expect(await directory.check(forwardedPlain(), { signal })).toMatchObject({ ok: false, category: "timeout" });
    expect(forwarder.sent()).toHaveLength(0);
  });

  it("LDAP-4: a lookup and a check against a server that accepts and never answers end when the signal aborts, not at the step timeouts", async () => {
    forwarder = await startTcpForwarder(null);
    for (const run of [
      (signal: AbortSignal) => directory.lookup(forwarded(), { username: alice.uid }, { signal }),
      (signal: AbortSignal) => directory.check(forwarded(), { signal }),
    ]) {
      const started = performance.now();
      const outcome = await run(AbortSignal.timeout(300)).catch((error: unknown) => error);
      expect(performance.now() - started).toBeLessThan(300 + atOnce);
      expect(isAuthError(outcome, ErrorCode.Unavailable) || (outcome as { category?: string }).category === "timeout").toBe(true);
    }
    await expect.poll(() => openConnectionsTo(forwarder.port), { timeout: atOnce, interval: 20 }).toBe(0);
  });

  it("a signal that is never aborted changes nothing", async () => {
    const { signal } = new AbortController();
    expect(await directory.authenticate(settings(), alice.uid, alice.password, { signal })).toMatchObject({
      status: "authenticated",
    });
    expect(await directory.lookup(settings(), { username: alice.uid }, { signal })).toMatchObject({ username: "alice" });
    expect(await directory.check(settings(), { signal })).toEqual({ ok: true });
  });
});
