/**
 * Building a model by intervals (header `incremental: month on <group>, <date>`): only the group-months whose
 * inputs changed since the model's last build are rebuilt (deleted and inserted again in the copy of the
 * previous warehouse the build works on), the rest kept.
 *
 * An interval is dirty when the files of its lake group-month changed (lake-partitions.ts: names and sizes,
 * never the clock), or when an upstream model's rows of its group changed (a count and hash per group: the
 * users' emails that attribute orders). The whole model is rebuilt when there is no earlier state, its SQL
 * or a setting it reads changed, or `--full`. The dirty intervals are computed by the model's own SQL with
 * each lake view narrowed to the dirty group-months' files. Then, before anything is replaced, two checks
 * that the result equals a full build's (else the model is rebuilt whole, and the summary says why):
 *  - every row computed falls in a dirty interval (the header's promise: an interval comes from its own
 *    group-month of the lake);
 *  - no key of the rows computed, nor of the rows they replace, is in a clean group-month's files: a key in
 *    two group-months (a window landed under another day after a timezone change) is decided across them,
 *    which only a whole rebuild does.
 */
import { quotedIdentifier as id, quotedString as str, type DuckDBConnection } from '@duckdb/node-api';
import type { Lookup } from './header.js';
import { settingsHash, sha, type ModelState } from './build-state.js';
import { LAKE_STREAMS, lakeViewName } from './lake-streams.js';
import { monthPartitions, type Partition } from './lake-partitions.js';
import { narrowLakeView } from './lake-views.js';
import { stripTrailingSemicolon, type Node } from './model-graph.js';

export interface IntervalCounts {
  /** Group-months rebuilt (all of them when built whole). */
  rebuilt: number;
  skipped: number;
  /** Why the model was built whole; absent when built by intervals. */
  whole?: string;
}

/** `stg_orders: 8 months rebuilt, 44 skipped`, or `stg_orders: built whole, 52 months (why)`. */
export function describeIntervals(model: string, i: IntervalCounts): string {
  return i.whole
    ? `${model}: built whole, ${i.rebuilt} months (${i.whole})`
    : `${model}: ${i.rebuilt} months rebuilt, ${i.skipped} skipped`;
}

export interface IncrementalOutcome {
  rows: number;
  intervals: IntervalCounts;
}

/** Each incremental model's lookup keys as last built (see stageLookups), kept in the warehouse. */
export const LOOKUP_TABLE = '_build_lookup';
const DIRTY = '_perks_dirty';
const REBUILT = '_perks_rebuilt';
const KEYS = '_perks_keys';
const CHANGED = '_perks_changed';

interface StagedLookup extends Lookup {
  /** The temporary table of its keys now. */
  table: string;
  /** Whether the previous build kept its keys (else the model is built whole). */
  previous: boolean;
}

export class IncrementalModels {
  /** The state each incremental model is built from in this build (written with the warehouse). */
  readonly states = new Map<string, ModelState>();

  constructor(
    private readonly conn: DuckDBConnection,
    private readonly outDir: string,
    /** The states of the warehouse this build started from; null: build every model whole (--full). */
    private readonly previous: Map<string, ModelState> | null,
    private readonly previousTables: Set<string>,
  ) {}

  async build(model: Node): Promise<IncrementalOutcome> {
    const inc = model.header.incremental!;
    const lakeDeps = model.dependsOn.filter((d) => LAKE_STREAMS.some((s) => lakeViewName(s.name) === d));
    const looked = inc.lookups.map((l) => l.model);
    const modelDeps = model.dependsOn.filter((d) => !lakeDeps.includes(d) && !looked.includes(d));
    const current: ModelState = {
      sql: sha(model.sql),
      settings: await settingsHash(this.conn, model.sql),
      partitions: {},
      inputs: {},
    };
    const files = new Map<string, Partition & { stream: string }>();
    let unsupported: string | undefined;
    for (const view of lakeDeps) {
      const stream = view.slice('lake_'.length);
      const parts = monthPartitions(this.outDir, stream);
      if (!parts) {
        unsupported = `lake/${stream} is not in group and month folders`;
        continue;
      }
      for (const [key, p] of parts) {
        current.partitions[`${stream}/${key}`] = p.fingerprint;
        files.set(`${stream}/${key}`, { ...p, stream });
      }
    }
    for (const dep of modelDeps) current.inputs[dep] = await this.fingerprint(dep, inc.group);
    this.states.set(model.name, current);
    const lookups = await this.stageLookups(model);
    try {
      return await this.decide(model, current, files, lakeDeps, modelDeps, unsupported, lookups);
    } finally {
      await this.keepLookups(model, lookups);
    }
  }

  private async decide(
    model: Node,
    current: ModelState,
    files: Map<string, Partition & { stream: string }>,
    lakeDeps: string[],
    modelDeps: string[],
    unsupported: string | undefined,
    lookups: StagedLookup[],
  ): Promise<IncrementalOutcome> {
    const inc = model.header.incremental!;

    const intervals = new Set([...files.values()].map((p) => `${p.group}/${p.month}`));
    const prev = this.previous?.get(model.name);
    const whole =
      this.previous === null
        ? 'asked for (--full)'
        : !prev || !this.previousTables.has(model.name)
          ? 'no earlier build of it'
          : prev.sql !== current.sql
            ? 'its SQL changed'
            : prev.settings !== current.settings
              ? 'a setting it reads changed'
              : (unsupported ??
                (lookups.some((l) => !l.previous) ? 'no earlier state of its lookups' : undefined) ??
                (lookups.length && lakeDeps.length !== 1 ? 'a lookup needs exactly one lake stream' : undefined));
    if (whole) return this.buildWhole(model, intervals.size, whole);

    const dirty = new Set<string>();
    const old = new Set(Object.keys(prev!.partitions).map((k) => k.slice(k.indexOf('/') + 1)));
    for (const key of new Set([...Object.keys(prev!.partitions), ...Object.keys(current.partitions)]))
      if (prev!.partitions[key] !== current.partitions[key]) dirty.add(key.slice(key.indexOf('/') + 1));
    for (const dep of modelDeps) {
      const before = prev!.inputs[dep] ?? {};
      const now = current.inputs[dep];
      for (const group of new Set([...Object.keys(before), ...Object.keys(now)])) {
        if (before[group] === now[group]) continue;
        if (group === '*') return this.buildWhole(model, intervals.size, `${dep} changed (it has no ${inc.group})`);
        for (const interval of [...intervals, ...old]) if (interval.startsWith(`${group}/`)) dirty.add(interval);
      }
    }
    for (const lookup of lookups)
      for (const i of await this.lookupDirty(model, lakeDeps[0], lookup, files, dirty)) dirty.add(i);
    const skipped = [...intervals].filter((i) => !dirty.has(i)).length;
    if (dirty.size === 0) return { rows: await this.count(model.name), intervals: { rebuilt: 0, skipped } };
    const reason = await this.rebuildIntervals(model, dirty, files, lakeDeps);
    if (reason) return this.buildWhole(model, intervals.size, reason);
    return { rows: await this.count(model.name), intervals: { rebuilt: dirty.size, skipped } };
  }

  private async buildWhole(model: Node, intervals: number, why: string): Promise<IncrementalOutcome> {
    await this.conn.run(`CREATE OR REPLACE TABLE ${id(model.name)} AS\n${stripTrailingSemicolon(model.sql)}\n`);
    return { rows: await this.count(model.name), intervals: { rebuilt: intervals, skipped: 0, whole: why } };
  }

  /** Replaces the dirty intervals' rows; returns why it could not (nothing replaced), or undefined. */
  private async rebuildIntervals(
    model: Node,
    dirty: Set<string>,
    files: Map<string, Partition & { stream: string }>,
    lakeDeps: string[],
  ): Promise<string | undefined> {
    const inc = model.header.incremental!;
    const key = model.header.key!;
    const c = this.conn;
    const streams = lakeDeps.map((v) => v.slice('lake_'.length));
    const filesOf = (stream: string, isDirty: boolean) =>
      [...files.values()]
        .filter((p) => p.stream === stream && dirty.has(`${p.group}/${p.month}`) === isDirty)
        .flatMap((p) => p.files);
    const month = (alias: string) => `CAST(date_trunc('month', ${id(alias)}.${id(inc.time)}) AS DATE)`;
    const onDirty = (alias: string) => `${id(alias)}.${id(inc.group)} = d.g AND ${month(alias)} = d.m`;
    const cols = key.map((k) => id(k)).join(', ');
    const count = async (sql: string) => Number((await c.runAndReadAll(sql)).getRowObjectsJson()[0].n);
    try {
      await c.run(`CREATE OR REPLACE TEMP TABLE ${DIRTY} (g BIGINT, m DATE)`);
      for (const interval of dirty) {
        const [g, m] = interval.split('/');
        await c.run(`INSERT INTO ${DIRTY} VALUES ($g::BIGINT, ($m || '-01')::DATE)`, { g, m });
      }
      for (const s of streams) await narrowLakeView(c, this.outDir, s, filesOf(s, true));
      await c.run(`CREATE OR REPLACE TEMP TABLE ${REBUILT} AS\n${stripTrailingSemicolon(model.sql)}\n`);
      const outside = await count(
        `SELECT count(*) AS n FROM ${REBUILT} AS r ANTI JOIN ${DIRTY} AS d ON ${onDirty('r')}`,
      );
      if (outside > 0) return 'rows of a dirty interval fell outside it (fell back to a whole build)';
      await c.run(
        `CREATE OR REPLACE TEMP TABLE ${KEYS} AS SELECT ${cols} FROM ${REBUILT} ` +
          `UNION SELECT ${cols} FROM ${id(model.name)} AS t SEMI JOIN ${DIRTY} AS d ON ${onDirty('t')}`,
      );
      // the keys against the clean group-months' files
      for (const s of streams) await narrowLakeView(c, this.outDir, s, filesOf(s, false));
      for (const view of lakeDeps) {
        const shared = await count(`SELECT count(*) AS n FROM ${id(view)} SEMI JOIN ${KEYS} USING (${cols})`);
        if (shared > 0)
          return `a key of a dirty interval is also in a clean one of ${view} (fell back to a whole build)`;
      }
      await c.run(`DELETE FROM ${id(model.name)} AS t USING ${DIRTY} AS d WHERE ${onDirty('t')}`);
      await c.run(`INSERT INTO ${id(model.name)} BY NAME SELECT * FROM ${REBUILT}`);
      return undefined;
    } finally {
      for (const s of streams) await narrowLakeView(c, this.outDir, s, 'all');
      for (const t of [DIRTY, REBUILT, KEYS]) await c.run(`DROP TABLE IF EXISTS temp.${t}`);
    }
  }

  /**
   * Each lookup model's keys as they are now: per group, the hash of the key column and of the whole row
   * (a temporary table); `previous` whether the last build kept them (LOOKUP_TABLE).
   */
  private async stageLookups(model: Node): Promise<StagedLookup[]> {
    const inc = model.header.incremental!;
    const staged: StagedLookup[] = [];
    await this.conn.run(
      `CREATE TABLE IF NOT EXISTS ${LOOKUP_TABLE} (model VARCHAR, lookup VARCHAR, g BIGINT, h UBIGINT, v UBIGINT)`,
    );
    for (const [n, lookup] of inc.lookups.entries()) {
      const table = `_perks_lookup_${n}`;
      await this.conn.run(
        `CREATE OR REPLACE TEMP TABLE ${table} AS SELECT t.${id(inc.group)} AS g, hash(t.${id(lookup.column)}) AS h, hash(t) AS v FROM ${id(lookup.model)} AS t`,
      );
      const had = await this.conn.runAndReadAll(
        `SELECT count(*) AS n FROM ${LOOKUP_TABLE} WHERE model = $model AND lookup = $lookup`,
        { model: model.name, lookup: lookup.model },
      );
      staged.push({ ...lookup, table, previous: Number(had.getRowObjectsJson()[0].n) > 0 || this.previous === null });
    }
    return staged;
  }

  /** The intervals whose lake rows match a key whose lookup row was added, removed or changed. */
  private async lookupDirty(
    model: Node,
    lakeView: string,
    lookup: StagedLookup,
    files: Map<string, Partition & { stream: string }>,
    dirty: Set<string>,
  ): Promise<string[]> {
    const inc = model.header.incremental!;
    const c = this.conn;
    const old = `(SELECT g, h, v FROM ${LOOKUP_TABLE} WHERE model = ${str(model.name)} AND lookup = ${str(lookup.model)})`;
    const now = `(SELECT g, h, v FROM ${lookup.table})`;
    await c.run(
      `CREATE OR REPLACE TEMP TABLE ${CHANGED} AS SELECT g, h FROM (${now} EXCEPT ${old}) UNION SELECT g, h FROM (${old} EXCEPT ${now})`,
    );
    try {
      const groups = new Set(
        (
          (await c.runAndReadAll(`SELECT DISTINCT CAST(g AS VARCHAR) AS g FROM ${CHANGED}`)).getRowObjectsJson() as {
            g: string;
          }[]
        ).map((r) => r.g),
      );
      // only the lake files of the groups with a changed key, and of months not already dirty, are read
      const stream = lakeView.slice('lake_'.length);
      const read = [...files.values()]
        .filter((p) => p.stream === stream && groups.has(p.group) && !dirty.has(`${p.group}/${p.month}`))
        .flatMap((p) => p.files);
      if (read.length === 0) return [];
      await narrowLakeView(c, this.outDir, stream, read);
      const r = await c.runAndReadAll(
        `SELECT DISTINCT CAST(o.${id(inc.group)} AS VARCHAR) || '/' || strftime(o.${id(inc.time)}, '%Y-%m') AS interval
         FROM ${id(lakeView)} AS o SEMI JOIN ${CHANGED} AS c
           ON o.${id(inc.group)} = c.g AND hash(${lookup.expression}) = c.h`,
      );
      return (r.getRowObjectsJson() as { interval: string }[]).map((row) => row.interval);
    } finally {
      await narrowLakeView(c, this.outDir, lakeView.slice('lake_'.length), 'all');
      await c.run(`DROP TABLE IF EXISTS temp.${CHANGED}`);
    }
  }

  /** Keeps this build's lookup keys for the next build (in the new warehouse). */
  private async keepLookups(model: Node, lookups: StagedLookup[]): Promise<void> {
    await this.conn.run(`DELETE FROM ${LOOKUP_TABLE} WHERE model = $model`, { model: model.name });
    for (const l of lookups) {
      await this.conn.run(`INSERT INTO ${LOOKUP_TABLE} SELECT $model, $lookup, g, h, v FROM ${l.table}`, {
        model: model.name,
        lookup: l.model,
      });
      await this.conn.run(`DROP TABLE IF EXISTS temp.${l.table}`);
    }
  }

  /** Per group (or `*` without a group column): the count and hash of an upstream model's rows. */
  private async fingerprint(table: string, group: string): Promise<Record<string, string>> {
    const cols = await this.conn.runAndReadAll(
      `SELECT count(*) AS n FROM (DESCRIBE ${id(table)}) WHERE column_name = $group`,
      { group },
    );
    const byGroup = Number(cols.getRowObjectsJson()[0].n) > 0;
    const g = byGroup ? `CAST(t.${id(group)} AS VARCHAR)` : `'*'`;
    const r = await this.conn.runAndReadAll(
      `SELECT ${g} AS g, count(*) || ':' || bit_xor(hash(t)) AS fp FROM ${id(table)} AS t GROUP BY ALL`,
    );
    return Object.fromEntries((r.getRowObjectsJson() as { g: string; fp: string }[]).map((row) => [row.g, row.fp]));
  }

  private async count(table: string): Promise<number> {
    const r = await this.conn.runAndReadAll(`SELECT count(*) AS n FROM ${id(table)}`);
    return Number(r.getRowObjectsJson()[0].n);
  }
}
