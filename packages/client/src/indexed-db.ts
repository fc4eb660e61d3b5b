/** An IndexedDB request, as far as {@link indexedDbRecord} reads it. */
interface IdbRequest<T> {
  readonly result: T;
  readonly error: unknown;
  onsuccess: (() => void) | null;
  onerror: (() => void) | null;
}

interface IdbObjectStore {
  get(key: string): IdbRequest<unknown>;
  put(value: unknown, key: string): IdbRequest<unknown>;
}

interface IdbTransaction {
  readonly error: unknown;
  objectStore(name: string): IdbObjectStore;
  oncomplete: (() => void) | null;
  onabort: (() => void) | null;
}

interface IdbDatabase {
  createObjectStore(name: string): unknown;
  transaction(storeName: string, mode: "readwrite"): IdbTransaction;
  close(): void;
  onversionchange: (() => void) | null;
}

/** The part of IndexedDB (`indexedDB`, an `IDBFactory`) a token store uses. */
export interface IndexedDbFactory {
  open(name: string): IdbRequest<IdbDatabase> & { onupgradeneeded: (() => void) | null };
}

/** One value kept in IndexedDB. */
export interface IndexedDbRecord {
  /**
   * The value as the last committed {@link IndexedDbRecord.write} of any page left it; `undefined`
   * when none was ever written, or where the database cannot be opened.
   */
  read(): Promise<unknown>;
  /**
   * Keeps `value`, resolving once its transaction has committed: every transaction begun after that,
   * in any page of the origin, reads it. Does nothing where the database cannot be opened.
   *
   * @throws the transaction's error when the database opened but the write failed.
   */
  write(value: unknown): Promise<void>;
}

const objectStoreName = "tokens";

/**
 * A value kept in the IndexedDB database `databaseName` (one object store, one key). Unlike
 * `localStorage`, which Chromium copies into each tab and updates there a little later,
 * IndexedDB's transactions are ordered across every page of the origin: a read begun after
 * another page's write has committed sees that write.
 *
 * The database is opened at the first use and kept open; where it cannot be opened (storage
 * disabled, a private window that refuses IndexedDB), the record reads as never written and
 * writes nothing, every time. After a failed transaction the next call opens the database again
 * (the browser may have closed the connection: site data cleared); another page deleting or
 * upgrading the database closes the connection, and the next call opens it again.
 *
 * @example
 * ```ts
 * const record = indexedDbRecord(indexedDB, "portcullis.tokens");
 * await record.write(tokens);
 * await record.read(); // tokens, in this page or any other of the origin
 * ```
 */
export function indexedDbRecord(factory: IndexedDbFactory, databaseName: string): IndexedDbRecord {
  let opening: Promise<IdbDatabase | null> | undefined;
  const open = () =>
    (opening ??= new Promise((resolve) => {
      try {
        const request = factory.open(databaseName);
        request.onupgradeneeded = () => request.result.createObjectStore(objectStoreName);
        request.onsuccess = () => {
          const database = request.result;
          database.onversionchange = () => {
            database.close();
            opening = undefined;
          };
          resolve(database);
        };
        request.onerror = () => resolve(null);
      } catch {
        resolve(null);
      }
    }));

  /** Runs `use` in a transaction of its own (read-write, reads too: every one waits for those begun before it). */
  async function run(use: (store: IdbObjectStore) => IdbRequest<unknown>): Promise<unknown> {
    const database = await open();
    if (!database) return undefined;
    try {
      return await new Promise((resolve, reject) => {
        const transaction = database.transaction(objectStoreName, "readwrite");
        const request = use(transaction.objectStore(objectStoreName));
        transaction.oncomplete = () => resolve(request.result);
        transaction.onabort = () => reject(transaction.error);
      });
    } catch (error) {
      opening = undefined;
      throw error;
    }
  }

  return {
    read: () => run((store) => store.get(objectStoreName)),
    async write(value) {
      await run((store) => store.put(value, objectStoreName));
    },
  };
}
