// A PostgreSQL schema or a MariaDB database of one test file's own, named by a URL that any
// process can connect with.
import { connectStorage } from "@portcullis/kysely";
import { mariadbUrl, postgresUrl, scratchName } from "../../packages/kysely/src/databases.test-support.js";

/** A fresh schema on the test PostgreSQL server, from {@link createScratchSchema}. */
export interface ScratchSchema {
  name: string;
  /** {@link postgresUrl} whose connections have the schema as their `search_path`. */
  url: string;
  /** The same URL with another port on 127.0.0.1: what a client reaches through a forwarder. */
  urlVia(port: number): string;
  /** Drops the schema and everything in it. */
  drop(): Promise<void>;
}

/** The URL of `schema` on the server of `url`, through `port` on 127.0.0.1 when given. */
function schemaUrl(url: string, schema: string, port?: number): string {
  const parsed = new URL(url);
  parsed.searchParams.set("options", `-c search_path=${schema}`);
  if (port !== undefined) {
    parsed.hostname = "127.0.0.1";
    parsed.port = String(port);
  }
  return parsed.toString();
}

/** Creates a schema named by `scratchName()`, so runs never meet, on the server of {@link postgresUrl}. */
export async function createScratchSchema(): Promise<ScratchSchema> {
  const name = scratchName();
  // A storage is only a way to reach the server here: its Kysely instance creates and drops the schema.
  const admin = await connectStorage({ url: postgresUrl, maxConnections: 1 });
  await admin.db.schema.createSchema(name).execute();
  return {
    name,
    url: schemaUrl(postgresUrl, name),
    urlVia: (port) => schemaUrl(postgresUrl, name, port),
    async drop() {
      try {
        await admin.db.schema.dropSchema(name).ifExists().cascade().execute();
      } finally {
        await admin.close();
      }
    },
  };
}

/** A fresh database on the test MariaDB server, from {@link createScratchDatabase}. */
export interface ScratchDatabase {
  name: string;
  /** {@link mariadbUrl} naming the database. */
  url: string;
  /** The same URL with another port on 127.0.0.1: what a client reaches through a forwarder. */
  urlVia(port: number): string;
  /** Drops the database and everything in it. */
  drop(): Promise<void>;
}

/** The URL of `database` on the server of `url`, through `port` on 127.0.0.1 when given. */
function databaseUrl(url: string, database: string, port?: number): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  if (port !== undefined) {
    parsed.hostname = "127.0.0.1";
    parsed.port = String(port);
  }
  return parsed.toString();
}

/** Creates a database named by `scratchName()` on the server of {@link mariadbUrl}. */
export async function createScratchDatabase(): Promise<ScratchDatabase> {
  const name = scratchName();
  const admin = await connectStorage({ url: mariadbUrl, maxConnections: 1 });
  // On MySQL and MariaDB a schema is a database: CREATE SCHEMA is CREATE DATABASE.
  await admin.db.schema.createSchema(name).execute();
  return {
    name,
    url: databaseUrl(mariadbUrl, name),
    urlVia: (port) => databaseUrl(mariadbUrl, name, port),
    async drop() {
      try {
        await admin.db.schema.dropSchema(name).ifExists().execute();
      } finally {
        await admin.close();
      }
    },
  };
}
