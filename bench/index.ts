/**
 * `npm run bench`: every benchmark, each in its own process (so each peak RSS is its own), figures
 * printed as they come. Pass names to run some: `npm run bench -- client extract`.
 *   client   throughput at a 600/min sliding-window limit, with and without 2% 5xx (about 70 s)
 *   extract  call efficiency of a full refresh and of an incremental day (medium scale, a few minutes)
 *   lake     landing 1,000,000 orders: rows/s and peak RSS
 *   land     the real extract landing ~1,000,000 orders from the large sandbox, each its own process (a few minutes)
 *   build    the marts over 10,000,000 orders and 1,000,000 users: build time, ratio to a scan, RSS
 *   forget   forgetting 10 users in the build bench's lake (10,000,000 orders): seconds, rows read per second
 *   lake-read  today's layout against the compacted one (1,000,000 orders, a year, 4 groups): files, bytes,
 *            a scan, two BI queries, the build, and the compaction itself
 *   scale    three workers sharing one limit through Redis (needs redis-server)
 *   store    a day's incremental run against object storage (s3rver, Redis): bytes up and down against the
 *            bytes that changed, requests, and what a fresh working copy needs before its build starts
 *   store-rgw  the same on Ceph RGW, a real S3 server, with the lease in the store (needs ceph-mon, ceph-osd, radosgw)
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const parts: Record<string, string[]> = {
  client: ['bench/client.ts', '600', '30'],
  extract: ['bench/extract.ts', 'medium', '365'],
  lake: ['bench/lake.ts'],
  land: ['bench/land.ts'],
  build: ['bench/build.ts'],
  forget: ['bench/forget.ts'],
  'lake-read': ['bench/lake-read.ts'],
  scale: ['bench/scale.ts'],
  store: ['bench/store.ts', 'small'],
  'store-rgw': ['bench/store.ts', 'small', 'rgw'],
};
const wanted = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(parts);
let failed = 0;
for (const name of wanted) {
  const args = parts[name];
  if (!args) {
    console.error(`bench: unknown part "${name}"; parts: ${Object.keys(parts).join(', ')}`);
    process.exit(2);
  }
  if (!existsSync(args[0])) {
    console.log(`== ${name}: not present (${args[0]})`);
    continue;
  }
  console.log(`== ${name}`);
  const r = spawnSync(process.execPath, ['bin/run-ts.mjs', ...args], { stdio: 'inherit' });
  if (r.status !== 0) failed += 1;
}
process.exit(failed ? 1 : 0);
