import { emailKeyOf, normalizeEmail, normalizeUsername, parseImportedPasswordHash } from "@portcullis/core";
import { sql } from "kysely";
import type { KyselyStorage } from "./kysely-storage.js";
import { assertSchemaCurrent } from "./migrations.js";
import { unlessDuplicate } from "./stores/context.js";
import { type UsersTable, checkUsersTable, userIdFromRow } from "./users-table.js";

/** Options of {@link adoptExistingUsers}. */
export interface AdoptOptions {
  /** How many of your rows are read and adopted at a time. Default 500. */
  batchSize?: number;
  /**
   * Whether the addresses in your email column are proven to be their users' (your service
   * checked them): each is then held verified, and two rows with one address adopt once (EV-1).
   * Default false: unverified until the user proves it.
   */
  emailsVerified?: boolean;
  /** The roles each adopted user gets. Default none. */
  roles?: string[];
  /** Called for each row left without an account, with why (no usable name, the name taken). */
  onSkipped?(skip: { id: string; reason: string }): void;
  /** Called for each row adopted without a password: its hash column is empty or holds a hash Portcullis cannot read. */
  onWithoutPassword?(row: { id: string; reason: string }): void;
  /** The time written as the accounts' creation, in epoch ms. Default now. */
  now?: number;
}

/** What {@link adoptExistingUsers} did. */
export interface AdoptionSummary {
  /** Rows of yours it found without an account. */
  read: number;
  /** Accounts it made. */
  adopted: number;
  /** Of those, accounts made without a password (see {@link AdoptOptions.onWithoutPassword}). */
  withoutPassword: number;
  /** Rows left without an account; each was given to {@link AdoptOptions.onSkipped}. */
  skipped: number;
}

/** A row of yours as adoption reads it: only the columns the `users` option names. */
interface HostRow {
  id: unknown;
  username?: string | null;
  email?: string | null;
  password_hash?: string | null;
}

/**
 * Adopts the rows of your users table that Portcullis has no account for (case 2 of
 * docs/existing-users-table.md): for each, an `accounts` row keyed by your id, with the username
 * from your username column (or, without one, the email), and the hash of your `passwordHash`
 * column imported as an `imported:` hash, as the import command stores it (bcrypt, scrypt, PBKDF2,
 * argon2: see docs/importing.md), which sign-in verifies and re-hashes to argon2id at the first
 * success (PW-1). The re-hash is written to Portcullis's table; your row, hash column included,
 * is only read, never written. Rows are read in id order, `batchSize` at a time; a row whose
 * username is not one Portcullis accepts, or is another account's, is skipped and reported.
 * Running it again adopts only rows added since (and retries the skipped ones): it is idempotent.
 *
 * @throws {TypeError} when the storage has no `users` option, or it names neither a username nor
 * an email column. @throws {Error} when the schema is not current, or your table cannot take
 * Portcullis's inserts (see `migrate`).
 *
 * @example
 * ```ts
 * const storage = await connectStorage({ url, prefix: "auth_", users: { table: "users", id: { type: "integer" }, columns: { email: "email", passwordHash: "password_digest" } } });
 * await migrate(storage);
 * const { adopted } = await adoptExistingUsers(storage);
 * ```
 */
export async function adoptExistingUsers(storage: KyselyStorage, options: AdoptOptions = {}): Promise<AdoptionSummary> {
  const host = storage.usersTable;
  if (host === null) throw new TypeError("@portcullis/kysely: adoptExistingUsers needs a storage made with the users option");
  if (host.username === null && host.email === null) {
    throw new TypeError("@portcullis/kysely: adopting users needs users.columns.username or users.columns.email, to name them");
  }
  const batchSize = options.batchSize ?? 500;
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new TypeError("@portcullis/kysely: batchSize must be a positive integer");
  await assertSchemaCurrent(storage.db, storage.dialect, storage.tables);
  await checkUsersTable(storage.db, storage.dialect, host);
  const now = options.now ?? Date.now();
  const roles = JSON.stringify(options.roles ?? []);
  const summary: AdoptionSummary = { read: 0, adopted: 0, withoutPassword: 0, skipped: 0 };
  let after: string | null = null;
  for (;;) {
    const rows = await unadopted(storage, host, after, batchSize);
    for (const row of rows) {
      const id = userIdFromRow(row.id);
      summary.read += 1;
      const account = accountOf(host, row, options.emailsVerified === true);
      if ("skipped" in account) {
        summary.skipped += 1;
        options.onSkipped?.({ id, reason: account.skipped });
        continue;
      }
      const values = {
        id,
        ...account.columns,
        roles,
        disabled: false,
        token_version: 0,
        source: "local",
        created_at: now,
        updated_at: now,
      };
      if (!(await unlessDuplicate(() => storage.db.insertInto(storage.tables.users).values(values).execute()))) {
        summary.skipped += 1;
        options.onSkipped?.({
          id,
          reason: "another account holds its username or verified address, or it was adopted meanwhile",
        });
        continue;
      }
      summary.adopted += 1;
      if (account.withoutPassword !== null) {
        summary.withoutPassword += 1;
        options.onWithoutPassword?.({ id, reason: account.withoutPassword });
      }
    }
    if (rows.length < batchSize) return summary;
    after = userIdFromRow(rows[rows.length - 1]?.id);
  }
}

/** The next `limit` rows of yours, after `after` in id order, that have no account. */
async function unadopted(storage: KyselyStorage, host: UsersTable, after: string | null, limit: number): Promise<HostRow[]> {
  const column = (name: string | null, as: string) => (name === null ? [] : [sql`${sql.ref(`h.${name}`)} as ${sql.ref(as)}`]);
  const selected = [
    sql`${sql.ref(`h.${host.idColumn}`)} as id`,
    ...column(host.username, "username"),
    ...column(host.email, "email"),
    ...column(host.passwordHash, "password_hash"),
  ];
  const { rows } = await sql<HostRow>`select ${sql.join(selected)} from ${sql.table(host.qualified)} h
    where not exists (select 1 from ${sql.table(storage.tables.users)} a where a.id = ${sql.ref(`h.${host.idColumn}`)})
    ${after === null ? sql`` : sql`and ${sql.ref(`h.${host.idColumn}`)} > ${after}`}
    order by ${sql.ref(`h.${host.idColumn}`)} limit ${limit}`.execute(storage.db);
  return rows;
}

/** The columns of the account a row of yours becomes, or why it cannot become one. */
function accountOf(
  host: UsersTable,
  row: HostRow,
  emailsVerified: boolean,
): { columns: Record<string, unknown>; withoutPassword: string | null } | { skipped: string } {
  const name = host.username !== null ? row.username : row.email;
  if (typeof name !== "string" || name.trim() === "") {
    return { skipped: `its ${host.username !== null ? "username" : "email"} column is empty` };
  }
  let username: { username: string; usernameKey: string };
  try {
    username = normalizeUsername(name);
  } catch (error) {
    return {
      skipped: `its ${host.username !== null ? "username" : "email"} is not a username Portcullis accepts: ${(error as Error).message}`,
    };
  }
  const columns: Record<string, unknown> = { username_key: username.usernameKey };
  if (host.username === null) columns.username = username.username;
  const verifiedAddress = emailsVerified && typeof row.email === "string" ? verifiable(row.email) : null;
  columns.email_verified = verifiedAddress !== null;
  columns.verified_email_key = verifiedAddress === null ? null : emailKeyOf(verifiedAddress);
  let withoutPassword: string | null = null;
  columns.password_hash = null;
  if (host.passwordHash !== null) {
    const hash = row.password_hash;
    if (typeof hash !== "string" || hash === "") {
      withoutPassword = "its password hash column is empty";
    } else {
      const parsed = parseImportedPasswordHash(hash);
      if (parsed.ok) columns.password_hash = parsed.stored;
      else withoutPassword = `its password hash cannot be read: ${parsed.reason}`;
    }
  } else {
    withoutPassword = "the users option names no password hash column";
  }
  return { columns, withoutPassword };
}

/** An address of your column as Portcullis reads it, or null when it is not one. */
function verifiable(email: string): string | null {
  try {
    return normalizeEmail(email) === email ? email : null;
  } catch {
    return null;
  }
}
