#!/usr/bin/env node
// The npm registry reachable here serves only the linux-x64 builds of the packages that ship a native library
// per platform (@duckdb/node-bindings-<platform>; chdb's @chdb/lib-<platform>, scripts/chdb/), so `npm install`
// leaves the other platforms' optional packages out of package-lock.json, and `npm ci` then refuses the lock as
// out of sync. This records them (version, os, cpu, libc; no download address) so `npm ci` accepts the lock and
// skips them as platform-incompatible. Run it after any `npm install` that rewrites a lock:
//   node scripts/lock-optional-platforms.mjs [LOCK]   (default: the project's package-lock.json)
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

const lockPath = process.argv[2] ? resolve(process.argv[2]) : new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(lockPath, 'utf8'));
/** The packages whose optional dependencies are one per platform: the name before the platform's suffix. */
const PER_PLATFORM = ['@duckdb/node-bindings', '@chdb/lib'];
/** `darwin-arm64`, `linux-x64` (glibc), `linux-x64-gnu`, `linux-arm64-musl`, `win32-x64`… */
const PLATFORM = /^(darwin|linux|win32)-(x64|arm64)(?:-(gnu|musl))?$/;

let added = 0;
for (const entry of Object.values(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const prefix = PER_PLATFORM.find((p) => name.startsWith(`${p}-`));
    const m = prefix && PLATFORM.exec(name.slice(prefix.length + 1));
    const key = `node_modules/${name}`;
    if (!m || lock.packages[key]) continue;
    const [, os, cpu, libc] = m;
    lock.packages[key] = {
      version,
      cpu: [cpu],
      ...(os === 'linux' ? { libc: [libc === 'musl' ? 'musl' : 'glibc'] } : {}),
      license: entry.license,
      optional: true,
      os: [os],
    };
    added += 1;
  }
}
const sorted = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)),
);
lock.packages = sorted;
writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`lock-optional-platforms: ${added} platform entries added`);
