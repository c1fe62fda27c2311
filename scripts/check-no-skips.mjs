#!/usr/bin/env node
// CI's check that every test ran: reads vitest's JSON report (`npm test -- --reporter=default --reporter=json
// --outputFile.json=FILE`, as .ci/run writes it) and fails on any test skipped or left to do, one line each.
// A test that skips itself where the machine lacks something (the PID-namespace test of
// test/store/lease.test.ts where `unshare --pid` is refused) would otherwise pass CI as "1 skipped".
// Usage: node scripts/check-no-skips.mjs REPORT   Exit 0 every test ran; 1 some did not; 2 no readable report.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const file = process.argv[2];
let report;
try {
  report = JSON.parse(readFileSync(file ?? '', 'utf8'));
} catch (err) {
  process.stderr.write(
    `check-no-skips: cannot read vitest's JSON report ${file ?? '(none given)'} (${err.message}): run npm test -- --reporter=json --outputFile.json=FILE first\n`,
  );
  process.exit(2);
}
const notRun = (report.testResults ?? []).flatMap((suite) =>
  (suite.assertionResults ?? [])
    .filter((t) => t.status !== 'passed' && t.status !== 'failed')
    .map((t) => `${relative(process.cwd(), suite.name)}: ${t.status}: ${t.fullName}`),
);
for (const line of notRun) process.stdout.write(`check-no-skips: ${line}\n`);
if (notRun.length) {
  process.stdout.write(
    `check-no-skips: ${notRun.length} of ${report.numTotalTests} tests did not run on this machine: CI runs them all (README, what a test runner needs)\n`,
  );
  process.exit(1);
}
process.stdout.write(`check-no-skips: all ${report.numTotalTests} tests ran\n`);
