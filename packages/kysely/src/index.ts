export { type ConnectStorageOptions, connectStorage } from "./connect.js";
export { type KyselyStorage, type KyselyStorageOptions, kyselyStorage } from "./kysely-storage.js";
export { checkSchema, latestSchemaVersion, migrate } from "./migrate.js";
export { type PgliteStorageOptions, pgliteStorage } from "./pglite.js";
export type { SqlDialect, Tables } from "./schema.js";
export { isConnectionFailure } from "./unavailable.js";
