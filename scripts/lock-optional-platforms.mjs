#!/usr/bin/env node
// The npm registry reachable here serves only the linux-x64 builds of @duckdb/node-bindings, so
// `npm install` leaves the other platforms' optional packages out of package-lock.json, and `npm ci`
// then refuses the lock as out of sync. This records them (version, os, cpu, libc; no download
// address) so `npm ci` accepts the lock and skips them as platform-incompatible. Run it after any
// `npm install` that rewrites the lock: node scripts/lock-optional-platforms.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const lockPath = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(lockPath, 'utf8'));
const bindings = lock.packages['node_modules/@duckdb/node-bindings'];
const platforms = {
  'darwin-arm64': { os: ['darwin'], cpu: ['arm64'] },
  'darwin-x64': { os: ['darwin'], cpu: ['x64'] },
  'linux-arm64': { os: ['linux'], cpu: ['arm64'], libc: ['glibc'] },
  'linux-arm64-musl': { os: ['linux'], cpu: ['arm64'], libc: ['musl'] },
  'linux-x64': { os: ['linux'], cpu: ['x64'], libc: ['glibc'] },
  'linux-x64-musl': { os: ['linux'], cpu: ['x64'], libc: ['musl'] },
  'win32-arm64': { os: ['win32'], cpu: ['arm64'] },
  'win32-x64': { os: ['win32'], cpu: ['x64'] },
};
let added = 0;
for (const [name, spec] of Object.entries(platforms)) {
  const key = `node_modules/@duckdb/node-bindings-${name}`;
  const wanted = bindings?.optionalDependencies?.[`@duckdb/node-bindings-${name}`];
  if (!wanted || lock.packages[key]) continue;
  lock.packages[key] = {
    version: wanted,
    cpu: spec.cpu,
    ...(spec.libc ? { libc: spec.libc } : {}),
    license: 'MIT',
    optional: true,
    os: spec.os,
  };
  added += 1;
}
const sorted = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)),
);
lock.packages = sorted;
writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`lock-optional-platforms: ${added} platform entries added`);
