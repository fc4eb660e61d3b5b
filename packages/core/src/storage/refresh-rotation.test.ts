import { describe, expect, it } from "vitest";
import { stepwiseMemoryStorage } from "../flows/fixtures.test-support.js";
import { refreshRotationTests } from "../testing/conformance/refresh-rotation.js";

// memory.test.ts runs the whole conformance kit on memoryStorage's own rotateRefreshToken; these
// run its rotation tests on the single operations core uses for a store without one.
describe("rotateRefreshToken on a store without it (its single operations in turn)", () => {
  refreshRotationTests({ test: { describe, it, expect }, makeStorage: stepwiseMemoryStorage });
});
