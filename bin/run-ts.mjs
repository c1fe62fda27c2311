#!/usr/bin/env node
// Runs a TypeScript entry point (benchmarks, the reliability suite) through tsx.
import { register } from 'tsx/esm/api';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

register();
const entry = process.argv[2];
if (!entry) {
  console.error('usage: run-ts.mjs <file.ts> [args]');
  process.exit(2);
}
process.argv.splice(2, 1);
await import(pathToFileURL(resolve(entry)).href);
