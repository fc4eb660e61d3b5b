#!/usr/bin/env node
// Prints the closing totals line of a CI run, "N passed, N failed, N skipped", from vitest's JSON
// report (written by `pnpm test --reporter=json --outputFile.json=FILE`).
// Usage: node scripts/test-totals.mjs [report.json]   (default .tmp/vitest.json)
// Exits 2 when the report is missing or unreadable; otherwise 0 (the caller decides pass/fail).
import { readFileSync } from "node:fs";

const file = process.argv[2] ?? ".tmp/vitest.json";

let report;
try {
  report = JSON.parse(readFileSync(file, "utf8"));
} catch (error) {
  console.error(`test-totals: cannot read the vitest JSON report at ${file}: ${error instanceof Error ? error.message : error}`);
  process.exit(2);
}

const count = (key) => (Number.isFinite(report[key]) ? report[key] : 0);
const passed = count("numPassedTests");
const failed = count("numFailedTests");
const skipped = count("numPendingTests") + count("numTodoTests");

// A test file can fail outside its tests: it fails to load (a syntax error, a throwing import), or a
// hook such as afterAll throws after every test passed. No test count shows that, so each such file
// is named and counted as one failure: a "0 failed" line always means a clean run.
const failedOutsideTests = (report.testResults ?? []).filter(
  (result) => result.status === "failed" && !(result.assertionResults ?? []).some((test) => test.status === "failed"),
);
for (const result of failedOutsideTests) {
  console.log(`test file failed outside its tests (loading or a hook): ${result.name}`);
}

console.log(`${passed} passed, ${failed + failedOutsideTests.length} failed, ${skipped} skipped`);
