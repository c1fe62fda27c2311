/**
 * The lake against the truth: the sandbox's own orders for each group's closed local days, every
 * stream's current keys and rows (to compare with a reference run), duplicates by each stream's contract,
 * and the temporary files a run may have left behind. The local day of an instant is worked out here by
 * Intl's formatter in the group's time zone (localDayOf), never by the extract's windows (dayWindows,
 * localDay): a window bug would otherwise be in the truth too.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { withLakeConnection } from '../../src/lake/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';

export interface GroupDays {
  id: number;
  timezone: string;
  /** First local day not closed at the run's start (windows end before it). */
  upperDay: string;
}

const dayFormats = new Map<string, Intl.DateTimeFormat>();

/** The local calendar day (YYYY-MM-DD) of the instant `ms` in `timezone`, read from Intl's formatted parts. */
export function localDayOf(ms: number, timezone: string): string {
  let format = dayFormats.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    });
    dayFormats.set(timezone, format);
  }
  const part = (type: string) => format.formatToParts(ms).find((p) => p.type === type)!.value;
  return `${part('year')}-${part('month')}-${part('day')}`;
}

/** Each sandbox group with its first open local day at `now`. */
export function groupsAt(sandbox: Sandbox, now: Date): GroupDays[] {
  return sandbox.world.groups.map((g) => ({
    id: g.id,
    timezone: g.timezone,
    upperDay: localDayOf(now.getTime(), g.timezone),
  }));
}

/** The sandbox's orders for each group's local days [from, upperDay), as the lake should hold them. */
export function ordersTruth(sandbox: Sandbox, groups: GroupDays[], from: string): OrderRow[] {
  return groups
    .flatMap((g) => truthOrders(sandbox, [g], from, g.upperDay))
    .sort((a, b) => a.group - b.group || a.order_id - b.order_id);
}

/** Rows of `truth` absent from `lake` (by group and order id), and lake rows that differ or are extra. */
export function compareOrders(
  lake: OrderRow[],
  truth: OrderRow[],
): { missing: number; wrong: number; duplicated: number } {
  const key = (r: OrderRow) => `${r.group}/${r.order_id}`;
  const seen = new Map<string, number>();
  for (const r of lake) seen.set(key(r), (seen.get(key(r)) ?? 0) + 1);
  const want = new Map(truth.map((r) => [key(r), JSON.stringify(r)]));
  const missing = truth.filter((r) => !seen.has(key(r))).length;
  const wrong = lake.filter((r) => want.get(key(r)) !== JSON.stringify(r)).length;
  const duplicated = [...seen.values()].reduce((n, c) => n + c - 1, 0);
  return { missing, wrong, duplicated };
}

interface StreamKeys {
  /** The stream's key, as SQL over the stream's rows. */
  key: string;
  /** What must be unique: the key, plus the snapshot day or extraction time where the contract allows repeats. */
  unique: string;
  /** Rows that are current (latest snapshot), when not all are. */
  current?: string;
}

const G = 'organisation_group_id::VARCHAR';
export const STREAM_KEYS: Record<string, StreamKeys> = {
  groups: { key: G, unique: `${G}, _snapshot_date::VARCHAR`, current: 'latest' },
  users: { key: `${G} || '/' || id::VARCHAR`, unique: `${G}, _snapshot_date::VARCHAR, id`, current: 'latest' },
  offers: { key: 'id::VARCHAR', unique: '_snapshot_date::VARCHAR, id', current: 'latest' },
  orders: { key: `${G} || '/' || order_id::VARCHAR`, unique: `${G}, order_id` },
  redemption_stats: {
    key: `${G} || '/' || window_start::VARCHAR || '/' || id::VARCHAR`,
    unique: `${G}, window_start::VARCHAR, id`,
  },
  credit: { key: `${G} || '/' || user_id::VARCHAR`, unique: `${G}, user_id, _extracted_at` },
  interactions: { key: `${G} || '/' || id::VARCHAR`, unique: `${G}, id, _extracted_at` },
};

const glob = (outDir: string, stream: string) => join(outDir, 'lake', stream, '**', '*.parquet');
const hasFiles = (outDir: string, stream: string) => {
  try {
    return readdirSync(join(outDir, 'lake', stream), { recursive: true }).some((f) => String(f).endsWith('.parquet'));
  } catch {
    return false;
  }
};

/** Per stream: its current keys, and how many rows break its uniqueness contract. */
export async function lakeKeys(
  outDir: string,
  streams = Object.keys(STREAM_KEYS),
): Promise<Map<string, { keys: Set<string>; duplicated: number }>> {
  const out = new Map<string, { keys: Set<string>; duplicated: number }>();
  await withLakeConnection(async (c) => {
    for (const stream of streams) {
      const spec = STREAM_KEYS[stream];
      if (!hasFiles(outDir, stream)) {
        out.set(stream, { keys: new Set(), duplicated: 0 });
        continue;
      }
      const source = `read_parquet($glob, hive_partitioning = true, union_by_name = true)`;
      const latest = spec.current
        ? `WHERE _snapshot_date::VARCHAR = (SELECT max(_snapshot_date::VARCHAR) FROM ${source})`
        : '';
      const keys = await c.runAndReadAll(`SELECT DISTINCT ${spec.key} AS k FROM ${source} ${latest}`, {
        glob: glob(outDir, stream),
      });
      const dup = await c.runAndReadAll(
        `SELECT coalesce(sum(n - 1), 0)::BIGINT AS d FROM (SELECT count(*) AS n FROM ${source} GROUP BY ${spec.unique})`,
        { glob: glob(outDir, stream) },
      );
      out.set(stream, {
        keys: new Set((keys.getRowObjectsJS() as { k: string | number | bigint }[]).map((r) => String(r.k))),
        duplicated: Number(dup.getRowObjectsJS()[0].d),
      });
    }
  });
  return out;
}

/** Keys of `reference` each stream of `actual` lacks, and the duplicates `actual` holds, summed. */
export function missingAgainst(
  reference: Map<string, { keys: Set<string> }>,
  actual: Map<string, { keys: Set<string>; duplicated: number }>,
) {
  let missing = 0;
  let duplicated = 0;
  const perStream: Record<string, number> = {};
  for (const [stream, ref] of reference) {
    const got = actual.get(stream);
    const lacking = [...ref.keys].filter((k) => !got?.keys.has(k)).length;
    if (lacking) perStream[stream] = lacking;
    missing += lacking;
    duplicated += got?.duplicated ?? 0;
  }
  return { missing, duplicated, perStream };
}

/** Files a run must never leave behind: temporary names (spills, unfinished Parquet, half-written JSON). */
export function leftovers(outDir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(outDir, { recursive: true }).map(String);
  } catch {
    return [];
  }
  return names.filter(
    (n) => n.includes('perks-tmp') || n.includes('.tmp-') || n.endsWith('.tmp') || n.endsWith('.spill'),
  );
}

export type Keys = Awaited<ReturnType<typeof lakeKeys>>;

export interface Completeness {
  missing: number;
  wrong: number;
  duplicated: number;
  leftovers: string[];
  /** One line naming what is off, empty when nothing is. */
  problem: string;
}

/** The lake of `outDir` against the sandbox's orders and against the keys of an uninterrupted run. */
export async function completeness(
  sandbox: Sandbox,
  outDir: string,
  groups: GroupDays[],
  start: string,
  reference: Keys,
): Promise<Completeness> {
  const orders = compareOrders(await lakeOrders(outDir), ordersTruth(sandbox, groups, start));
  const keys = missingAgainst(reference, await lakeKeys(outDir));
  const left = leftovers(outDir);
  const bad = orders.missing || orders.wrong || keys.missing || keys.duplicated || left.length;
  return {
    missing: orders.missing + keys.missing,
    wrong: orders.wrong,
    duplicated: keys.duplicated, // orders included
    leftovers: left,
    problem: bad
      ? `orders missing ${orders.missing}, wrong ${orders.wrong}; keys missing ${JSON.stringify(keys.perStream)}, duplicated ${keys.duplicated}; left ${left.slice(0, 3).join(', ')}`
      : '',
  };
}

export interface OrderRow {
  group: number;
  order_date: string;
  order_id: number;
  order_status: string;
  face_value: string;
  group_revenue: string;
}

/** The lake's orders as landed: one row per (group, order_id) would be the contract; duplicates are kept to be seen. */
export async function lakeOrders(outDir: string): Promise<OrderRow[]> {
  return withLakeConnection(async (c) => {
    const r = await c.runAndReadAll(
      `SELECT organisation_group_id::BIGINT AS g, order_date::DATE::VARCHAR AS d, order_id::BIGINT AS id, order_status AS s,
              face_value::VARCHAR AS fv, group_revenue::VARCHAR AS gr
       FROM read_parquet($glob, hive_partitioning = true, union_by_name = true) ORDER BY g, id`,
      { glob: join(outDir, 'lake', 'orders', '**', '*.parquet') },
    );
    const rows = r.getRowObjectsJS() as (Record<'d' | 's' | 'fv' | 'gr', string> & Record<'g' | 'id', bigint>)[];
    return rows.map((x) => ({
      group: Number(x.g),
      order_date: String(x.d),
      order_id: Number(x.id),
      order_status: String(x.s),
      face_value: String(x.fv),
      group_revenue: String(x.gr),
    }));
  });
}

/** No time zone is more than a day from UTC: the UTC days around [from, to) hold every local day of it. */
const DAY_MS = 86_400_000;

/**
 * What the sandbox holds for each group's local days in [from, to): each order of the UTC days around them,
 * kept when its creation's local day (localDayOf) is in the range, and dated with that day.
 */
export function truthOrders(
  sandbox: Sandbox,
  groups: { id: number; timezone: string }[],
  from: string,
  to: string,
): OrderRow[] {
  const out: OrderRow[] = [];
  const around = { from: Date.parse(`${from}T00:00:00Z`) - DAY_MS, to: Date.parse(`${to}T00:00:00Z`) + DAY_MS };
  for (const g of groups) {
    for (const o of sandbox.world.ordersOf(g.id, around)) {
      const day = localDayOf(o.created_at, g.timezone);
      if (day < from || day >= to) continue;
      out.push({
        group: g.id,
        order_date: day,
        order_id: o.order_id,
        order_status: o.status,
        face_value: (o.face_value / 100).toFixed(2),
        group_revenue: (o.group_revenue / 100).toFixed(2),
      });
    }
  }
  return out.sort((a, b) => a.group - b.group || a.order_id - b.order_id);
}

/**
 * Every row of a stream, all columns but the run's own (`_extracted_at`, `_run_id`), as sorted JSON
 * text: two lakes are equal when these are (keys, sums and every other value).
 */
export async function streamRows(outDir: string, stream: string): Promise<string[]> {
  return withLakeConnection(async (c) => {
    const r = await c.runAndReadAll(
      `SELECT to_json(t)::VARCHAR AS j
       FROM (SELECT * EXCLUDE (_extracted_at, _run_id) FROM read_parquet($glob, hive_partitioning = true, union_by_name = true)) t
       ORDER BY j`,
      { glob: join(outDir, 'lake', stream, '**', '*.parquet') },
    );
    return (r.getRowObjectsJS() as { j: string }[]).map((row) => row.j);
  });
}
