import type {
  PublicJwk,
  ServiceAccountCredentialRecord,
  ServiceAccountRecord,
  ServiceAccountStore,
} from "../../storage/service-account-store.js";
import type { Storage } from "../../storage/types.js";
import { type SuiteContext, concurrently, countWhere, tryToMutate } from "./harness.js";
import { BASE_TIME, createUser, uniqueHash, uniqueId } from "./samples.js";

const MINUTE = 60_000;
const DAY = 86_400_000;

/** A service account with a fresh id, made at the kit's base time by no administrator. */
function sampleServiceAccount(overrides: Partial<ServiceAccountRecord> = {}): ServiceAccountRecord {
  return {
    id: uniqueId("sa"),
    name: "Nightly reports",
    roles: ["reports"],
    scopes: ["reports:read", "reports:write"],
    disabled: false,
    tokenVersion: 0,
    createdAt: BASE_TIME,
    createdBy: null,
    ...overrides,
  };
}

/** A client secret of `serviceAccountId` with a fresh id and hash, never expiring, never used. */
function sampleSecret(
  serviceAccountId: string,
  overrides: Partial<Extract<ServiceAccountCredentialRecord, { kind: "secret" }>> = {},
): ServiceAccountCredentialRecord {
  return {
    id: uniqueId("cred"),
    serviceAccountId,
    createdAt: BASE_TIME,
    expiresAt: null,
    lastUsedAt: null,
    kind: "secret",
    secretHash: uniqueHash(),
    start: "pcs_live_AbCd",
    ...overrides,
  };
}

/** The public keys of each kind a service account may register, as RFC 7517 writes them. */
const sampleJwks: readonly PublicJwk[] = [
  {
    kty: "RSA",
    kid: "rsa-2048",
    alg: "PS256",
    n: `${"u".repeat(340)}Q`,
    e: "AQAB",
  },
  {
    kty: "EC",
    kid: "ec-p384",
    alg: "ES384",
    crv: "P-384",
    x: "mmYZrnB7Of1bQ2YZa6eP6ZbDqOEctEF4wJeSlZuYK8lX4M3jd0iLf8b5fP1wN8pO",
    y: "Q2YZa6eP6ZbDqOEctEF4wJeSlZuYK8lX4M3jd0iLf8b5fP1wN8pOmmYZrnB7Of1b",
  },
  { kty: "OKP", kid: "ed-1", alg: "EdDSA", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo" },
];

/** A registered public key of `serviceAccountId` with a fresh id, never expiring, never used. */
function sampleKey(
  serviceAccountId: string,
  publicJwk: PublicJwk = sampleJwks[2] as PublicJwk,
  overrides: Partial<Extract<ServiceAccountCredentialRecord, { kind: "jwk" }>> = {},
): ServiceAccountCredentialRecord {
  return {
    id: uniqueId("cred"),
    serviceAccountId,
    createdAt: BASE_TIME,
    expiresAt: null,
    lastUsedAt: null,
    kind: "jwk",
    publicJwk,
    ...overrides,
  };
}

function serviceAccountsOf(storage: Storage): ServiceAccountStore {
  if (storage.serviceAccounts === undefined) {
    throw new Error("this storage has no serviceAccounts store: implement it, or opt out with skip: { serviceAccounts: reason }");
  }
  return storage.serviceAccounts;
}

/** The storage's service account store and a stored account. */
async function withAccount(makeStorage: SuiteContext["makeStorage"], overrides: Partial<ServiceAccountRecord> = {}) {
  const storage = await makeStorage();
  const accounts = serviceAccountsOf(storage);
  const account = sampleServiceAccount(overrides);
  await accounts.createServiceAccount(account);
  return { storage, accounts, account };
}

/** Credentials in id order: the store's order of a client's credentials is its own. */
const byId = (credentials: readonly ServiceAccountCredentialRecord[]) =>
  [...credentials].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

/** Adds `credential` and fails the setup unless it was added. */
async function added(accounts: ServiceAccountStore, credential: ServiceAccountCredentialRecord, maxOfKind = 10) {
  const result = await accounts.addServiceAccountCredential(credential, maxOfKind, BASE_TIME);
  if (result !== "added") throw new Error(`conformance setup: credential ${credential.id} was not added (${result})`);
  return credential;
}

/**
 * Registers the `serviceAccounts` suite: accounts stored, listed, changed and deleted with their
 * credentials; a client read with its credentials of both kinds; the limit per kind held under
 * concurrent additions (SA-2); credentials removed, and their use recorded at most once an interval.
 */
export function serviceAccountsSuite({ test: { describe, it, expect }, makeStorage }: SuiteContext): void {
  describe("serviceAccounts", () => {
    it("SA-1: createServiceAccount stores an account that findServiceAccount returns, every field kept; an unknown id is null", async () => {
      const storage = await makeStorage();
      const accounts = serviceAccountsOf(storage);
      const adminId = await createUser(storage, { roles: ["admin"] });
      const stored = [
        sampleServiceAccount({ roles: [], scopes: [], name: "Zoë's \u{1F600} 'robot' \"x\" \\ %_" }),
        sampleServiceAccount({ disabled: true, tokenVersion: 7, createdBy: adminId, createdAt: BASE_TIME + 1 }),
        sampleServiceAccount({ roles: ["a", "b c", "ü:*"], scopes: ["reports:read", "deploy:*"] }),
      ];
      for (const account of stored) await accounts.createServiceAccount(account);
      for (const account of stored) expect(await accounts.findServiceAccount(account.id)).toEqual(account);
      expect(await accounts.findServiceAccount(uniqueId("sa"))).toBeNull();
      expect(await accounts.findServiceAccountClient(uniqueId("sa"))).toBeNull();
    });

    it("listServiceAccounts lists every account, oldest first", async () => {
      const accounts = serviceAccountsOf(await makeStorage());
      const made = [BASE_TIME + 20, BASE_TIME - 10, BASE_TIME + 10].map((createdAt) => sampleServiceAccount({ createdAt }));
      for (const account of made) await accounts.createServiceAccount(account);
      const ids = new Set(made.map((account) => account.id));
      const listed = (await accounts.listServiceAccounts()).filter((account) => ids.has(account.id));
      expect(listed).toEqual([made[1], made[2], made[0]]);
    });

    it("SA-4: updateServiceAccount changes the fields given and keeps the absent ones; raiseTokenVersion raises the version by one; an unknown id is null", async () => {
      const { accounts, account } = await withAccount(makeStorage, { tokenVersion: 3 });
      const renamed = { ...account, name: "Renamed" };
      expect(await accounts.updateServiceAccount(account.id, { name: "Renamed" })).toEqual(renamed);
      expect(await accounts.findServiceAccount(account.id)).toEqual(renamed);

      const changed = { ...renamed, roles: ["auditor"], scopes: [], disabled: true, tokenVersion: 4 };
      expect(
        await accounts.updateServiceAccount(account.id, {
          roles: ["auditor"],
          scopes: [],
          disabled: true,
          raiseTokenVersion: true,
        }),
      ).toEqual(changed);
      expect(await accounts.updateServiceAccount(account.id, { raiseTokenVersion: true })).toEqual({
        ...changed,
        tokenVersion: 5,
      });
      expect(await accounts.updateServiceAccount(account.id, { raiseTokenVersion: false, disabled: true })).toEqual({
        ...changed,
        tokenVersion: 5,
      });
      expect(await accounts.updateServiceAccount(account.id, {})).toEqual({ ...changed, tokenVersion: 5 });
      expect(await accounts.findServiceAccount(account.id)).toEqual({ ...changed, tokenVersion: 5 });
      expect(await accounts.updateServiceAccount(uniqueId("sa"), { name: "Nobody" })).toBeNull();
      expect(await accounts.updateServiceAccount(uniqueId("sa"), { raiseTokenVersion: true })).toBeNull();
      expect(await accounts.updateServiceAccount(uniqueId("sa"), {})).toBeNull();
    });

    it("SA-2: findServiceAccountClient answers the account with its credentials of both kinds, expired ones included and each JWK intact, and no other account's", async () => {
      const { accounts, account } = await withAccount(makeStorage);
      const other = sampleServiceAccount();
      await accounts.createServiceAccount(other);
      expect(await accounts.findServiceAccountClient(account.id)).toEqual({ account, credentials: [] });
      const credentials: ServiceAccountCredentialRecord[] = [
        await added(accounts, sampleSecret(account.id, { start: "pcs_live_Zz09", lastUsedAt: BASE_TIME + 2 })),
        await added(accounts, sampleSecret(account.id, { createdAt: BASE_TIME - 2 * DAY, expiresAt: BASE_TIME - DAY })),
      ];
      for (const jwk of sampleJwks)
        credentials.push(await added(accounts, sampleKey(account.id, jwk, { createdAt: BASE_TIME + 1 })));
      credentials.push(await added(accounts, sampleKey(account.id, sampleJwks[2], { expiresAt: BASE_TIME + 90 * DAY })));
      await added(accounts, sampleSecret(other.id));
      const client = await accounts.findServiceAccountClient(account.id);
      expect(client?.account).toEqual(account);
      expect(byId(client?.credentials ?? [])).toEqual(byId(credentials));
      expect((await accounts.findServiceAccountClient(other.id))?.credentials).toHaveLength(1);
    });

    it("SA-2: addServiceAccountCredential refuses one past maxOfKind live credentials of its kind (expired ones and the other kind not counted) and answers unknown_account for no such account", async () => {
      const { accounts, account } = await withAccount(makeStorage);
      const now = BASE_TIME + DAY;
      const add = (credential: ServiceAccountCredentialRecord) => accounts.addServiceAccountCredential(credential, 2, now);
      expect(await add(sampleSecret(account.id, { expiresAt: now }))).toBe("added");
      expect(await add(sampleSecret(account.id, { expiresAt: now - 1 }))).toBe("added");
      expect(await add(sampleKey(account.id))).toBe("added");
      expect(await add(sampleKey(account.id))).toBe("added");
      expect(await add(sampleSecret(account.id, { expiresAt: now + 1 }))).toBe("added");
      expect(await add(sampleSecret(account.id))).toBe("added");
      const refusedSecret = sampleSecret(account.id);
      const refusedKey = sampleKey(account.id);
      expect(await add(refusedSecret)).toBe("limit");
      expect(await add(refusedKey)).toBe("limit");
      // At a later now, the secret that expired then no longer counts.
      expect(await accounts.addServiceAccountCredential(refusedSecret, 2, now + 1)).toBe("added");
      expect(await accounts.addServiceAccountCredential(sampleSecret(account.id), 2, now + 1)).toBe("limit");

      const unknown = uniqueId("sa");
      expect(await add(sampleSecret(unknown))).toBe("unknown_account");
      expect(await accounts.findServiceAccountClient(unknown)).toBeNull();
      const client = await accounts.findServiceAccountClient(account.id);
      expect(countWhere(client?.credentials ?? [], (credential) => credential.kind === "secret")).toBe(5);
      expect(countWhere(client?.credentials ?? [], (credential) => credential.kind === "jwk")).toBe(2);
      expect((client?.credentials ?? []).some((credential) => credential.id === refusedKey.id)).toBe(false);
    });

    it("SA-2: of 10 concurrent additions to an account holding maxOfKind - 1 live credentials of a kind exactly one is added", async () => {
      const { accounts, account } = await withAccount(makeStorage);
      for (let index = 0; index < 2; index += 1) await added(accounts, sampleSecret(account.id), 3);
      await added(accounts, sampleSecret(account.id, { expiresAt: BASE_TIME }), 3);
      const contenders = Array.from({ length: 10 }, () => sampleSecret(account.id));
      const results = await concurrently(10, (index) =>
        accounts.addServiceAccountCredential(contenders[index] as ServiceAccountCredentialRecord, 3, BASE_TIME),
      );
      expect(countWhere(results, (result) => result === "added")).toBe(1);
      expect(countWhere(results, (result) => result === "limit")).toBe(9);
      const winner = contenders[results.indexOf("added")] as ServiceAccountCredentialRecord;
      const held = (await accounts.findServiceAccountClient(account.id))?.credentials ?? [];
      expect(held).toHaveLength(4);
      expect(held.find((credential) => credential.id === winner.id)).toEqual(winner);
    });

    it("removeServiceAccountCredential removes the account's credential once; another account's or an unknown one is false and kept", async () => {
      const { accounts, account } = await withAccount(makeStorage);
      const other = sampleServiceAccount();
      await accounts.createServiceAccount(other);
      const secret = await added(accounts, sampleSecret(account.id));
      const key = await added(accounts, sampleKey(account.id));
      expect(await accounts.removeServiceAccountCredential(other.id, secret.id)).toBe(false);
      expect(await accounts.removeServiceAccountCredential(account.id, uniqueId("cred"))).toBe(false);
      expect(await accounts.removeServiceAccountCredential(uniqueId("sa"), secret.id)).toBe(false);
      expect(await accounts.removeServiceAccountCredential(account.id, secret.id)).toBe(true);
      expect(await accounts.removeServiceAccountCredential(account.id, secret.id)).toBe(false);
      expect(await accounts.findServiceAccountClient(account.id)).toEqual({ account, credentials: [key] });
    });

    it("deleteServiceAccount deletes the account with its credentials, once; an unknown id is false", async () => {
      const { accounts, account } = await withAccount(makeStorage);
      const secret = await added(accounts, sampleSecret(account.id));
      const key = await added(accounts, sampleKey(account.id));
      const kept = sampleServiceAccount();
      await accounts.createServiceAccount(kept);
      const keptSecret = await added(accounts, sampleSecret(kept.id));

      expect(await accounts.deleteServiceAccount(account.id)).toBe(true);
      expect(await accounts.deleteServiceAccount(account.id)).toBe(false);
      expect(await accounts.deleteServiceAccount(uniqueId("sa"))).toBe(false);
      expect(await accounts.findServiceAccount(account.id)).toBeNull();
      expect(await accounts.findServiceAccountClient(account.id)).toBeNull();
      expect((await accounts.listServiceAccounts()).some((each) => each.id === account.id)).toBe(false);
      expect(await accounts.removeServiceAccountCredential(account.id, secret.id)).toBe(false);
      await accounts.recordServiceAccountCredentialUse(key.id, BASE_TIME + MINUTE, MINUTE);
      // Made again with its id, the account holds none of the credentials it had.
      await accounts.createServiceAccount(account);
      expect(await accounts.findServiceAccountClient(account.id)).toEqual({ account, credentials: [] });
      expect(await accounts.findServiceAccountClient(kept.id)).toEqual({ account: kept, credentials: [keptSecret] });
    });

    it("recordServiceAccountCredentialUse writes lastUsedAt at most once per interval; an older `at` never moves it back; an unknown id is passed over", async () => {
      const { accounts, account } = await withAccount(makeStorage);
      const secret = await added(accounts, sampleSecret(account.id));
      const key = await added(accounts, sampleKey(account.id, sampleJwks[0], { lastUsedAt: BASE_TIME + 10 * MINUTE }));
      const lastUsed = async (id: string) =>
        (await accounts.findServiceAccountClient(account.id))?.credentials.find((credential) => credential.id === id)?.lastUsedAt;
      const t = BASE_TIME + 10 * MINUTE;

      await accounts.recordServiceAccountCredentialUse(uniqueId("cred"), t, MINUTE);
      await accounts.recordServiceAccountCredentialUse(secret.id, t, MINUTE);
      expect(await lastUsed(secret.id)).toBe(t);
      await accounts.recordServiceAccountCredentialUse(secret.id, t + MINUTE - 1, MINUTE);
      expect(await lastUsed(secret.id)).toBe(t);
      await accounts.recordServiceAccountCredentialUse(secret.id, t + MINUTE, MINUTE);
      expect(await lastUsed(secret.id)).toBe(t + MINUTE);
      await accounts.recordServiceAccountCredentialUse(secret.id, t - 5 * MINUTE, MINUTE);
      expect(await lastUsed(secret.id)).toBe(t + MINUTE);
      await accounts.recordServiceAccountCredentialUse(key.id, t + 30_000, MINUTE);
      expect(await lastUsed(key.id)).toBe(t);
      await accounts.recordServiceAccountCredentialUse(key.id, t + 1, 0);
      expect(await lastUsed(key.id)).toBe(t + 1);

      await concurrently(10, (index) => accounts.recordServiceAccountCredentialUse(secret.id, t + 3 * MINUTE + index, MINUTE));
      const first = (await lastUsed(secret.id)) as number;
      expect(first >= t + 3 * MINUTE && first < t + 3 * MINUTE + 10).toBe(true);
      expect((await accounts.findServiceAccountClient(account.id))?.credentials.find((each) => each.id === key.id)).toEqual({
        ...key,
        lastUsedAt: t + 1,
      });
    });

    it("records are copied in and out: changing what was passed in or handed out changes nothing stored", async () => {
      const { accounts, account } = await withAccount(makeStorage, { roles: ["reports"] });
      const keptAccount = structuredClone(account);
      const key = sampleKey(account.id, { ...(sampleJwks[1] as PublicJwk) });
      await added(accounts, key);
      const keptKey = structuredClone(key);
      tryToMutate(() => {
        account.roles.push("admin");
        account.name = "Changed";
        if (key.kind === "jwk") key.publicJwk.x = "changed";
      });
      const found = await accounts.findServiceAccount(account.id);
      tryToMutate(() => {
        found?.roles.push("admin");
        found?.scopes.push("admin:*");
      });
      const client = await accounts.findServiceAccountClient(account.id);
      tryToMutate(() => {
        client?.account.roles.push("admin");
        client?.credentials.pop();
        const credential = client?.credentials[0];
        if (credential?.kind === "jwk") credential.publicJwk.kid = "changed";
      });
      for (const listed of await accounts.listServiceAccounts()) {
        if (listed.id === account.id) tryToMutate(() => listed.roles.push("admin"));
      }
      expect(await accounts.findServiceAccountClient(account.id)).toEqual({ account: keptAccount, credentials: [keptKey] });
    });
  });
}
