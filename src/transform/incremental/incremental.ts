/**
 * Building a model by intervals (header `incremental: month on <group>, <date>`): only the group-months whose
 * inputs changed since the model's last build are rebuilt (deleted and inserted again in the copy of the
 * previous warehouse the build works on), the rest kept. Two kinds of model are built so:
 *  - read from the lake (stg_orders): an interval is dirty when the files of its lake group-month changed
 *    (lake-partitions.ts: names and sizes, never the clock);
 *  - built from models (savings_monthly): an interval is dirty when an upstream model that declares its
 *    intervals (`intervals:`, or its own `incremental:`) has other rows in that group-month than at the last
 *    build (a count and hash per group-month); only those group-months of it are read.
 * For both, an interval is also dirty when an upstream model read whole changed in its group (a count and
 * hash per group), or when a lookup row (a row joined by key, e.g. a user) changed and one of the interval's
 * rows matches its key: the lake rows, or the model's own rows as last built. A model built from models that
 * names some of them `edges:` (reconciliation_platform: a local day at a month's edge is partly in the UTC
 * month beside it) also reads their last day of the month before and first day of the month after: their rows on
 * a month's first day and on its last day are hashed apart, a change on the first day dirties the month before,
 * on the last day the month after, and a dirty month sees those two days of theirs besides its own month. The whole model is rebuilt when
 * there is no earlier state, its SQL or a setting it reads changed, or `--full`. Then, before anything is
 * replaced, checks that the result equals a full build's (else the model is rebuilt whole, and the summary
 * says why):
 *  - every row computed falls in a dirty interval (the header's promise: an interval comes from its own
 *    group-month);
 *  - read from the lake: no key of the rows computed, nor of the rows they replace, is in a clean
 *    group-month's files: a key in two group-months (a window landed under another day after a timezone
 *    change) is decided across them, which only a whole rebuild does. A model built from models needs its
 *    key to hold the group and the time column, so a key is in one interval only.
 */
import { quotedIdentifier as id, quotedString as str, type DuckDBConnection } from '../../shared/duckdb.js';
import type { Intervals, Lookup } from '../models/header.js';
import { settingsHash, sha, type ModelState } from './build-state.js';
import { LAKE_STREAMS, lakeViewName } from '../sources/lake-streams.js';
import { folderMonth, monthPartitions, type Partition } from '../sources/lake-partitions.js';
import { narrowLakeView } from '../sources/lake-views.js';
import { monthsHeld, NO_MONTH } from './month-range.js';
import type { Node } from '../models/model-graph.js';
import { digestSql, digestWithEdgesSql, edgeDigestsSql, hasColumnSql } from './digest-sql.js';
import {
  changedUsersSql,
  deleteIntervalsSql,
  DIRTY,
  DIRTY_ROW_SQL,
  DIRTY_TABLE_SQL,
  inIntervals,
  insertRebuiltSql,
  KEYS,
  keysSql,
  monthPlus,
  narrowedModelSql,
  outsideSql,
  REBUILT,
  rebuiltSql,
  sharedKeysSql,
  wholeTableSql,
  widenedModelSql,
} from './interval-sql.js';
import { relativeStreamDir } from '../../lake/index.js';
import { buildByUser } from './by-user.js';

export interface IntervalCounts {
  /** Group-months rebuilt (all of them when built whole), counted over the intervals its inputs hold. */
  rebuilt: number;
  /**
   * Group-months of its inputs not rebuilt. Inputs may hold more months than the model: `stg_month_states` has a
   * row for every month since 2000, so these are not the model's months (`months` is).
   */
  skipped: number;
  /** The months the model holds once built (any group; rows of no month not counted): what the summary says. */
  months?: number;
  /** Why the model was built whole; absent when built by intervals. */
  whole?: string;
  /** A model built by users (by-user.ts): `rebuilt` counts users, `skipped` none (the rest are not counted). */
  unit?: 'users';
}

const monthsText = (n: number) => `${n} month${n === 1 ? '' : 's'}`;

/**
 * `savings_monthly: built whole, 4 months (why)`, `stg_orders: 3 group-months rebuilt, the rest of its 4 months
 * kept`, or `stg_orders: nothing rebuilt, its 4 months kept`: the months are those the model holds.
 */
export function describeIntervals(model: string, i: IntervalCounts): string {
  if (i.unit === 'users') {
    if (i.whole) return `${model}: built whole (${i.whole})`;
    if (i.rebuilt === 0) return `${model}: nothing rebuilt, every user's rows kept`;
    return `${model}: ${i.rebuilt} user${i.rebuilt === 1 ? '' : 's'} rebuilt, the other users' rows kept`;
  }
  const held = monthsText(i.months ?? 0);
  if (i.whole) return `${model}: built whole, ${held} (${i.whole})`;
  if (i.rebuilt === 0) return `${model}: nothing rebuilt, its ${held} kept`;
  return `${model}: ${i.rebuilt} group-month${i.rebuilt === 1 ? '' : 's'} rebuilt, the rest of its ${held} kept`;
}

export interface IncrementalOutcome {
  rows: number;
  intervals: IntervalCounts;
}

const partitionsOf = (stream: string): string[] =>
  LAKE_STREAMS.find((s) => s.name === stream)?.partitions.map((p) => p.name) ?? [];

/** Each incremental model's lookup keys as last built (see stageLookups), kept in the warehouse. */
export const lookupTable = (model: string): string => `_build_lookup_${model}`;
/**
 * A model read from the lake: the lookup keys its lake rows hold (a hash of the lookup expression) per folder
 * and month, kept in the warehouse (see indexLookupRows).
 */
export const lookupRowsTable = (model: string): string => `_build_lookup_rows_${model}`;
const CHANGED = '_perks_changed';

interface StagedLookup extends Lookup {
  /** The temporary table of its keys now. */
  table: string;
  /** Whether the previous build kept its keys (else the model is built whole). */
  previous: boolean;
  /**
   * Its model has the rows it had at the previous build (model-versions.ts): its keys are the previous build's,
   * copied, not hashed again, and no interval is dirty for it.
   */
  unchanged: boolean;
}

export class IncrementalModels {
  /** The state each incremental model is built from in this build (written with the warehouse). */
  readonly states = new Map<string, ModelState>();
  /** The intervals each model built by intervals in this build replaced (absent: built whole, or not yet). */
  private readonly rebuilt = new Map<string, Set<string>>();
  /** The months each model holds once built in this build (the summary's count, the month folder's files). */
  private readonly held = new Map<string, readonly string[]>();
  /**
   * Each upstream model's fingerprint (by table and group column) once computed in this build: a table does not
   * change once built, and two marts read the same ones (stg_orders, stg_redemption_stats).
   */
  private readonly fingerprints = new Map<string, Record<string, string>>();
  /**
   * Models built by intervals that a model built by users reads (by-user.ts), with its group and user columns:
   * when one replaces intervals, the users of the rows that changed are kept (changedUsers).
   */
  private readonly watched = new Map<string, { group: string; user: string }>();
  /** The temporary table of each watched model's changed users in this build (`g`, `u` as text). */
  private readonly changed = new Map<string, string>();

  constructor(
    private readonly conn: DuckDBConnection,
    private readonly outDir: string,
    /** The states of the warehouse this build started from; null: build every model whole (--full). */
    private readonly previous: Map<string, ModelState> | null,
    private readonly previousTables: Set<string>,
    /** The models that declare their intervals (`intervals:` or `incremental:`), by name. */
    private readonly intervalsOf: Map<string, Intervals>,
    /** Whether a model's rows are the ones it had at the previous build (model-versions.ts). */
    private readonly unchangedSinceLastBuild: (model: string) => boolean = () => false,
  ) {}

  /**
   * The months (`YYYY-MM`, any group) whose rows this build replaced in `model`; null when it was built whole
   * (or not by intervals): every month is new.
   */
  replacedMonths(model: string): Set<string> | null {
    const replaced = this.rebuilt.get(model);
    return replaced ? new Set([...replaced].map((interval) => interval.slice(interval.indexOf('/') + 1))) : null;
  }

  /**
   * The rows this build replaced in `model` (a predicate over alias t) and how many group-months they fill;
   * null when it was built whole (or not by intervals): every row is new.
   */
  replacedRows(model: string): { where: string; intervals: number } | null {
    const replaced = this.rebuilt.get(model);
    const iv = this.intervalsOf.get(model);
    return replaced && iv ? { where: inIntervals(iv, replaced), intervals: replaced.size } : null;
  }

  /** Keeps the users of the rows that change in `model` (built by intervals) when its intervals are replaced. */
  watchUsers(model: string, columns: { group: string; user: string }): void {
    if (this.intervalsOf.get(model) && !this.watched.has(model)) this.watched.set(model, columns);
  }

  /**
   * The users (a temporary table of `g` BIGINT, `u` VARCHAR) whose rows of `model` this build changed; null when
   * it was not built by intervals in this build (built whole, or not watched): any user may have changed.
   */
  changedUsers(model: string): { table: string } | 'none' | null {
    const replaced = this.rebuilt.get(model);
    if (!replaced) return null;
    if (replaced.size === 0) return 'none';
    const table = this.changed.get(model);
    return table ? { table } : null;
  }

  /** A model whose header says `incremental: user on …`, by its dirty users (by-user.ts). */
  async buildByUser(model: Node): Promise<IncrementalOutcome> {
    return buildByUser(
      {
        conn: this.conn,
        previous: this.previous,
        previousTables: this.previousTables,
        states: this.states,
        changedUsers: (dep) => this.changedUsers(dep),
        unchanged: (dep) => this.unchangedSinceLastBuild(dep),
      },
      model,
    );
  }

  /** The month folder's token the previous build recorded for `model` (ModelState.exported). */
  previousExport(model: string): string | undefined {
    return this.previous?.get(model)?.exported;
  }

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
        unsupported = `${relativeStreamDir(stream)} is not in group and month folders`;
        continue;
      }
      for (const [key, p] of parts) {
        current.partitions[`${stream}/${key}`] = p.fingerprint;
        files.set(`${stream}/${key}`, { ...p, stream });
      }
    }
    const before = this.previous?.get(model.name)?.inputs;
    for (const dep of modelDeps) {
      if (!inc.edges.includes(dep) || !this.intervalsOf.has(dep)) {
        current.inputs[dep] = await this.fingerprint(dep, inc.group, before?.[dep]);
        continue;
      }
      const edgesBefore = { first: before?.[edgeInput(dep, 'first')], last: before?.[edgeInput(dep, 'last')] };
      const both = await this.fingerprintWithEdges(dep, inc.group, before?.[dep], edgesBefore);
      current.inputs[dep] = both.all;
      for (const day of EDGE_DAYS) current.inputs[edgeInput(dep, day)] = both[day];
    }
    this.states.set(model.name, current);
    await this.carryLookupRows(model, current, files);
    const lookups = await this.stageLookups(model);
    let outcome: IncrementalOutcome;
    try {
      outcome = await this.decide(model, current, files, lakeDeps, modelDeps, unsupported, lookups);
    } finally {
      await this.keepLookups(model, lookups);
    }
    const months = await monthsHeld(this.conn, model.name, inc.time);
    this.held.set(model.name, months);
    return { ...outcome, intervals: { ...outcome.intervals, months: months.filter((m) => m !== NO_MONTH).length } };
  }

  /** The months (`YYYY-MM`, NO_MONTH for rows of no time) `model` holds once built in this build. */
  monthsHeld(model: string): readonly string[] | undefined {
    return this.held.get(model);
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
    const intervals = intervalsIn(current);
    const whole = this.wholeBuildReason(model, current, lakeDeps, modelDeps, unsupported, lookups);
    if (whole) return this.buildWhole(model, intervals.size, whole);

    const prev = this.previous!.get(model.name)!;
    const dirty = changedPartitions(prev, current);
    const known = [...intervals, ...intervalsIn(prev)];
    const ungrouped = dirtyFromModels(dirty, prev, current, modelDeps, inc.group, known);
    if (ungrouped) return this.buildWhole(model, intervals.size, `${ungrouped} changed (it has no ${inc.group})`);
    dirtyFromEdges(dirty, prev, current, inc.edges, new Set(known));
    for (const lookup of lookups.filter((l) => !l.unchanged))
      for (const i of await this.lookupDirty(model, lakeDeps[0], lookup, files, dirty)) dirty.add(i);
    const skipped = [...intervals].filter((i) => !dirty.has(i)).length;
    this.rebuilt.set(model.name, dirty);
    if (dirty.size === 0) return { rows: await this.count(model.name), intervals: { rebuilt: 0, skipped } };
    const reason = await this.rebuildIntervals(model, dirty, files, lakeDeps, modelDeps);
    if (reason) return this.buildWhole(model, intervals.size, reason);
    return { rows: await this.count(model.name), intervals: { rebuilt: dirty.size, skipped } };
  }

  /** Why the model must be built whole rather than by intervals; undefined when intervals will do. */
  private wholeBuildReason(
    model: Node,
    current: ModelState,
    lakeDeps: string[],
    modelDeps: string[],
    unsupported: string | undefined,
    lookups: StagedLookup[],
  ): string | undefined {
    const inc = model.header.incremental!;
    const stray = inc.edges.find((e) => !modelDeps.includes(e) || !this.intervalsOf.has(e));
    const prev = this.previous?.get(model.name);
    if (this.previous === null) return 'asked for (--full)';
    if (!prev || !this.previousTables.has(model.name)) return 'no earlier build of it';
    if (prev.sql !== current.sql) return 'its SQL changed';
    if (prev.settings !== current.settings) return 'a setting it reads changed';
    if (unsupported !== undefined) return unsupported;
    if (lookups.some((l) => !l.previous)) return 'no earlier state of its lookups';
    if (lookups.length && lakeDeps.length > 1) return 'a lookup needs one lake stream at most';
    if (stray !== undefined) return `its edges: model ${stray} is not an upstream model that declares its intervals`;
    // a model built from models matches its rows by key: the key must fix the interval (see the file's comment)
    const keyed = [inc.group, inc.time].every((c) => model.header.key!.includes(c));
    if (lakeDeps.length === 0 && !keyed) return `its key lacks ${inc.group} or ${inc.time}`;
    return undefined;
  }

  private async buildWhole(model: Node, intervals: number, why: string): Promise<IncrementalOutcome> {
    this.rebuilt.delete(model.name);
    await this.conn.run(wholeTableSql(model));
    return { rows: await this.count(model.name), intervals: { rebuilt: intervals, skipped: 0, whole: why } };
  }

  /** Replaces the dirty intervals' rows; returns why it could not (nothing replaced), or undefined. */
  private async rebuildIntervals(
    model: Node,
    dirty: Set<string>,
    files: Map<string, Partition & { stream: string }>,
    lakeDeps: string[],
    modelDeps: string[],
  ): Promise<string | undefined> {
    const inc = model.header.incremental!;
    const c = this.conn;
    const streams = lakeDeps.map((v) => v.slice('lake_'.length));
    const filesOf = (stream: string, isDirty: boolean) =>
      [...files.values()]
        .filter((p) => p.stream === stream && dirty.has(`${p.group}/${p.month}`) === isDirty)
        .flatMap((p) => p.files);
    const count = async (sql: string) => Number((await c.runAndReadAll(sql)).getRowObjectsJson()[0].n);
    try {
      await c.run(DIRTY_TABLE_SQL);
      for (const interval of dirty) {
        const [g, m] = interval.split('/');
        await c.run(DIRTY_ROW_SQL, { g, m });
      }
      for (const s of streams) await narrowLakeView(c, this.outDir, s, filesOf(s, true));
      await this.narrowModels(modelDeps, dirty, inc.edges);
      await c.run(rebuiltSql(model));
      await this.widenModels(modelDeps);
      const outside = await count(outsideSql(model));
      if (outside > 0) return 'rows of a dirty interval fell outside it (fell back to a whole build)';
      if (streams.length === 0) return await this.replace(model, dirty);
      await c.run(keysSql(model));
      // the keys against the clean group-months' files
      for (const s of streams) await narrowLakeView(c, this.outDir, s, filesOf(s, false));
      for (const view of lakeDeps) {
        const shared = await count(sharedKeysSql(model, view));
        if (shared > 0)
          return `a key of a dirty interval is also in a clean one of ${view} (fell back to a whole build)`;
      }
      return await this.replace(model, dirty);
    } finally {
      for (const s of streams) await narrowLakeView(c, this.outDir, s, 'all');
      await this.widenModels(modelDeps);
      for (const t of [DIRTY, REBUILT, KEYS]) await c.run(`DROP TABLE IF EXISTS temp.${t}`);
    }
  }

  /** The dirty intervals' rows replaced by the ones rebuilt (ranges of days: the zone maps skip the rest). */
  private async replace(model: Node, dirty: Set<string>): Promise<undefined> {
    const watch = this.watched.get(model.name);
    if (watch) await this.keepChangedUsers(model, dirty, watch);
    await this.conn.run(deleteIntervalsSql(model, dirty));
    await this.conn.run(insertRebuiltSql(model));
    return undefined;
  }

  /**
   * The users of the dirty intervals' rows that differ from the ones rebuilt (either way), before they are
   * replaced (changedUsersSql: three narrow columns; a set difference of whole rows hashed every wide column into
   * its table, ~1 CPU-s more a next day). A changed row whose 64-bit hash equals the old one's would be missed, as
   * the fingerprints would.
   */
  private async keepChangedUsers(model: Node, dirty: Set<string>, watch: { group: string; user: string }) {
    const table = `_perks_changed_users_${this.changed.size}`;
    await this.conn.run(changedUsersSql(table, model, dirty, watch));
    this.changed.set(model.name, table);
  }

  /**
   * Each upstream model that declares its intervals, seen by the model's SQL with only its dirty intervals'
   * rows (narrowedModelSql), a range of days per dirty month so the table's zone maps skip the clean months. A
   * model named in `edges` is seen from the last day of the month before each dirty month to the first day of the
   * month after.
   */
  private async narrowModels(deps: string[], dirty: Set<string>, edges: string[] = []): Promise<void> {
    const [{ d: catalog }] = (await this.conn.runAndReadAll('SELECT current_database() AS d')).getRowObjectsJson() as {
      d: string;
    }[];
    for (const dep of deps) {
      const iv = this.intervalsOf.get(dep);
      if (!iv) continue;
      await this.conn.run(narrowedModelSql(catalog, dep, iv, dirty, edges.includes(dep)));
    }
  }

  private async widenModels(deps: string[]): Promise<void> {
    for (const dep of deps) if (this.intervalsOf.has(dep)) await this.conn.run(widenedModelSql(dep));
  }

  /**
   * Each lookup model's keys as they are now: per group, the hash of the key column and of the whole row
   * (a temporary table); `previous` whether the last build kept them (lookupTable: one per model, replaced
   * whole at each build; deleting a model's rows from one shared table cost seconds at a million users).
   * A lookup model with the rows it had at the previous build is not read: its keys are the ones kept then.
   */
  private async stageLookups(model: Node): Promise<StagedLookup[]> {
    const inc = model.header.incremental!;
    const staged: StagedLookup[] = [];
    const kept = id(lookupTable(model.name));
    const sameSql = this.previous?.get(model.name)?.sql === sha(model.sql);
    await this.conn.run(`CREATE TABLE IF NOT EXISTS ${kept} (lookup VARCHAR, g BIGINT, h UBIGINT, v UBIGINT)`);
    for (const [n, lookup] of inc.lookups.entries()) {
      // another lookup of the same model (another join on the same key, header.ts): the same keys, staged once
      const same = staged.find((l) => l.model === lookup.model);
      if (same) {
        staged.push({ ...same, ...lookup });
        continue;
      }
      const table = `_perks_lookup_${n}`;
      const had = await this.conn.runAndReadAll(`SELECT count(*) AS n FROM ${kept} WHERE lookup = $lookup`, {
        lookup: lookup.model,
      });
      const previous = Number(had.getRowObjectsJson()[0].n) > 0;
      // the keys kept were hashed by this SQL's lookup (its header is in it)
      const unchanged = previous && sameSql && this.unchangedSinceLastBuild(lookup.model);
      // the key as text on both sides (the model's expression may have another integer type than the column)
      const read = lookup.reads ? `row(${[lookup.column, ...lookup.reads].map((c) => `t.${id(c)}`).join(', ')})` : 't';
      await this.conn.run(
        unchanged
          ? `CREATE OR REPLACE TEMP TABLE ${table} AS SELECT g, h, v FROM ${kept} WHERE lookup = ${str(lookup.model)}`
          : `CREATE OR REPLACE TEMP TABLE ${table} AS SELECT t.${id(inc.group)} AS g, hash(CAST(t.${id(lookup.column)} AS VARCHAR)) AS h, hash(${read}) AS v FROM ${id(lookup.model)} AS t`,
      );
      staged.push({ ...lookup, table, previous: previous || this.previous === null, unchanged });
    }
    return staged;
  }

  /** The intervals whose lake rows match a key whose lookup row was added, removed or changed. */
  private async lookupDirty(
    model: Node,
    lakeView: string | undefined,
    lookup: StagedLookup,
    files: Map<string, Partition & { stream: string }>,
    dirty: Set<string>,
  ): Promise<string[]> {
    const inc = model.header.incremental!;
    const c = this.conn;
    const old = `(SELECT g, h, v FROM ${id(lookupTable(model.name))} WHERE lookup = ${str(lookup.model)})`;
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
      if (groups.size === 0) return [];
      // a model read from the lake: the keys of the group-months of the groups with a changed key, and not
      // already dirty (indexLookupRows); a model built from models: its own rows as last built
      const stream = lakeView?.slice('lake_'.length);
      if (stream) {
        const candidates = [...files.values()].filter(
          (p) => p.stream === stream && groups.has(p.group) && !dirty.has(`${p.group}/${p.month}`),
        );
        return await this.indexLookupRows(model, lakeView!, lookup, candidates);
      }
      const r = await c.runAndReadAll(
        `SELECT DISTINCT CAST(o.${id(inc.group)} AS VARCHAR) || '/' || strftime(o.${id(inc.time)}, '%Y-%m') AS interval
         FROM ${id(model.name)} AS o SEMI JOIN ${CHANGED} AS c
           ON o.${id(inc.group)} = c.g AND hash(CAST((${lookup.expression}) AS VARCHAR)) = c.h`,
      );
      return (r.getRowObjectsJson() as { interval: string | null }[]).flatMap((row) => row.interval ?? []);
    } finally {
      if (lakeView) await narrowLakeView(c, this.outDir, lakeView.slice('lake_'.length), 'all');
      await c.run(`DROP TABLE IF EXISTS temp.${CHANGED}`);
    }
  }

  /**
   * The lookup keys of the lake rows are kept per folder (lookupRowsTable: group, folder month, the row's month,
   * the key's hash), with the fingerprint of the files they were read from (ModelState.lookupRows): only a
   * group-month whose files changed since is read again, when a key of its group changed. The rest of the lake
   * is not read to find which months hold a changed key (at 10 M orders, normalising every email cost about
   * 5 CPU-s a day). Kept while the model's SQL (its lookups) is the same; a folder whose files changed or are
   * gone loses its keys at once, so no hash outlives the lake rows it was read from (an erased user's, after
   * `perks forget`).
   */
  private async carryLookupRows(
    model: Node,
    current: ModelState,
    files: Map<string, Partition & { stream: string }>,
  ): Promise<void> {
    const prev = this.previous?.get(model.name);
    const table = lookupRowsTable(model.name);
    if (!(prev?.sql === current.sql && prev.lookupRows && this.previousTables.has(table))) {
      await this.conn.run(`DROP TABLE IF EXISTS ${id(table)}`);
      return;
    }
    current.lookupRows = {};
    const stale = new Map<string, string>();
    for (const [key, fingerprint] of Object.entries(prev.lookupRows)) {
      const folder = key.slice(key.indexOf('|') + 1);
      const p = files.get(folder);
      if (p?.fingerprint === fingerprint) current.lookupRows[key] = fingerprint;
      else if (p) stale.set(folder, `(${Number(p.group)}, DATE '${p.month}-01')`);
      else stale.set(folder, `(${Number(folder.split('/')[1])}, DATE '${folder.split('/')[2]}-01')`);
    }
    if (stale.size)
      await this.conn.run(
        `DELETE FROM ${id(table)} AS x USING (VALUES ${[...stale.values()].join(', ')}) AS s(g, pm) WHERE x.g = s.g AND x.pm = s.pm`,
      );
  }

  /**
   * The intervals (a row's `<group>/<YYYY-MM>`) of the lake group-months `candidates` whose rows hold a key of
   * CHANGED; a group-month not indexed since its files changed is read first (the lake view narrowed to its files).
   */
  private async indexLookupRows(
    model: Node,
    lakeView: string,
    lookup: StagedLookup,
    candidates: (Partition & { stream: string })[],
  ): Promise<string[]> {
    if (candidates.length === 0) return [];
    const inc = model.header.incremental!;
    const c = this.conn;
    const table = id(lookupRowsTable(model.name));
    const recorded = (this.states.get(model.name)!.lookupRows ??= {});
    const key = (p: Partition & { stream: string }) => `${lookup.model}|${p.stream}/${p.group}/${p.month}`;
    const stale = candidates.filter((p) => recorded[key(p)] !== p.fingerprint);
    await c.run(`CREATE TABLE IF NOT EXISTS ${table} (lookup VARCHAR, g BIGINT, pm DATE, m DATE, h UBIGINT)`);
    if (stale.length) {
      // groups and months come from folder names of the shape lake-partitions.ts checked (digits, YYYY-MM)
      const folders = stale.map((p) => `(${Number(p.group)}, DATE '${p.month}-01')`).join(', ');
      await c.run(
        `DELETE FROM ${table} AS x USING (VALUES ${folders}) AS s(g, pm) WHERE x.lookup = ${str(lookup.model)} AND x.g = s.g AND x.pm = s.pm`,
      );
      await narrowLakeView(
        c,
        this.outDir,
        candidates[0].stream,
        stale.flatMap((p) => p.files),
      );
      await c.run(
        `INSERT INTO ${table} SELECT DISTINCT ${str(lookup.model)}, o.${id(inc.group)}, ${folderMonth('o', partitionsOf(candidates[0].stream))},
           CAST(date_trunc('month', o.${id(inc.time)}) AS DATE), hash(CAST((${lookup.expression}) AS VARCHAR))
         FROM ${id(lakeView)} AS o`,
      );
      for (const p of stale) recorded[key(p)] = p.fingerprint;
    }
    const wanted = new Set(candidates.map((p) => `${p.group}/${p.month}`));
    const r = await c.runAndReadAll(
      `SELECT DISTINCT CAST(x.g AS VARCHAR) || '/' || strftime(x.pm, '%Y-%m') AS folder,
              CAST(x.g AS VARCHAR) || '/' || strftime(x.m, '%Y-%m') AS interval
       FROM ${table} AS x SEMI JOIN ${CHANGED} AS c ON x.g = c.g AND x.h = c.h
       WHERE x.lookup = ${str(lookup.model)}`,
    );
    return (r.getRowObjectsJson() as { folder: string; interval: string | null }[]).flatMap((row) =>
      wanted.has(row.folder) && row.interval ? [row.interval] : [],
    );
  }

  /** Keeps this build's lookup keys for the next build (in the new warehouse; as they are when none changed). */
  private async keepLookups(model: Node, lookups: StagedLookup[]): Promise<void> {
    const once = lookups.filter((l, i) => lookups.findIndex((o) => o.model === l.model) === i);
    const rows = once.map((l) => `SELECT ${str(l.model)} AS lookup, g, h, v FROM ${l.table}`);
    if (rows.length && !lookups.every((l) => l.unchanged))
      await this.conn.run(`CREATE OR REPLACE TABLE ${id(lookupTable(model.name))} AS ${rows.join(' UNION ALL ')}`);
    for (const l of lookups) await this.conn.run(`DROP TABLE IF EXISTS temp.${l.table}`);
  }

  /**
   * The count and hash of an upstream model's rows per group-month (`<group>/<YYYY-MM>`) when it declares its
   * intervals, else per group, or `*` without a group column (or for rows of no group or month).
   */
  private async fingerprint(
    table: string,
    group: string,
    before: Record<string, string> | undefined,
  ): Promise<Record<string, string>> {
    const known = this.fingerprints.get(`${table}/${group}`);
    if (known) return { ...known };
    // its rows are those the previous build hashed (the same group column: the model's own)
    const now =
      before && this.unchangedSinceLastBuild(table) ? before : await this.computeFingerprint(table, group, before);
    this.fingerprints.set(`${table}/${group}`, now);
    return { ...now };
  }

  /**
   * An `edges:` model's fingerprint (as `fingerprint`) and those of its rows on a month's first day and on its last
   * day, in one scan when neither is known yet in this build and the previous build's can be carried alike (about
   * 0.1 CPU-s a next day less than two scans); else each on its own.
   */
  private async fingerprintWithEdges(
    table: string,
    group: string,
    before: Record<string, string> | undefined,
    edgesBefore: Partial<EdgeFingerprints>,
  ): Promise<EdgeFingerprints & { all: Record<string, string> }> {
    const iv = this.intervalsOf.get(table)!;
    const replaced = this.rebuilt.get(table);
    const keptAll = !!replaced && isCarried(before);
    const keptEdges = !!replaced && isCarried(edgesBefore.first) && isCarried(edgesBefore.last);
    const separate =
      this.fingerprints.has(`${table}/${group}`) ||
      this.fingerprints.has(edgeInput(table, 'first')) ||
      (before && this.unchangedSinceLastBuild(table)) ||
      keptAll !== keptEdges ||
      iv.group !== group;
    if (separate)
      return {
        all: await this.fingerprint(table, group, before),
        ...(await this.edgeFingerprints(table, edgesBefore)),
      };
    const r = await this.conn.runAndReadAll(digestWithEdgesSql(table, iv, keptAll ? replaced : undefined));
    const rows = r.getRowObjectsJson() as { g: string; fp: string; first: string | null; last: string | null }[];
    const of = (column: 'fp' | EdgeDay, from: Record<string, string> | undefined) =>
      mergeReplaced(
        keptAll ? from : undefined,
        // a row of no group or month is in the whole fingerprint (`*`), never at an edge
        Object.fromEntries(
          rows.flatMap((row) =>
            row[column] === null || (column !== 'fp' && row.g === '*') ? [] : [[row.g, row[column]]],
          ),
        ),
        keptAll ? replaced : undefined,
      );
    const now = { all: of('fp', before), first: of('first', edgesBefore.first), last: of('last', edgesBefore.last) };
    this.fingerprints.set(`${table}/${group}`, now.all);
    for (const day of EDGE_DAYS) this.fingerprints.set(edgeInput(table, day), now[day]);
    return { all: { ...now.all }, first: { ...now.first }, last: { ...now.last } };
  }

  /**
   * An `edges:` model's count and hash of its rows on a month's first day, and of those on its last day, per
   * group-month: one scan of its rows on those days (of the intervals it replaced in this build, when it did).
   */
  private async edgeFingerprints(table: string, before: Partial<EdgeFingerprints>): Promise<EdgeFingerprints> {
    const known = this.fingerprints.get(edgeInput(table, 'first'));
    if (known) return { first: { ...known }, last: { ...this.fingerprints.get(edgeInput(table, 'last'))! } };
    const { first, last } = before;
    const kept = isCarried(first) && isCarried(last);
    let now: EdgeFingerprints;
    if (kept && this.unchangedSinceLastBuild(table)) now = { first: first, last: last };
    else {
      const iv = this.intervalsOf.get(table)!;
      const replaced = kept ? this.rebuilt.get(table) : undefined;
      const r = await this.conn.runAndReadAll(edgeDigestsSql(table, iv, replaced));
      const rows = r.getRowObjectsJson() as { day: EdgeDay; g: string; fp: string }[];
      const of = (day: EdgeDay) =>
        mergeReplaced(
          replaced ? before[day] : undefined,
          Object.fromEntries(rows.filter((row) => row.day === day).map((row) => [row.g, row.fp])),
          replaced,
        );
      now = { first: of('first'), last: of('last') };
    }
    for (const day of EDGE_DAYS) this.fingerprints.set(edgeInput(table, day), now[day]);
    return { first: { ...now.first }, last: { ...now.last } };
  }

  private async computeFingerprint(
    table: string,
    group: string,
    before: Record<string, string> | undefined,
  ): Promise<Record<string, string>> {
    const iv = this.intervalsOf.get(table);
    // A model built by intervals in this build: its other intervals' rows are the ones the last build hashed
    // (the same warehouse's), so only the intervals it replaced are hashed again (a scan of those alone).
    const replaced = this.rebuilt.get(table);
    const only = iv && replaced && isCarried(before) ? replaced : undefined;
    const cols = await this.conn.runAndReadAll(hasColumnSql(table), { group });
    const byGroup = Number(cols.getRowObjectsJson()[0].n) > 0;
    const r = await this.conn.runAndReadAll(digestSql(table, group, { iv, byGroup, replaced: only }));
    const now = Object.fromEntries(
      (r.getRowObjectsJson() as { g: string; fp: string }[]).map((row) => [row.g, row.fp]),
    );
    return only ? mergeReplaced(before, now, replaced) : now;
  }

  private async count(table: string): Promise<number> {
    const r = await this.conn.runAndReadAll(`SELECT count(*) AS n FROM ${id(table)}`);
    return Number(r.getRowObjectsJson()[0].n);
  }
}

/** The intervals (`<group>/<YYYY-MM>`) whose lake files changed since the previous build. */
function changedPartitions(prev: ModelState, current: ModelState): Set<string> {
  const dirty = new Set<string>();
  for (const key of new Set([...Object.keys(prev.partitions), ...Object.keys(current.partitions)]))
    if (prev.partitions[key] !== current.partitions[key]) dirty.add(key.slice(key.indexOf('/') + 1));
  return dirty;
}

/**
 * Adds to `dirty` the intervals an upstream model's changes dirty: its changed intervals (a model that declares
 * them), else every interval `known` (now or at the previous build) of a group it changed in. Returns the first
 * upstream model that changed without a group column (the model is then built whole), else undefined.
 */
function dirtyFromModels(
  dirty: Set<string>,
  prev: ModelState,
  current: ModelState,
  modelDeps: string[],
  group: string,
  known: string[],
): string | undefined {
  for (const dep of modelDeps) {
    const before = prev.inputs[dep] ?? {};
    const now = current.inputs[dep];
    // keys: a group's interval (`<group>/<YYYY-MM>`) of a model that declares its intervals, else a group
    for (const key of new Set([...Object.keys(before), ...Object.keys(now)])) {
      if (before[key] === now[key]) continue;
      if (key === '*') return dep;
      if (key.includes('/')) dirty.add(key);
      else for (const interval of known) if (interval.startsWith(`${key}/`)) dirty.add(interval);
    }
  }
  return undefined;
}

/** A month's edge days an `edges:` model's rows are hashed on apart: a change on one dirties the month beside it. */
const EDGE_DAYS = ['first', 'last'] as const;
type EdgeDay = (typeof EDGE_DAYS)[number];

/** An `edges:` model's fingerprints of its rows on a month's first day and on its last day. */
type EdgeFingerprints = Record<EdgeDay, Record<string, string>>;

/** Whether a previous build's fingerprint is kept per group-month, so that its intervals not replaced carry over. */
function isCarried(before: Record<string, string> | undefined): before is Record<string, string> {
  return before !== undefined && !('*' in before) && Object.keys(before).every((k) => k.includes('/'));
}

/**
 * A fingerprint of the intervals `replaced` hashed again (`now`) over the previous build's (`before`): the other
 * intervals' rows are those it hashed. Without `replaced`, `now` is the whole fingerprint.
 */
function mergeReplaced(
  before: Record<string, string> | undefined,
  now: Record<string, string>,
  replaced: Set<string> | undefined,
): Record<string, string> {
  if (!replaced || !before) return now;
  return { ...Object.fromEntries(Object.entries(before).filter(([k]) => !replaced.has(k))), ...now };
}

/** The key of an `edges:` model's fingerprint of its rows on a month's first or last day (ModelState.inputs). */
const edgeInput = (model: string, day: EdgeDay): string => `${model}#${day}`;

/**
 * Adds to `dirty` the month before each group-month whose rows on its first day changed in an `edges:` model, and
 * the month after each whose rows on its last day did (only the months some state knows of: a month with no rows
 * anywhere has nothing to rebuild).
 */
function dirtyFromEdges(
  dirty: Set<string>,
  prev: ModelState,
  current: ModelState,
  edges: string[],
  known: Set<string>,
): void {
  for (const dep of edges)
    for (const day of EDGE_DAYS) {
      const before = prev.inputs[edgeInput(dep, day)] ?? {};
      const now = current.inputs[edgeInput(dep, day)] ?? {};
      for (const key of new Set([...Object.keys(before), ...Object.keys(now)])) {
        if (before[key] === now[key] || !key.includes('/')) continue;
        const [g, month] = key.split('/');
        const beside = `${g}/${monthPlus(month, day === 'first' ? -1 : 1)}`;
        if (known.has(beside)) dirty.add(beside);
      }
    }
}

/** The group-months a state knows of: its lake partitions' and its upstream models' intervals. */
function intervalsIn(state: ModelState): Set<string> {
  return new Set([
    ...Object.keys(state.partitions).map((k) => k.slice(k.indexOf('/') + 1)),
    ...Object.values(state.inputs).flatMap((byKey) => Object.keys(byKey).filter((k) => k.includes('/'))),
  ]);
}
