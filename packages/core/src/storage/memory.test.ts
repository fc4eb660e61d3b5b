import { describe, expect, it } from "vitest";
import { runStorageConformance } from "../testing/index.js";
import { memoryStorage } from "./memory.js";

runStorageConformance({ name: "memory", makeStorage: memoryStorage, test: { describe, it, expect } });
