// Runs the public storage conformance suite against a storage adapter. Put a file like this
// beside your own adapter; here it checks `memoryStorage()` wrapped as "my storage".
import { type Storage, memoryStorage } from "@portcullis/core";
import { runStorageConformance } from "@portcullis/testing";
import { describe, expect, it } from "vitest";

/** Stands in for your adapter, e.g. one over your own database. */
function myStorage(): Storage {
  return memoryStorage();
}

runStorageConformance({
  name: "my storage",
  makeStorage: () => myStorage(),
  test: { describe, it, expect },
});
