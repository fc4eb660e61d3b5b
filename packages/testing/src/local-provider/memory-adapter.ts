/** What oidc-provider stores per model (sessions, grants, codes, interactions…), as its adapters see it. */
interface StoredPayload {
  uid?: string;
  userCode?: string;
  grantId?: string;
  consumed?: number;
  [claim: string]: unknown;
}

interface Entry {
  payload: StoredPayload;
  /** Epoch milliseconds, or Infinity when oidc-provider gave no lifetime. */
  expiresAt: number;
}

/** The adapter interface of oidc-provider (its `adapter` option): one instance per model name. */
export interface ProviderAdapter {
  upsert(id: string, payload: StoredPayload, expiresIn?: number): Promise<void>;
  find(id: string): Promise<StoredPayload | undefined>;
  findByUid(uid: string): Promise<StoredPayload | undefined>;
  findByUserCode(userCode: string): Promise<StoredPayload | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

/**
 * An in-memory store for one provider, given to oidc-provider as its `adapter`: the same lifetimes
 * and lookups as its built-in development adapter, but per provider rather than one store for every
 * provider of the process, and configured explicitly, so oidc-provider has nothing to warn about.
 */
export function memoryAdapter(): new (model: string) => ProviderAdapter {
  const entries = new Map<string, Entry>();
  const byUid = new Map<string, string>();
  const byUserCode = new Map<string, string>();
  const byGrant = new Map<string, Set<string>>();

  const live = (key: string | undefined): StoredPayload | undefined => {
    if (key === undefined) return undefined;
    const entry = entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      remove(key);
      return undefined;
    }
    return entry.payload;
  };
  const remove = (key: string): void => {
    const payload = entries.get(key)?.payload;
    entries.delete(key);
    if (!payload) return;
    if (payload.uid !== undefined && byUid.get(payload.uid) === key) byUid.delete(payload.uid);
    if (payload.userCode !== undefined && byUserCode.get(payload.userCode) === key) byUserCode.delete(payload.userCode);
    if (payload.grantId !== undefined) byGrant.get(payload.grantId)?.delete(key);
  };

  return class MemoryAdapter implements ProviderAdapter {
    readonly #model: string;

    constructor(model: string) {
      this.#model = model;
    }

    #key(id: string): string {
      return `${this.#model}:${id}`;
    }

    async upsert(id: string, payload: StoredPayload, expiresIn?: number): Promise<void> {
      const key = this.#key(id);
      remove(key);
      entries.set(key, {
        payload,
        expiresAt: expiresIn === undefined ? Number.POSITIVE_INFINITY : Date.now() + expiresIn * 1000,
      });
      if (payload.uid !== undefined) byUid.set(payload.uid, key);
      if (payload.userCode !== undefined) byUserCode.set(payload.userCode, key);
      if (payload.grantId !== undefined) {
        const members = byGrant.get(payload.grantId) ?? new Set<string>();
        members.add(key);
        byGrant.set(payload.grantId, members);
      }
    }

    async find(id: string): Promise<StoredPayload | undefined> {
      return live(this.#key(id));
    }

    async findByUid(uid: string): Promise<StoredPayload | undefined> {
      return live(byUid.get(uid));
    }

    async findByUserCode(userCode: string): Promise<StoredPayload | undefined> {
      return live(byUserCode.get(userCode));
    }

    async consume(id: string): Promise<void> {
      const payload = live(this.#key(id));
      if (payload) payload.consumed = Math.floor(Date.now() / 1000);
    }

    async destroy(id: string): Promise<void> {
      remove(this.#key(id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      for (const key of byGrant.get(grantId) ?? []) remove(key);
      byGrant.delete(grantId);
    }
  };
}
