/**
 * 6. Data drift: the sandbox's `driftRate` fault changes some listed records (a wrong type, an unknown
 * field, numbers as strings, nulls left out). A run with drift is compared with a run without:
 * the wrong-typed records are quarantined and counted, the unknown fields are counted and landed in
 * `_extra`, everything else lands with exactly the values of the run without drift.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { extract } from '../../../src/extract/index.js';
import { withLakeConnection } from '../../../src/lake/index.js';
import type { Sandbox } from '../../../src/sandbox/index.js';
import { orgConfig, withSandbox } from '../../support/sandbox.js';
import { withScratch } from '../../support/scratch.js';
import { row, type Row, type ScenarioOptions } from '../table.js';
import { outputAt } from '../../../src/output/index.js';

const TODAY = '2026-11-22';
const NOW = new Date(`${TODAY}T12:00:00Z`);
const START = '2026-10-15';

/** Each stream's record key, and the user a record belongs to (a quarantined user's records are never asked for). */
const STREAMS: Record<string, { key: string; user?: string; drop?: string[] }> = {
  users: { key: 'id', user: 'id' },
  offers: { key: 'id' },
  orders: { key: 'order_id' },
  redemption_stats: { key: "window_start::VARCHAR || '/' || id", user: 'id' },
  credit: { key: 'user_id', user: 'user_id', drop: ['credits'] },
  interactions: { key: 'id', user: 'user_id' },
};

export async function driftScenario(o: ScenarioOptions & { rates: number[] }): Promise<Row[]> {
  const rows: Row[] = [];
  for (const rate of o.rates) {
    rows.push(
      await withSandbox({ seed: 21, today: TODAY }, (sandbox) =>
        withScratch('drift', (scratch) => driftRun(sandbox, scratch.dir('clean'), scratch.dir('drift'), rate)),
      ),
    );
  }
  return rows;
}

async function driftRun(sandbox: Sandbox, cleanDir: string, driftDir: string, rate: number): Promise<Row> {
  const problems: string[] = [];
  const clean = await extract(orgConfig(sandbox, cleanDir, { PERKS_START_DATE: START }), {
    output: outputAt(cleanDir),
    now: NOW,
  });
  sandbox.setFaults({ driftRate: rate });
  const before = { ...sandbox.stats().faults.drift };
  const drifted = await extract(orgConfig(sandbox, driftDir, { PERKS_START_DATE: START }), {
    output: outputAt(driftDir),
    now: NOW,
  });
  const after = sandbox.stats().faults.drift;
  sandbox.setFaults({ driftRate: 0 });
  const injected = Object.fromEntries(
    Object.entries(after).map(([k, v]) => [k, v - before[k as keyof typeof before]]),
  ) as typeof after;
  if (clean.exitCode !== 0) problems.push(`the run without drift exited ${clean.exitCode}`);
  const failed = drifted.streams.find((s) => s.status !== 'success');
  if (failed) problems.push(`the run with drift failed: ${failed.name} ${failed.status} ${failed.error ?? ''}`);
  // Above the quarantine threshold (0.1%) the run ends partial, exit 4, and names the threshold.
  const q = drifted.quarantine;
  const above = drifted.quarantined / Math.max(1, q?.records ?? 0) > 0.001;
  const expected = above ? { status: 'partial', exitCode: 4 } : { status: 'success', exitCode: 0 };
  if (drifted.status !== expected.status || drifted.exitCode !== expected.exitCode)
    problems.push(
      `the run with drift ended ${drifted.status}, exit ${drifted.exitCode}; expected ${expected.status}, exit ${expected.exitCode}`,
    );
  if (above && !q?.message?.includes('above the 0.1% threshold (PERKS_QUARANTINE_THRESHOLD)'))
    problems.push(`no line names the threshold: ${q?.message}`);

  const quarantined = quarantinedRecords(driftDir);
  const quarantinedUsers = new Set((quarantined.get('users') ?? []).map((r) => String(r.id)));
  const unknown = unknownFieldCount(drifted.manifest, 'drift_note');
  const totalQuarantined = [...quarantined.values()].reduce((n, l) => n + l.length, 0);
  if (totalQuarantined !== injected.wrongType)
    problems.push(`quarantined ${totalQuarantined} records, ${injected.wrongType} were given a wrong type`);
  if (drifted.quarantined !== injected.wrongType)
    problems.push(`the run counted ${drifted.quarantined} quarantined, ${injected.wrongType} injected`);
  if (unknown !== injected.unknownField)
    problems.push(`the manifest counts ${unknown} unknown drift_note fields, ${injected.unknownField} injected`);
  // Unknown fields are landed, not dropped: in the _extra column, and only there (compared apart below).
  const extras = await landedExtras(cleanDir, driftDir);
  if (extras.clean) problems.push(`the run without drift landed ${extras.clean} rows with extras`);
  if (injected.unknownField && !extras.notes) problems.push('no drift_note was landed in _extra');
  if (extras.other) problems.push(`${extras.other} rows hold other extras than drift_note`);

  let changed = 0;
  let lost = 0;
  for (const [stream, spec] of Object.entries(STREAMS)) {
    const base = await streamRows(cleanDir, stream, spec);
    const got = await streamRows(driftDir, stream, spec);
    const extra = [...got.keys()].filter((k) => !base.has(k));
    const differ = [...got].filter(([k, v]) => base.has(k) && base.get(k)!.json !== v.json);
    const ofQuarantinedUsers =
      spec.user && stream !== 'users' ? [...base.values()].filter((r) => quarantinedUsers.has(r.user)).length : 0;
    const direct = stream === 'credit' ? 0 : (quarantined.get(stream)?.length ?? 0);
    const missing = base.size - got.size - ofQuarantinedUsers - direct;
    changed += differ.length + extra.length;
    lost += Math.abs(missing);
    if (extra.length || differ.length || missing) {
      problems.push(
        `${stream}: ${extra.length} rows not in the run without drift, ${differ.length} with other values (e.g. ${differ[0]?.[1].json.slice(0, 160)}), ${missing} missing beyond the quarantined`,
      );
    }
  }
  // Credit items: those of quarantined users were never asked for; the quarantined items are the only others missing.
  const creditItems = async (dir: string) =>
    withLakeConnection(async (c) => {
      const r = await c.runAndReadAll(`SELECT user_id::VARCHAR AS u, len(credits)::BIGINT AS n FROM read_parquet($g)`, {
        g: join(dir, 'lake', 'credit', '**', '*.parquet'),
      });
      const rows = r.getRowObjectsJS() as { u: string; n: bigint }[];
      return rows.reduce((n, x) => n + (quarantinedUsers.has(x.u) ? 0 : Number(x.n)), 0);
    });
  const itemsLost =
    (await creditItems(cleanDir)) - (await creditItems(driftDir)) - (quarantined.get('credit')?.length ?? 0);
  if (itemsLost !== 0) problems.push(`credit: ${itemsLost} credit items missing beyond the quarantined ones`);

  const all = Object.values(injected).reduce((a, b) => a + b, 0);
  return row(
    `data drift at ${rate * 100}% of records`,
    all,
    problems,
    `${all} drifted (wrong type ${injected.wrongType}, unknown field ${injected.unknownField}, numbers as strings ${injected.numbersAsStrings}, nulls left out ${injected.missingFields}): quarantined ${totalQuarantined}/${injected.wrongType}, unknown fields counted ${unknown}/${injected.unknownField}, values changed ${changed}, lost ${lost + Math.abs(itemsLost)}, exit ${drifted.exitCode}`,
  );
}

/** The raw records of each stream's quarantine files. */
function quarantinedRecords(outDir: string): Map<string, Record<string, unknown>[]> {
  const out = new Map<string, Record<string, unknown>[]>();
  const root = join(outDir, 'quarantine');
  let streams: string[];
  try {
    streams = readdirSync(root);
  } catch {
    return out;
  }
  for (const stream of streams) {
    const records = readdirSync(join(root, stream)).flatMap((f) =>
      readFileSync(join(root, stream, f), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).record as Record<string, unknown>),
    );
    out.set(stream, records);
  }
  return out;
}

function unknownFieldCount(manifest: string, field: string): number {
  const fields = (JSON.parse(readFileSync(manifest, 'utf8')).unknown_fields ?? {}) as Record<
    string,
    Record<string, number>
  >;
  let n = 0;
  // the order history's versions carry their order's extras: counted in orders already
  for (const [stream, perStream] of Object.entries(fields))
    if (stream !== 'order_versions')
      for (const [path, count] of Object.entries(perStream)) if (path.endsWith(field)) n += count;
  return n;
}

/** Rows with extras in the run without drift; rows holding the drift note in `_extra`, and rows holding other extras. */
async function landedExtras(
  cleanDir: string,
  driftDir: string,
): Promise<{ clean: number; notes: number; other: number }> {
  const count = (dir: string, where: string) =>
    withLakeConnection(async (c) => {
      const r = await c.runAndReadAll(
        `SELECT count(*)::BIGINT AS n FROM read_parquet($g, hive_partitioning = false, union_by_name = true) WHERE ${where}`,
        { g: join(dir, 'lake', '**', '*.parquet') },
      );
      return Number(r.getRowObjectsJS()[0].n);
    });
  return {
    clean: await count(cleanDir, '_extra IS NOT NULL'),
    // at the top level, or inside a credit item (the credit record's `credits` list)
    notes: await count(driftDir, `contains(_extra::VARCHAR, '"drift_note":"added by the sandbox"')`),
    other: await count(driftDir, `_extra IS NOT NULL AND NOT contains(_extra::VARCHAR, '"drift_note"')`),
  };
}

/** key → the row's values as JSON (without the run's own columns and the extras), and its user. */
async function streamRows(
  outDir: string,
  stream: string,
  spec: (typeof STREAMS)[string],
): Promise<Map<string, { json: string; user: string }>> {
  const drop = ['_extracted_at', '_run_id', '_extra', ...(spec.drop ?? [])].join(', ');
  return withLakeConnection(async (c) => {
    const r = await c.runAndReadAll(
      `SELECT (${spec.key})::VARCHAR AS k, ${spec.user ? `${spec.user}::VARCHAR` : 'NULL'} AS u, to_json(t)::VARCHAR AS j
       FROM (SELECT * EXCLUDE (${drop}) FROM read_parquet($g, hive_partitioning = true, union_by_name = true)) t`,
      { g: join(outDir, 'lake', stream, '**', '*.parquet') },
    );
    const rows = r.getRowObjectsJS() as Record<'k' | 'j' | 'u', string | null>[];
    return new Map(rows.map((x) => [String(x.k), { json: String(x.j), user: String(x.u) }]));
  });
}
