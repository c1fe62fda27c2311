/**
 * Landing cost with no HTTP in the way: 1,000,000 synthetic orders (15 columns) in pages of 100,
 * through the partition writer, into one partition. Prints rows/s and the process's peak RSS.
 *   node bin/run-ts.mjs bench/lake.ts [rows]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lakeColumns, openPartitionWrite } from '../src/lake/index.js';
import { Order } from '../src/resources/index.js';

const ROWS = Number(process.argv[2] ?? 1_000_000);
const PAGE = 100;
const GOALS = { rowsPerSecond: 100_000, peakRssMb: 400 };

/** An order as the client hands it over (decoded by the zod schema), varied enough to compress honestly. */
function order(i: number): Order {
  const face = 5 + (i % 200) + (i % 100) / 100;
  return {
    order_id: 10_000_000 + i,
    order_status: i % 50 === 0 ? 'refunded' : 'complete',
    first_name: `First${(i * 7919) % 100_003}`,
    last_name: `Last${(i * 104_729) % 50_021}`,
    email: `user${(i * 31) % 400_000}@example.com`,
    perk_id: 1 + (i % 3_000),
    brand: `Brand ${i % 400}`,
    offer: `${5 + (i % 20)}% off everything`,
    offer_excerpt: `Save on brand ${i % 400} with code ${(i * 13) % 9_973}`,
    face_value: face,
    order_total_paid: Math.round(face * 95) / 100,
    order_credit: (i % 7) / 4,
    order_currency: 'GBP',
    order_saving: Math.round(face * 5) / 100,
    group_revenue: Math.round(face * 2) / 100,
  };
}

const outDir = await mkdtemp(join(tmpdir(), 'perks-bench-lake-'));
try {
  const columns = lakeColumns(Order);
  const started = performance.now();
  const writer = await openPartitionWrite({
    outDir,
    stream: 'orders',
    partition: { organisation_group_id: '1', order_date: '2026-11-02' },
    columns,
    runId: 'bench',
    extractedAt: new Date(),
  });
  for (let first = 0; first < ROWS; first += PAGE) {
    const page: Order[] = [];
    for (let i = first; i < Math.min(first + PAGE, ROWS); i += 1) page.push(order(i));
    await writer.append(page);
  }
  const appended = performance.now();
  const result = await writer.commit();
  const seconds = (performance.now() - started) / 1000;
  const rowsPerSecond = Math.round(result.rows / seconds);
  const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
  console.log(
    JSON.stringify({
      bench: 'lake',
      rows: result.rows,
      seconds: Number(seconds.toFixed(2)),
      append_seconds: Number(((appended - started) / 1000).toFixed(2)),
      commit_seconds: Number(((performance.now() - appended) / 1000).toFixed(2)),
      rows_per_second: rowsPerSecond,
      peak_rss_mb: peakRssMb,
      parquet_mb: Number((result.bytes / 1e6).toFixed(1)),
      goals: GOALS,
      ok: rowsPerSecond >= GOALS.rowsPerSecond && peakRssMb <= GOALS.peakRssMb,
    }),
  );
} finally {
  await rm(outDir, { recursive: true, force: true });
}
