import type {
  ChallengeKind,
  ChallengeRecord,
  ChallengeStore,
  CounterStore,
  IdentityRecord,
  IdentityStore,
  PasskeyRecord,
  PasskeyStore,
  RecoveryCodeStore,
  RefreshTokenRecord,
  SessionRecord,
  SessionStore,
  SettingsStore,
  Storage,
  TotpRecord,
  TotpStore,
  UserPatch,
  UserRecord,
  UserStore,
} from "@portcullis/core";
import { type Kysely, sql } from "kysely";
import { assertSchemaCurrent } from "./migrations.js";
import type {
  AnyDatabase,
  ChallengeRow,
  IdentityRow,
  PasskeyRow,
  RefreshTokenRow,
  SessionRow,
  SqlDialect,
  Tables,
  TotpRow,
  UserRow,
} from "./schema.js";
import { tablesWithPrefix } from "./schema.js";
import { withUnavailableAsAuthError } from "./unavailable.js";

/** Options of {@link kyselyStorage}. */
export interface KyselyStorageOptions {
  /** Your Kysely instance. Its pool is yours: see docs/storage.md for the error handlers `pg` needs. */
  // biome-ignore lint/suspicious/noExplicitAny: any database type; the tables are named at run time.
  db: Kysely<any>;
  /** `"postgres"` (also PGlite) or `"mysql"` (MariaDB, MySQL). */
  dialect: SqlDialect;
  /** Put before every table name, so the tables live beside yours: `auth_` gives `auth_users`. */
  prefix?: string;
}

/** A {@link Storage} over SQL, with what `migrate` and `close` need. */
export interface KyselyStorage extends Storage {
  // biome-ignore lint/suspicious/noExplicitAny: see KyselyStorageOptions.db.
  readonly db: Kysely<any>;
  readonly dialect: SqlDialect;
  readonly tables: Tables;
  /** Ends the Kysely instance (and its pool). */
  close(): Promise<void>;
}

const num = (value: number | string | bigint) => Number(value);
const numOrNull = (value: number | string | bigint | null) => (value === null ? null : Number(value));
const flag = (value: boolean | number | string) => value === true || value === 1 || value === "1";

/** PostgreSQL 23505 and MySQL ER_DUP_ENTRY (1062): an insert met a row with its key. */
function isDuplicate(error: unknown): boolean {
  const { code, errno } = (error ?? {}) as { code?: unknown; errno?: unknown };
  return code === "23505" || code === "ER_DUP_ENTRY" || errno === 1062;
}

/** Runs an insert or update; false when it met another row with the same unique key. */
async function unlessDuplicate(run: () => Promise<unknown>): Promise<boolean> {
  try {
    await run();
    return true;
  } catch (error) {
    if (isDuplicate(error)) return false;
    throw error;
  }
}

function toUser(row: UserRow): UserRecord {
  return {
    id: row.id,
    username: row.username,
    usernameKey: row.username_key,
    passwordHash: row.password_hash,
    roles: JSON.parse(row.roles) as string[],
    disabled: flag(row.disabled),
    tokenVersion: num(row.token_version),
    source: row.source as UserRecord["source"],
    createdAt: num(row.created_at),
    updatedAt: num(row.updated_at),
  };
}

function toTotp(row: TotpRow): TotpRecord {
  return {
    userId: row.user_id,
    secret: { keyId: row.secret_key_id, sealed: row.secret_sealed },
    enabled: flag(row.enabled),
    lastUsedStep: num(row.last_used_step),
    createdAt: num(row.created_at),
  };
}

function toSession(row: SessionRow): SessionRecord {
  return {
    id: row.id,
    userId: row.user_id,
    tokenVersion: num(row.token_version),
    amr: JSON.parse(row.amr) as SessionRecord["amr"],
    createdAt: num(row.created_at),
    expiresAt: num(row.expires_at),
    revokedAt: numOrNull(row.revoked_at),
  };
}

function toRefreshToken(row: RefreshTokenRow): RefreshTokenRecord {
  return {
    hash: row.hash,
    sessionId: row.session_id,
    userId: row.user_id,
    createdAt: num(row.created_at),
    expiresAt: num(row.expires_at),
    spentAt: numOrNull(row.spent_at),
  };
}

function toChallenge(row: ChallengeRow): ChallengeRecord {
  return {
    id: row.id,
    kind: row.kind as ChallengeKind,
    userId: row.user_id,
    data: JSON.parse(row.data) as Record<string, unknown>,
    attempts: num(row.attempts),
    createdAt: num(row.created_at),
    expiresAt: num(row.expires_at),
  };
}

function toPasskey(row: PasskeyRow): PasskeyRecord {
  return {
    id: row.id,
    userId: row.user_id,
    publicKey: row.public_key,
    counter: num(row.counter),
    transports: JSON.parse(row.transports) as string[],
    label: row.label,
    backupEligible: flag(row.backup_eligible),
    backupState: flag(row.backup_state),
    createdAt: num(row.created_at),
    lastUsedAt: numOrNull(row.last_used_at),
  };
}

function toIdentity(row: IdentityRow): IdentityRecord {
  return {
    provider: row.provider,
    subject: row.subject,
    userId: row.user_id,
    email: row.email,
    emailVerified: flag(row.email_verified),
    createdAt: num(row.created_at),
    lastUsedAt: numOrNull(row.last_used_at),
  };
}

/**
 * Storage over your Kysely instance: PostgreSQL (`pg`), PGlite, or MySQL/MariaDB (`mysql2`).
 * Run {@link migrate} first (or `npx portcullis migrate`); the first operation checks the schema
 * version and says what to run when it is older or newer than this code. Every single-use and
 * counting operation is one conditional statement (ST-1); only parameterised SQL is sent. A
 * connection that fails (the database down, a connection cut) is thrown as `storageUnavailable`,
 * which a request answers with 50300.
 *
 * @example
 * ```ts
 * const storage = kyselyStorage({ db: new Kysely({ dialect: new PostgresDialect({ pool }) }), dialect: "postgres" });
 * await migrate(storage);
 * const auth = createAuth({ storage, ... });
 * ```
 */
export function kyselyStorage(options: KyselyStorageOptions): KyselyStorage {
  const { dialect } = options;
  if (dialect !== "postgres" && dialect !== "mysql") {
    throw new TypeError(`@portcullis/kysely: dialect must be "postgres" or "mysql"; got ${JSON.stringify(dialect)}`);
  }
  const db = options.db as Kysely<AnyDatabase>;
  const t = tablesWithPrefix(options.prefix);
  let schemaChecked: Promise<void> | null = null;
  const ready = () => {
    schemaChecked ??= assertSchemaCurrent(db, dialect, t).catch((error: unknown) => {
      schemaChecked = null;
      throw error;
    });
    return schemaChecked;
  };
  const stores = storesOver(db, dialect, t);
  const storage = Object.fromEntries(
    Object.entries(stores).map(([name, store]) => [name, withUnavailableAsAuthError(store, ready)]),
  ) as unknown as Storage;
  return { ...storage, db, dialect, tables: t, close: () => db.destroy() };
}

function storesOver(db: Kysely<AnyDatabase>, dialect: SqlDialect, t: Tables): Storage {
  const postgres = dialect === "postgres";

  /**
   * An UPDATE that sets `column` to `expression` and reports the new value: `returning` on
   * PostgreSQL, `LAST_INSERT_ID(expression)` on MySQL (the statement's own insert id, so no
   * second query can see another caller's write). Null when no row matched.
   */
  async function updateCounting(
    table: string,
    column: string,
    expression: ReturnType<typeof sql>,
    // biome-ignore lint/suspicious/noExplicitAny: a where clause over the table's columns.
    where: (query: any) => any,
    extra: Record<string, unknown> = {},
  ): Promise<number | null> {
    if (postgres) {
      const row = await where(db.updateTable(table).set({ ...extra, [column]: expression }))
        .returning(column)
        .executeTakeFirst();
      return row ? num(row[column]) : null;
    }
    const compiled = where(db.updateTable(table).set({ ...extra, [column]: sql`last_insert_id(${expression})` })).compile();
    const result = await db.executeQuery(compiled);
    return result.numAffectedRows === BigInt(1) && result.insertId !== undefined ? num(result.insertId) : null;
  }

  /**
   * Deletes what no flow can use any more, at most `limit` rows of each kind: expired
   * challenges, ended throttling windows, refresh tokens past their idle expiry (spent ones too:
   * reuse of one is then "unknown", and it was refused anyway) and sessions past their absolute
   * expiry. Each is one statement over the index on its expiry column, so it holds only the rows
   * it deletes, briefly. Returns how many rows it deleted in all.
   */
  async function deleteExpiredRows(now: number, limit: number): Promise<number> {
    const kinds = [
      [t.challenges, "id", "expires_at"],
      [t.counters, "counter_key", "reset_at"],
      [t.refreshTokens, "hash", "expires_at"],
      [t.sessions, "id", "expires_at"],
    ] as const;
    let deleted = 0;
    for (const [table, key, end] of kinds) {
      // PostgreSQL has no DELETE … LIMIT: the keys of a bounded select name the rows. MySQL has
      // it, and refuses a subquery on the table it deletes from.
      const expired = postgres
        ? db.deleteFrom(table).where(key, "in", db.selectFrom(table).select(key).where(end, "<=", now).limit(limit))
        : db.deleteFrom(table).where(end, "<=", now).limit(limit);
      deleted += num((await expired.executeTakeFirst()).numDeletedRows);
    }
    return deleted;
  }

  const users: UserStore = {
    async create(user) {
      return unlessDuplicate(() =>
        db
          .insertInto(t.users)
          .values({
            id: user.id,
            username: user.username,
            username_key: user.usernameKey,
            password_hash: user.passwordHash,
            roles: JSON.stringify(user.roles),
            disabled: user.disabled,
            token_version: user.tokenVersion,
            source: user.source,
            created_at: user.createdAt,
            updated_at: user.updatedAt,
          })
          .execute(),
      );
    },
    async findById(id) {
      const row = await db.selectFrom(t.users).selectAll().where("id", "=", id).executeTakeFirst();
      return row ? toUser(row as UserRow) : null;
    },
    async findByUsernameKey(usernameKey) {
      const row = await db.selectFrom(t.users).selectAll().where("username_key", "=", usernameKey).executeTakeFirst();
      return row ? toUser(row as UserRow) : null;
    },
    async update(id, patch, now) {
      const set: Record<string, unknown> = { updated_at: now };
      const columns: Record<keyof UserPatch, string> = {
        username: "username",
        usernameKey: "username_key",
        passwordHash: "password_hash",
        roles: "roles",
        disabled: "disabled",
      };
      for (const [field, column] of Object.entries(columns) as [keyof UserPatch, string][]) {
        const value = patch[field];
        if (value !== undefined) set[column] = field === "roles" ? JSON.stringify(value) : value;
      }
      const updated = await unlessDuplicate(() => db.updateTable(t.users).set(set).where("id", "=", id).execute());
      return updated ? users.findById(id) : null;
    },
    async incrementTokenVersion(id, now) {
      return updateCounting(t.users, "token_version", sql`token_version + 1`, (query) => query.where("id", "=", id), {
        updated_at: now,
      });
    },
    async incrementTokenVersionsBySource(source, now) {
      const result = await db
        .updateTable(t.users)
        .set({ token_version: sql`token_version + 1`, updated_at: now })
        .where("source", "=", source)
        .executeTakeFirst();
      return num(result.numUpdatedRows);
    },
  };

  const totp: TotpStore = {
    async get(userId) {
      const row = await db.selectFrom(t.totp).selectAll().where("user_id", "=", userId).executeTakeFirst();
      return row ? toTotp(row as TotpRow) : null;
    },
    async putPending(record) {
      const values = {
        user_id: record.userId,
        secret_key_id: record.secret.keyId,
        secret_sealed: record.secret.sealed,
        enabled: false,
        last_used_step: record.lastUsedStep,
        created_at: record.createdAt,
      };
      if (postgres) {
        const result = await db
          .insertInto(t.totp)
          .values(values)
          .onConflict((conflict) =>
            conflict
              .column("user_id")
              .doUpdateSet({
                secret_key_id: values.secret_key_id,
                secret_sealed: values.secret_sealed,
                enabled: false,
                last_used_step: values.last_used_step,
                created_at: values.created_at,
              })
              .where(`${t.totp}.enabled`, "=", false),
          )
          .executeTakeFirst();
        return num(result.numInsertedOrUpdatedRows ?? 0) === 1;
      }
      // MySQL: the user's row, locked, orders concurrent writers of one user's factor.
      return db.transaction().execute(async (trx) => {
        await trx.selectFrom(t.users).select("id").where("id", "=", record.userId).forUpdate().execute();
        const current = await trx.selectFrom(t.totp).select("enabled").where("user_id", "=", record.userId).executeTakeFirst();
        if (current && flag(current.enabled)) return false;
        await trx.deleteFrom(t.totp).where("user_id", "=", record.userId).execute();
        await trx.insertInto(t.totp).values(values).execute();
        return true;
      });
    },
    async enable(userId) {
      const result = await db
        .updateTable(t.totp)
        .set({ enabled: true })
        .where("user_id", "=", userId)
        .where("enabled", "=", false)
        .executeTakeFirst();
      return num(result.numUpdatedRows) === 1;
    },
    async remove(userId) {
      const result = await db.deleteFrom(t.totp).where("user_id", "=", userId).executeTakeFirst();
      return num(result.numDeletedRows) > 0;
    },
    async advanceStep(userId, step) {
      const result = await db
        .updateTable(t.totp)
        .set({ last_used_step: step })
        .where("user_id", "=", userId)
        .where("last_used_step", "<", step)
        .executeTakeFirst();
      return num(result.numUpdatedRows) === 1;
    },
  };

  const recoveryCodes: RecoveryCodeStore = {
    async replace(userId, hashes, now) {
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom(t.recoveryCodes).where("user_id", "=", userId).execute();
        if (hashes.length > 0) {
          await trx
            .insertInto(t.recoveryCodes)
            .values([...new Set(hashes)].map((hash) => ({ user_id: userId, hash, created_at: now })))
            .execute();
        }
      });
    },
    async has(userId, hash) {
      const row = await db
        .selectFrom(t.recoveryCodes)
        .select("hash")
        .where("user_id", "=", userId)
        .where("hash", "=", hash)
        .executeTakeFirst();
      return row !== undefined;
    },
    async consume(userId, hash) {
      const result = await db
        .deleteFrom(t.recoveryCodes)
        .where("user_id", "=", userId)
        .where("hash", "=", hash)
        .executeTakeFirst();
      return num(result.numDeletedRows) === 1;
    },
    async count(userId) {
      const row = await db
        .selectFrom(t.recoveryCodes)
        .select((eb) => eb.fn.countAll().as("count"))
        .where("user_id", "=", userId)
        .executeTakeFirst();
      return num(row?.count ?? 0);
    },
    async removeAll(userId) {
      await db.deleteFrom(t.recoveryCodes).where("user_id", "=", userId).execute();
    },
  };

  const findRefreshToken = async (hash: string) => {
    const row = await db.selectFrom(t.refreshTokens).selectAll().where("hash", "=", hash).executeTakeFirst();
    return row ? toRefreshToken(row as RefreshTokenRow) : null;
  };

  const sessions: SessionStore = {
    async createSession(session) {
      await db
        .insertInto(t.sessions)
        .values({
          id: session.id,
          user_id: session.userId,
          token_version: session.tokenVersion,
          amr: JSON.stringify(session.amr),
          created_at: session.createdAt,
          expires_at: session.expiresAt,
          revoked_at: session.revokedAt,
        })
        .execute();
    },
    async findSession(id) {
      const row = await db.selectFrom(t.sessions).selectAll().where("id", "=", id).executeTakeFirst();
      return row ? toSession(row as SessionRow) : null;
    },
    async revokeSession(id, now) {
      const result = await db
        .updateTable(t.sessions)
        .set({ revoked_at: now })
        .where("id", "=", id)
        .where("revoked_at", "is", null)
        .executeTakeFirst();
      return num(result.numUpdatedRows) === 1;
    },
    async setTokenVersion(id, tokenVersion) {
      const result = await db
        .updateTable(t.sessions)
        .set({ token_version: tokenVersion })
        .where("id", "=", id)
        .where("revoked_at", "is", null)
        .executeTakeFirst();
      if (num(result.numUpdatedRows) === 1) return true;
      // MySQL counts only changed rows: a session already at this version matched too.
      const session = await sessions.findSession(id);
      return session !== null && session.revokedAt === null && session.tokenVersion === tokenVersion;
    },
    async revokeUserSessions(userId, now) {
      const result = await db
        .updateTable(t.sessions)
        .set({ revoked_at: now })
        .where("user_id", "=", userId)
        .where("revoked_at", "is", null)
        .executeTakeFirst();
      return num(result.numUpdatedRows);
    },
    async insertRefreshToken(token) {
      await db
        .insertInto(t.refreshTokens)
        .values({
          hash: token.hash,
          session_id: token.sessionId,
          user_id: token.userId,
          created_at: token.createdAt,
          expires_at: token.expiresAt,
          spent_at: token.spentAt,
        })
        .execute();
    },
    findRefreshToken,
    async spendRefreshToken(hash, now) {
      const spend = db.updateTable(t.refreshTokens).set({ spent_at: now }).where("hash", "=", hash).where("spent_at", "is", null);
      if (postgres) {
        const row = await spend.returningAll().executeTakeFirst();
        if (row) return { outcome: "spent", token: toRefreshToken(row as RefreshTokenRow) };
      } else if (num((await spend.executeTakeFirst()).numUpdatedRows) === 1) {
        return { outcome: "spent", token: (await findRefreshToken(hash)) as RefreshTokenRecord };
      }
      const token = await findRefreshToken(hash);
      return token ? { outcome: "already_spent", token } : { outcome: "unknown" };
    },
  };

  const findChallenge = async (id: string, kind: ChallengeKind, now: number) => {
    const row = await db
      .selectFrom(t.challenges)
      .selectAll()
      .where("id", "=", id)
      .where("kind", "=", kind)
      .where("expires_at", ">", now)
      .executeTakeFirst();
    return row ? toChallenge(row as ChallengeRow) : null;
  };

  const challenges: ChallengeStore = {
    async put(challenge) {
      const values = {
        id: challenge.id,
        kind: challenge.kind,
        user_id: challenge.userId,
        data: JSON.stringify(challenge.data),
        attempts: challenge.attempts,
        created_at: challenge.createdAt,
        expires_at: challenge.expiresAt,
      };
      const { id: _id, ...changes } = values;
      await db
        .insertInto(t.challenges)
        .values(values)
        .$call((query) =>
          postgres
            ? query.onConflict((conflict) => conflict.column("id").doUpdateSet(changes))
            : query.onDuplicateKeyUpdate(changes),
        )
        .execute();
    },
    find: findChallenge,
    async consume(id, kind, now) {
      const live = db.deleteFrom(t.challenges).where("id", "=", id).where("kind", "=", kind).where("expires_at", ">", now);
      if (postgres) {
        const row = await live.returningAll().executeTakeFirst();
        return row ? toChallenge(row as ChallengeRow) : null;
      }
      // MySQL: the delete decides who wins; the winner returns what it read just before.
      const found = await findChallenge(id, kind, now);
      if (!found) return null;
      return num((await live.executeTakeFirst()).numDeletedRows) === 1 ? found : null;
    },
    async takeAttempt(id, kind, limit, now) {
      const attempts = await updateCounting(t.challenges, "attempts", sql`attempts + 1`, (query) =>
        query.where("id", "=", id).where("kind", "=", kind).where("expires_at", ">", now).where("attempts", "<", limit),
      );
      if (attempts === null) return null;
      const challenge = await db.selectFrom(t.challenges).selectAll().where("id", "=", id).executeTakeFirst();
      return challenge ? { ...toChallenge(challenge as ChallengeRow), attempts } : null;
    },
    deleteExpired: deleteExpiredRows,
  };

  const readCounter = async (key: string) =>
    db.selectFrom(t.counters).select(["count", "reset_at"]).where("counter_key", "=", key).executeTakeFirst();

  const counters: CounterStore = {
    async hit(key, limit, windowMs, now) {
      for (let round = 0; round < 3; round += 1) {
        const counted = await updateCounting(t.counters, "count", sql`count + 1`, (query) =>
          query.where("counter_key", "=", key).where("reset_at", ">", now).where("count", "<", limit),
        );
        if (counted !== null) return { count: counted, allowed: true, resetAt: num((await readCounter(key))?.reset_at ?? 0) };
        const resetAt = now + windowMs;
        if (limit > 0) {
          const renewed = await updateCounting(
            t.counters,
            "count",
            sql`1`,
            (query) => query.where("counter_key", "=", key).where("reset_at", "<=", now),
            { reset_at: resetAt },
          );
          if (renewed !== null) return { count: 1, allowed: true, resetAt };
          const created = await unlessDuplicate(() =>
            db.insertInto(t.counters).values({ counter_key: key, count: 1, reset_at: resetAt }).execute(),
          );
          if (created) return { count: 1, allowed: true, resetAt };
        }
        const current = await readCounter(key);
        if (current && num(current.reset_at) > now && num(current.count) >= limit) {
          return { count: num(current.count), allowed: false, resetAt: num(current.reset_at) };
        }
      }
      const current = await readCounter(key);
      return { count: num(current?.count ?? 0), allowed: false, resetAt: num(current?.reset_at ?? now + windowMs) };
    },
    async peek(key, now) {
      const current = await readCounter(key);
      return current && num(current.reset_at) > now ? num(current.count) : 0;
    },
    async reset(key) {
      await db.deleteFrom(t.counters).where("counter_key", "=", key).execute();
    },
  };

  const passkeys: PasskeyStore = {
    async create(passkey) {
      return unlessDuplicate(() =>
        db
          .insertInto(t.passkeys)
          .values({
            id: passkey.id,
            user_id: passkey.userId,
            public_key: passkey.publicKey,
            counter: passkey.counter,
            transports: JSON.stringify(passkey.transports),
            label: passkey.label,
            backup_eligible: passkey.backupEligible,
            backup_state: passkey.backupState,
            created_at: passkey.createdAt,
            last_used_at: passkey.lastUsedAt,
          })
          .execute(),
      );
    },
    async findById(id) {
      const row = await db.selectFrom(t.passkeys).selectAll().where("id", "=", id).executeTakeFirst();
      return row ? toPasskey(row as PasskeyRow) : null;
    },
    async listByUser(userId) {
      const rows = await db.selectFrom(t.passkeys).selectAll().where("user_id", "=", userId).orderBy("created_at").execute();
      return rows.map((row) => toPasskey(row as PasskeyRow));
    },
    async updateCounter(id, expectedCounter, counter, backupState, now) {
      const result = await db
        .updateTable(t.passkeys)
        .set({ counter, backup_state: backupState, last_used_at: now })
        .where("id", "=", id)
        .where("counter", "=", expectedCounter)
        .executeTakeFirst();
      if (num(result.numUpdatedRows) === 1) return true;
      if (counter !== expectedCounter) return false;
      // MySQL counts only changed rows: a counter that stays (both 0) with nothing else new matched too.
      const passkey = await passkeys.findById(id);
      return passkey !== null && passkey.counter === counter && passkey.backupState === backupState && passkey.lastUsedAt === now;
    },
    async rename(userId, id, label) {
      const result = await db
        .updateTable(t.passkeys)
        .set({ label })
        .where("id", "=", id)
        .where("user_id", "=", userId)
        .executeTakeFirst();
      if (num(result.numUpdatedRows) === 1) return true;
      const passkey = await passkeys.findById(id);
      return passkey !== null && passkey.userId === userId && passkey.label === label;
    },
    async delete(userId, id) {
      const result = await db.deleteFrom(t.passkeys).where("id", "=", id).where("user_id", "=", userId).executeTakeFirst();
      return num(result.numDeletedRows) === 1;
    },
    async deleteUnlessLast(userId, id) {
      // The user's passkeys, locked: concurrent deletes of the last two take turns.
      return db.transaction().execute(async (trx) => {
        const owned = await trx.selectFrom(t.passkeys).select("id").where("user_id", "=", userId).forUpdate().execute();
        if (!owned.some((row) => row.id === id)) return "not_found";
        if (owned.length < 2) return "last";
        await trx.deleteFrom(t.passkeys).where("id", "=", id).where("user_id", "=", userId).execute();
        return "deleted";
      });
    },
  };

  const identities: IdentityStore = {
    async link(identity) {
      return unlessDuplicate(() =>
        db
          .insertInto(t.identities)
          .values({
            provider: identity.provider,
            subject: identity.subject,
            user_id: identity.userId,
            email: identity.email,
            email_verified: identity.emailVerified,
            created_at: identity.createdAt,
            last_used_at: identity.lastUsedAt,
          })
          .execute(),
      );
    },
    async find(provider, subject) {
      const row = await db
        .selectFrom(t.identities)
        .selectAll()
        .where("provider", "=", provider)
        .where("subject", "=", subject)
        .executeTakeFirst();
      return row ? toIdentity(row as IdentityRow) : null;
    },
    async listByUser(userId) {
      const rows = await db.selectFrom(t.identities).selectAll().where("user_id", "=", userId).orderBy("created_at").execute();
      return rows.map((row) => toIdentity(row as IdentityRow));
    },
    async findByVerifiedEmail(email) {
      const rows = await db
        .selectFrom(t.identities)
        .selectAll()
        .where("email", "=", email)
        .where("email_verified", "=", true)
        .execute();
      return rows.map((row) => toIdentity(row as IdentityRow));
    },
    async unlink(userId, provider, subject) {
      const result = await db
        .deleteFrom(t.identities)
        .where("user_id", "=", userId)
        .where("provider", "=", provider)
        .where("subject", "=", subject)
        .executeTakeFirst();
      return num(result.numDeletedRows) === 1;
    },
  };

  const settings: SettingsStore = {
    async get(key) {
      const row = await db.selectFrom(t.settings).select("value").where("setting_key", "=", key).executeTakeFirst();
      return row ? JSON.parse(row.value as string) : undefined;
    },
    async set(key, value, now) {
      const values = { setting_key: key, value: JSON.stringify(value), updated_at: now };
      await db
        .insertInto(t.settings)
        .values(values)
        .$call((query) =>
          postgres
            ? query.onConflict((conflict) => conflict.column("setting_key").doUpdateSet({ value: values.value, updated_at: now }))
            : query.onDuplicateKeyUpdate({ value: values.value, updated_at: now }),
        )
        .execute();
    },
  };

  return { users, totp, recoveryCodes, sessions, challenges, counters, passkeys, identities, settings };
}
