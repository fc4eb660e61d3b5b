// The IndexedDB record against fake-indexeddb, a complete implementation of IndexedDB in Node (the
// Chromium tests in test/browser/two-tabs.test.ts use the browser's own). Each test has its own
// factory: an origin of its own, whose pages share one set of databases.
import { IDBFactory } from "fake-indexeddb";
import { describe, expect, it } from "vitest";
import { type IndexedDbFactory, indexedDbRecord } from "./indexed-db.js";

const tokens = { accessToken: "access-1", refreshToken: "refresh-1" };

/** An IndexedDB connection as fake-indexeddb makes it (the repository compiles without the DOM's types). */
type Database = ReturnType<InstanceType<typeof IDBFactory>["open"]>["result"];
type Transaction = ReturnType<Database["transaction"]>;

/** What the origin's database `name` holds, read with IndexedDB directly: object store name → key → value. */
async function databaseContents(
  factory: InstanceType<typeof IDBFactory>,
  name: string,
): Promise<Record<string, Record<string, unknown>>> {
  const database = await new Promise<Database>((resolve, reject) => {
    const request = factory.open(name);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  const contents: Record<string, Record<string, unknown>> = {};
  for (const storeName of Array.from(database.objectStoreNames)) {
    const transaction = database.transaction(storeName, "readonly");
    const [keys, values] = await Promise.all(
      [transaction.objectStore(storeName).getAllKeys(), transaction.objectStore(storeName).getAll()].map(
        (request) =>
          new Promise<unknown[]>((resolve) => {
            request.onsuccess = () => resolve(request.result as unknown[]);
          }),
      ),
    );
    contents[String(storeName)] = Object.fromEntries((keys ?? []).map((key, index) => [String(key), values?.[index]]));
  }
  database.close();
  return contents;
}

/** A promise left unsettled fails its test in two seconds. */
const settles = { timeout: 2_000 };

describe("indexedDbRecord", settles, () => {
  it("reads undefined before any write, then what the last write committed, in this page and every other page of the origin", async () => {
    const origin = new IDBFactory();
    const [tab, otherTab] = [indexedDbRecord(origin, "app.tokens"), indexedDbRecord(origin, "app.tokens")];
    expect(await tab.read()).toBeUndefined();
    await tab.write(tokens);
    expect(await otherTab.read()).toEqual(tokens);
    await otherTab.write(null);
    expect(await tab.read()).toBeNull();
    expect(await indexedDbRecord(origin, "other.tokens").read()).toBeUndefined();
  });

  it("keeps the value in the database named after the record, object store tokens, key tokens: every version of the client reads it there", async () => {
    const origin = new IDBFactory();
    await indexedDbRecord(origin, "app.tokens").write(tokens);
    expect(await databaseContents(origin, "app.tokens")).toEqual({ tokens: { tokens } });
  });

  it("where the database cannot be opened (an error, or open throwing), reads undefined and writes nothing, without an error", async () => {
    const origin = new IDBFactory();
    await new Promise<void>((resolve) => {
      const request = origin.open("app.tokens", 2);
      request.onsuccess = () => {
        request.result.close();
        resolve();
      };
    });
    // A newer version of the database than the record asks for: its open fails with a VersionError.
    const older: IndexedDbFactory = { open: (name) => origin.open(name, 1) as unknown as ReturnType<IndexedDbFactory["open"]> };
    const refused = indexedDbRecord(older, "app.tokens");
    await refused.write(tokens);
    expect(await refused.read()).toBeUndefined();

    const throwing: IndexedDbFactory = {
      open() {
        throw new DOMException("The operation is insecure.", "SecurityError");
      },
    };
    const disabled = indexedDbRecord(throwing, "app.tokens");
    await disabled.write(tokens);
    expect(await disabled.read()).toBeUndefined();
  });

  it("a write that fails rejects with the transaction's error and leaves the value; the next call opens the database again", async () => {
    const origin = new IDBFactory();
    let opened = 0;
    const counting: IndexedDbFactory = {
      open: (name) => {
        opened += 1;
        return origin.open(name) as unknown as ReturnType<IndexedDbFactory["open"]>;
      },
    };
    const record = indexedDbRecord(counting, "app.tokens");
    await record.write(tokens);
    await record.read();
    expect(opened).toBe(1);
    const error = await record.write({ ...tokens, notCloneable: () => undefined }).then(
      () => null,
      (reason: unknown) => reason,
    );
    expect(error).toMatchObject({ name: "DataCloneError" });
    expect(await record.read()).toEqual(tokens);
    expect(opened).toBe(2);
  });

  it("a transaction aborted before it commits rejects (with its error, null for an abort() like this one) and leaves the value", async () => {
    const origin = new IDBFactory();
    const record = indexedDbRecord(origin, "app.tokens");
    await record.write(tokens);
    // Every transaction of this connection is aborted by the time it would commit.
    const aborting: IndexedDbFactory = {
      open(name) {
        const request = origin.open(name);
        request.addEventListener("success", () => {
          const database = request.result;
          const transaction = database.transaction.bind(database);
          database.transaction = ((...args: Parameters<Database["transaction"]>) => {
            const begun: Transaction = transaction(...args);
            queueMicrotask(() => begun.abort());
            return begun;
          }) as Database["transaction"];
        });
        return request as unknown as ReturnType<IndexedDbFactory["open"]>;
      },
    };
    const outcome = await indexedDbRecord(aborting, "app.tokens")
      .write(null)
      .then(
        () => "resolved",
        (reason: unknown) => ["rejected", reason],
      );
    expect(outcome).toEqual(["rejected", null]);
    expect(await record.read()).toEqual(tokens);
  });

  it("lets another page delete the database (its connection closes), and then opens the new one", async () => {
    const origin = new IDBFactory();
    const record = indexedDbRecord(origin, "app.tokens");
    await record.write(tokens);
    await new Promise<void>((resolve, reject) => {
      const request = origin.deleteDatabase("app.tokens");
      request.onsuccess = () => resolve();
      request.onblocked = () => reject(new Error("the record's connection blocked the deletion"));
    });
    expect(await record.read()).toBeUndefined();
    await record.write(tokens);
    expect(await record.read()).toEqual(tokens);
  });
});
