import { describe, expect, it } from "vitest";
import { addUser, goodPassword, makeAuth, outcome } from "../flows/fixtures.test-support.js";
import { memoryStorage } from "../storage/memory.js";
import { isWellFormedClientSecret } from "./client-secret.js";
import {
  addClientSecret,
  createServiceAccount,
  deleteServiceAccount,
  getServiceAccount,
  listServiceAccounts,
  removeServiceAccountCredential,
  updateServiceAccount,
} from "./manage-service-accounts.js";
import { resolveServiceAccountsConfig } from "./service-account-config.js";

const accountsAuth = (serviceAccounts: Parameters<typeof resolveServiceAccountsConfig>[0] = {}) =>
  makeAuth({ serviceAccounts: { enabled: true, ...serviceAccounts } });

describe("serviceAccounts options", () => {
  it("default to off, 10-minute tokens, live secrets that last until removed, any scope", () => {
    expect(resolveServiceAccountsConfig(undefined)).toEqual({
      enabled: false,
      tokenTtlSeconds: 600,
      environment: "live",
      secretTtlSeconds: null,
      scopes: null,
      tokenEndpoint: null,
    });
  });

  it.each([
    [{ enabled: "yes" }, /serviceAccounts.enabled must be true or false/],
    [{ tokenTtl: "2h" }, /tokenTtl must be at most "1h"/],
    [{ environment: "Prod" }, /serviceAccounts.environment must be/],
    [{ scopes: [] }, /serviceAccounts.scopes must be/],
    [{ scopes: ["a b"] }, /serviceAccounts.scopes must be/],
    [{ tokenEndpoint: "api.example.com/token" }, /tokenEndpoint must be an absolute URL/],
    [{ tokenEndpoint: "ftp://api.example.com/token" }, /tokenEndpoint must be an absolute URL/],
    [{ tokenTTL: "5m" }, /serviceAccounts.tokenTTL/],
  ])("refuse %j at startup", (options, message) => {
    expect(() => resolveServiceAccountsConfig(options as never)).toThrow(message);
  });

  it("refuse to be enabled over a storage that keeps no service accounts", () => {
    const { serviceAccounts: _, ...storage } = memoryStorage();
    expect(() => makeAuth({ storage, serviceAccounts: { enabled: true } })).toThrow(/needs a storage with serviceAccounts/);
  });
});

describe("SA-1: service accounts, made and changed by administrators who re-authenticate", () => {
  it("an account has a name, roles and scopes, no password, and is listed; every change needs a re-authentication", async () => {
    const harness = accountsAuth({ scopes: ["invoices:read", "invoices:write"] });
    const adminUserId = await addUser(harness.auth, "root", goodPassword, ["admin"]);
    const input = { adminUserId, name: " billing ", roles: ["billing"], scopes: ["invoices:read"] };
    expect(await outcome(createServiceAccount(harness.auth, input))).toBe(40001);
    expect(await outcome(createServiceAccount(harness.auth, { ...input, password: "wrong" }))).toBe(40100);
    expect(await outcome(createServiceAccount(harness.auth, { ...input, scopes: ["deploy"], password: goodPassword }))).toBe(
      42200,
    );
    expect(await outcome(createServiceAccount(harness.auth, { ...input, name: "\u200b", password: goodPassword }))).toBe(42200);
    const account = await createServiceAccount(harness.auth, { ...input, password: goodPassword });
    expect(account).toEqual({
      id: account.id,
      clientId: account.id,
      name: "billing",
      roles: ["billing"],
      scopes: ["invoices:read"],
      disabled: false,
      createdAt: harness.clock.now,
      createdBy: adminUserId,
    });
    expect(await harness.storage.users.findById(account.id)).toBeNull();
    expect(await listServiceAccounts(harness.auth)).toEqual([account]);
    expect(await getServiceAccount(harness.auth, { id: account.id })).toEqual({ ...account, credentials: [] });
    expect(await outcome(getServiceAccount(harness.auth, { id: "nope" }))).toBe(40400);

    expect(await outcome(updateServiceAccount(harness.auth, { adminUserId, id: account.id, name: "b" }))).toBe(40001);
    expect(await outcome(updateServiceAccount(harness.auth, { adminUserId, id: account.id, password: goodPassword }))).toBe(
      40001,
    );
    const renamed = await updateServiceAccount(harness.auth, {
      adminUserId,
      id: account.id,
      name: "ledger",
      password: goodPassword,
    });
    expect(renamed).toMatchObject({ name: "ledger", roles: ["billing"], scopes: ["invoices:read"] });
    expect((await harness.storage.serviceAccounts?.findServiceAccount(account.id))?.tokenVersion).toBe(0);
    await updateServiceAccount(harness.auth, {
      adminUserId,
      id: account.id,
      scopes: ["invoices:write"],
      password: goodPassword,
    });
    expect((await harness.storage.serviceAccounts?.findServiceAccount(account.id))?.tokenVersion).toBe(1);
    expect(
      await outcome(updateServiceAccount(harness.auth, { adminUserId, id: "nope", name: "x", password: goodPassword })),
    ).toBe(40400);
    expect(await outcome(deleteServiceAccount(harness.auth, { adminUserId, id: account.id }))).toBe(40001);
    expect(await deleteServiceAccount(harness.auth, { adminUserId, id: account.id, password: goodPassword })).toEqual({
      deleted: true,
    });
    expect(await listServiceAccounts(harness.auth)).toEqual([]);
    expect(await outcome(deleteServiceAccount(harness.auth, { adminUserId, id: account.id, password: goodPassword }))).toBe(
      40400,
    );
    expect(harness.events.map((event) => event.type).filter((type) => type.startsWith("service_account."))).toEqual([
      "service_account.created",
      "service_account.updated",
      "service_account.updated",
      "service_account.deleted",
    ]);
  });

  it("with service accounts off, every flow answers 40400", async () => {
    const harness = makeAuth();
    const adminUserId = await addUser(harness.auth, "root", goodPassword, ["admin"]);
    expect(await outcome(createServiceAccount(harness.auth, { adminUserId, name: "x", password: goodPassword }))).toBe(40400);
    expect(await outcome(listServiceAccounts(harness.auth))).toBe(40400);
  });
});

describe("SA-2: a secret's default lifetime", () => {
  it("serviceAccounts.secretTtl is a secret's lifetime when its request names none", async () => {
    const harness = accountsAuth({ secretTtl: "30d" });
    const adminUserId = await addUser(harness.auth, "root", goodPassword, ["admin"]);
    const account = await createServiceAccount(harness.auth, { adminUserId, name: "ci", password: goodPassword });
    const secret = await addClientSecret(harness.auth, { adminUserId, id: account.id, password: goodPassword });
    expect(secret.expiresAt).toBe(harness.clock.now + 30 * 86_400_000);
    expect(account.roles).toEqual([]);
  });
});

describe("SA-2: client secrets, shown once and stored as their SHA-256; two at once", () => {
  it("a secret is answered once, kept only as its digest and first characters, and at most two live ones are held", async () => {
    const harness = accountsAuth({ environment: "test" });
    const adminUserId = await addUser(harness.auth, "root", goodPassword, ["admin"]);
    const account = await createServiceAccount(harness.auth, { adminUserId, name: "ci", password: goodPassword });
    const first = await addClientSecret(harness.auth, { adminUserId, id: account.id, password: goodPassword });
    expect(isWellFormedClientSecret(first.clientSecret, "test")).toBe(true);
    expect(first.clientSecret.startsWith("pcs_test_")).toBe(true);
    expect(first).toMatchObject({ kind: "secret", start: first.clientSecret.slice(0, 13), kid: null, expiresAt: null });
    const client = await harness.storage.serviceAccounts?.findServiceAccountClient(account.id);
    expect(JSON.stringify(client)).not.toContain(first.clientSecret.slice(13));
    const second = await addClientSecret(harness.auth, { adminUserId, id: account.id, expiresIn: "1d", password: goodPassword });
    expect(second.expiresAt).toBe(harness.clock.now + 86_400_000);
    expect(await outcome(addClientSecret(harness.auth, { adminUserId, id: account.id, password: goodPassword }))).toBe(40900);
    harness.clock.advance(86_400_000);
    const third = await addClientSecret(harness.auth, { adminUserId, id: account.id, password: goodPassword });
    const listed = await getServiceAccount(harness.auth, { id: account.id });
    expect(listed.credentials.map((credential) => credential.id)).toEqual([first.id, second.id, third.id]);
    expect(JSON.stringify(listed)).not.toContain(first.clientSecret);
    expect(await outcome(addClientSecret(harness.auth, { adminUserId, id: "nope", password: goodPassword }))).toBe(40400);
    expect(
      await outcome(addClientSecret(harness.auth, { adminUserId, id: account.id, expiresIn: "soon", password: goodPassword })),
    ).toBe(42200);
    expect(
      await removeServiceAccountCredential(harness.auth, {
        adminUserId,
        id: account.id,
        credentialId: first.id,
        password: goodPassword,
      }),
    ).toEqual({ removed: true });
    expect(
      await outcome(
        removeServiceAccountCredential(harness.auth, {
          adminUserId,
          id: account.id,
          credentialId: first.id,
          password: goodPassword,
        }),
      ),
    ).toBe(40400);
    const secretEvents = harness.events.filter((event) => event.type.startsWith("service_account.credential"));
    expect(secretEvents.map((event) => event.type)).toEqual([
      "service_account.credential_added",
      "service_account.credential_added",
      "service_account.credential_added",
      "service_account.credential_removed",
    ]);
    expect(JSON.stringify(harness.events)).not.toContain(first.clientSecret);
  });
});
