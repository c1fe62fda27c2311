/**
 * The generated lake moved on as a daily run moves it, for the incremental build's bench: files landed under
 * new names and the files they replace removed, as the extract does (docs/dev/lake-contract.md). In a lake of
 * day folders (as generated) a day is a folder; in a compacted lake (month folders, src/lake/month-layout.ts)
 * a day is a day file, or is merged into the month file that covers it (its next generation), as landing does.
 *  - next day: the new day's orders (as many as an average day), the lookback's days landed again with 0.4%
 *    of their Complete orders refunded, and a new users snapshot with 1,000 new users;
 *  - deep re-read: the open and the previous month (every day of them) landed again, a few more refunds.
 */
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance, quotedString, type DuckDBConnection } from '@duckdb/node-api';
import { dayStem, monthFileDays, monthFileInfo, successorOf, versionedName } from '../src/lake/index.js';
import { AS_OF } from './lake-generator.js';

const LOOKBACK_DAYS = 7;

const orders = (outDir: string) =>
  `read_parquet('${join(outDir, 'lake', 'orders')}/*/*/*.parquet', hive_partitioning = true, hive_types_autocast = false)`;

/** Lands `select` (with organisation_group_id and order_date) under new names, then removes what it replaces. */
async function land(c: DuckDBConnection, outDir: string, select: string, tag: string) {
  await c.run(`CREATE OR REPLACE TEMP TABLE landed AS ${select}`);
  if (!isMonthLayout(outDir)) {
    const days = await c.runAndReadAll(
      `SELECT min(order_date)::VARCHAR AS lo, max(order_date)::VARCHAR AS hi FROM landed`,
    );
    const [{ lo, hi }] = days.getRowObjectsJS() as { lo: string; hi: string }[];
    const replaced = dayFiles(outDir, lo, dayBefore(hi, -1));
    await c.run(
      `COPY (SELECT * EXCLUDE (order_date), CAST(order_date AS VARCHAR) AS order_date FROM landed) TO '${join(outDir, 'lake', 'orders')}' (FORMAT parquet, COMPRESSION zstd, PARTITION_BY (organisation_group_id, order_date), FILENAME_PATTERN 'part-${tag}-{i}', OVERWRITE_OR_IGNORE true)`,
    );
    for (const f of replaced) rmSync(f);
    return;
  }
  // Month folders: the files hold every column but the path's (group, month), order_date a DATE.
  const rowsOf = (g: string, days: string[]) =>
    `SELECT * EXCLUDE (organisation_group_id, order_month, order_date), CAST(order_date AS DATE) AS order_date FROM landed
     WHERE organisation_group_id = ${g} AND CAST(order_date AS DATE) IN (${days.map((d) => `DATE '${d}'`).join(', ')})`;
  const folders = await c.runAndReadAll(
    `SELECT DISTINCT organisation_group_id::VARCHAR AS g, CAST(order_date AS DATE)::VARCHAR AS d FROM landed ORDER BY ALL`,
  );
  const byFolder = new Map<string, { g: string; days: string[] }>();
  for (const { g, d } of folders.getRowObjectsJS() as { g: string; d: string }[]) {
    const dir = join(outDir, 'lake', 'orders', `organisation_group_id=${g}`, `order_month=${d.slice(0, 7)}`);
    byFolder.set(dir, { g, days: [...(byFolder.get(dir)?.days ?? []), d] });
  }
  for (const [dir, { g, days }] of byFolder) {
    const names = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.parquet')) : [];
    const month = names.find((f) => monthFileInfo(f) !== undefined);
    const covered = new Set(month ? monthFileDays(month) : []);
    const merged = days.filter((d) => covered.has(d));
    if (month && merged.length) {
      // the month file's next generation: its rows of the landed days replaced by the landed ones
      await c.run(
        `COPY (SELECT * FROM read_parquet(${quotedString(join(dir, month))})
               WHERE order_date NOT IN (${merged.map((d) => `DATE '${d}'`).join(', ')})
               UNION ALL BY NAME ${rowsOf(g, merged)} ORDER BY order_date, order_id)
         TO ${quotedString(successorOf(join(dir, month)))} (FORMAT parquet, COMPRESSION zstd)`,
      );
      rmSync(join(dir, month));
    }
    for (const d of days.filter((x) => !covered.has(x))) {
      const previous = names.filter((f) => f.startsWith(`${dayStem(d)}.`));
      mkdirSync(dir, { recursive: true });
      await c.run(
        `COPY (${rowsOf(g, [d])} ORDER BY order_id) TO ${quotedString(join(dir, versionedName(dayStem(d))))} (FORMAT parquet, COMPRESSION zstd)`,
      );
      for (const old of previous) rmSync(join(dir, old));
    }
  }
}

/** Whether the lake's orders are in month folders (compacted), not day folders (as generated). */
export function isMonthLayout(outDir: string): boolean {
  const root = join(outDir, 'lake', 'orders');
  const group = readdirSync(root)[0];
  return readdirSync(join(root, group)).some((d) => d.startsWith('order_month='));
}

/** Files of the day folders whose day is in [from, to). */
function dayFiles(outDir: string, from: string, to: string): string[] {
  const root = join(outDir, 'lake', 'orders');
  const files: string[] = [];
  for (const g of readdirSync(root))
    for (const d of readdirSync(join(root, g))) {
      const day = d.replace('order_date=', '');
      if (day >= from && day < to) for (const f of readdirSync(join(root, g, d))) files.push(join(root, g, d, f));
    }
  return files;
}

const dayBefore = (day: string, n: number) => new Date(Date.parse(day) - n * 86_400_000).toISOString().slice(0, 10);

async function withDb<T>(work: (c: DuckDBConnection) => Promise<T>): Promise<T> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    await c.run(`SET TimeZone = 'UTC'`);
    return await work(c);
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

/**
 * The run of AS_OF + n (n = 1, 2, ...): the day AS_OF + n - 1's orders, the lookback landed again with refunds,
 * new users. Days run in order: each reads the lake the one before left.
 */
export async function nextDay(outDir: string, n = 1): Promise<void> {
  const today = dayBefore(AS_OF, 1 - n);
  await withDb(async (c) => {
    const from = dayBefore(today, LOOKBACK_DAYS);
    const at = `TIMESTAMPTZ '${AS_OF} 02:00:00+00' + INTERVAL ${n} DAY`;
    await land(
      c,
      outDir,
      `SELECT * REPLACE (CASE WHEN order_status = 'Complete' AND order_id % 250 = 0 THEN 'Refunded' ELSE order_status END AS order_status,
                          ${at} AS _extracted_at, 'bench-next' AS _run_id)
       FROM ${orders(outDir)} WHERE order_date >= '${from}'
       UNION ALL
       -- the new day: as many orders as the day before, new ids, the same users
       SELECT * REPLACE (order_id + ${n} * 1000000000000 AS order_id, '${today}' AS order_date, ${at} AS _extracted_at, 'bench-next' AS _run_id)
       FROM ${orders(outDir)} WHERE order_date = '${dayBefore(today, 1)}'`,
      `next${n}`,
    );
    const users = `read_parquet('${join(outDir, 'lake', 'users')}/*/*/*.parquet', hive_partitioning = true, hive_types_autocast = false)`;
    await c.run(
      `COPY (
         SELECT * REPLACE ('${today}' AS _snapshot_date, ${at} AS _extracted_at) FROM ${users} WHERE _snapshot_date = '${dayBefore(today, 1)}'
         UNION ALL
         SELECT * FROM (
           SELECT * REPLACE ('${today}' AS _snapshot_date, ${at} AS _extracted_at, id + ${n} * 100000000 AS id, 'new${n}-' || UID AS UID, 'new${n}-' || email AS email)
           FROM ${users} WHERE _snapshot_date = '${dayBefore(today, 1)}' AND NOT starts_with(UID, 'new') LIMIT 1000
         )
       ) TO '${join(outDir, 'lake', 'users')}' (FORMAT parquet, COMPRESSION zstd, PARTITION_BY (organisation_group_id, _snapshot_date), FILENAME_PATTERN 'part-next${n}-{i}', OVERWRITE_OR_IGNORE true)`,
    );
  });
}

/** The weekly deep re-read, run at AS_OF + n: every day of the open and the previous month landed again, 0.4% more refunds. */
export async function deepReread(outDir: string, n = 2): Promise<void> {
  await withDb(async (c) => {
    const from = new Date(Date.UTC(Number(AS_OF.slice(0, 4)), Number(AS_OF.slice(5, 7)) - 2, 1))
      .toISOString()
      .slice(0, 10);
    await land(
      c,
      outDir,
      `SELECT * REPLACE (CASE WHEN order_status = 'Complete' AND order_id % 250 = 1 THEN 'Refunded' ELSE order_status END AS order_status,
                          TIMESTAMPTZ '${AS_OF} 02:00:00+00' + INTERVAL ${n} DAY AS _extracted_at, 'bench-deep' AS _run_id)
       FROM ${orders(outDir)} WHERE order_date >= '${from}'`,
      'deep',
    );
  });
}
