#!/usr/bin/env node
// Prints the closing totals line of a CI run, "N passed, N failed, N skipped", from vitest's JSON
// reports (written by `pnpm test --reporter=json --outputFile.json=FILE`): one report, or several
// (`pnpm test` and `pnpm test:slow`, the two halves of `test:full`), summed.
// Usage: node scripts/test-totals.mjs [report.json ...]   (default .tmp/vitest.json)
// Exits 2 when a report is missing or unreadable; otherwise 0 (the caller decides pass/fail).
import { readFileSync } from "node:fs";

const files = process.argv.length > 2 ? process.argv.slice(2) : [".tmp/vitest.json"];

let passed = 0;
let failed = 0;
let skipped = 0;
let unreadable = 0;

for (const file of files) {
  let report;
  try {
    report = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    console.error(
      `test-totals: cannot read the vitest JSON report at ${file}: ${error instanceof Error ? error.message : error}`,
    );
    unreadable += 1;
    continue;
  }
  const count = (key) => (Number.isFinite(report[key]) ? report[key] : 0);
  passed += count("numPassedTests");
  failed += count("numFailedTests");
  skipped += count("numPendingTests") + count("numTodoTests");

  // A test file can fail outside its tests: it fails to load (a syntax error, a throwing import), or a
  // hook such as afterAll throws after every test passed. No test count shows that, so each such file
  // is named and counted as one failure: a "0 failed" line always means a clean run.
  const failedOutsideTests = (report.testResults ?? []).filter(
    (result) => result.status === "failed" && !(result.assertionResults ?? []).some((test) => test.status === "failed"),
  );
  for (const result of failedOutsideTests) {
    console.log(`test file failed outside its tests (loading or a hook): ${result.name}`);
  }
  failed += failedOutsideTests.length;
}

if (unreadable === files.length) process.exit(2);
console.log(`${passed} passed, ${failed + unreadable} failed, ${skipped} skipped`);
if (unreadable > 0) process.exit(2);
