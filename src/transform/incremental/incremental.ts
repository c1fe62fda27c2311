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
import { quotedIdentifier as id, type DuckDBConnection } from '../../shared/duckdb.js';
import type { Intervals } from '../models/header.js';
import type { Node } from '../models/model-graph.js';
import { LAKE_STREAMS, lakeViewName } from '../sources/lake-streams.js';
import { narrowLakeView } from '../sources/lake-views.js';
import { settingsHash, sha, type ModelState } from './build-state.js';
import { buildByUser } from './by-user.js';
import {
  changedPartitions,
  dirtyFromEdges,
  dirtyFromModels,
  intervalsIn,
  wholeBuildReason,
  type ModelInputs,
} from './dirty-intervals.js';
import { Fingerprints } from './fingerprints.js';
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
  narrowedModelSql,
  outsideSql,
  REBUILT,
  rebuiltSql,
  sharedKeysSql,
  wholeTableSql,
  widenedModelSql,
} from './interval-sql.js';
import { lakeFiles, type LakeFile } from './lake-files.js';
import { Lookups, type StagedLookup } from './lookups.js';
import { monthsHeld, NO_MONTH } from './month-range.js';

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

/**
 * The engine a build runs its incremental models through: the fingerprints of upstream models (fingerprints.ts),
 * the lookups (lookups.ts) and which intervals are dirty (dirty-intervals.ts) are decided apart; here, the model
 * is built whole or its dirty intervals rebuilt, and what was replaced recorded.
 */
export class IncrementalModels {
  /** The state each incremental model is built from in this build (written with the warehouse). */
  readonly states = new Map<string, ModelState>();
  /** The intervals each model built by intervals in this build replaced (absent: built whole, or not yet). */
  private readonly rebuilt = new Map<string, Set<string>>();
  /** The months each model holds once built in this build (the summary's count, the month folder's files). */
  private readonly held = new Map<string, readonly string[]>();
  /**
   * Models built by intervals that a model built by users reads (by-user.ts), with its group and user columns:
   * when one replaces intervals, the users of the rows that changed are kept (changedUsers).
   */
  private readonly watched = new Map<string, { group: string; user: string }>();
  /** The temporary table of each watched model's changed users in this build (`g`, `u` as text). */
  private readonly changed = new Map<string, string>();
  private readonly fingerprints: Fingerprints;
  private readonly lookups: Lookups;

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
  ) {
    this.fingerprints = new Fingerprints(conn, intervalsOf, unchangedSinceLastBuild, (m) => this.rebuilt.get(m));
    this.lookups = new Lookups(conn, outDir, previous, previousTables, unchangedSinceLastBuild);
  }

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
    const settings = await settingsHash(this.conn, model.sql);
    const lake = lakeFiles(this.outDir, lakeDeps);
    const current: ModelState = { sql: sha(model.sql), settings, partitions: lake.partitions, inputs: {} };
    current.inputs = await this.fingerprints.inputs(inc, modelDeps, this.previous?.get(model.name)?.inputs);
    this.states.set(model.name, current);
    await this.lookups.carry(model, current, lake.files);
    const lookups = await this.lookups.stage(model);
    let outcome: IncrementalOutcome;
    try {
      const inputs = { lakeDeps, modelDeps, unsupported: lake.unsupported };
      outcome = await this.decide(model, current, lake.files, inputs, lookups);
    } finally {
      await this.lookups.keep(model, lookups);
    }
    const months = await monthsHeld(this.conn, model.name, inc.time);
    this.held.set(model.name, months);
    return { ...outcome, intervals: { ...outcome.intervals, months: months.filter((m) => m !== NO_MONTH).length } };
  }

  /** The months (`YYYY-MM`, NO_MONTH for rows of no time) `model` holds once built in this build. */
  monthsHeld(model: string): readonly string[] | undefined {
    return this.held.get(model);
  }

  /** The dirty intervals decided, then rebuilt (or the whole model, and why). */
  private async decide(
    model: Node,
    current: ModelState,
    files: Map<string, LakeFile>,
    inputs: ModelInputs,
    lookups: StagedLookup[],
  ): Promise<IncrementalOutcome> {
    const inc = model.header.incremental!;
    const { lakeDeps, modelDeps } = inputs;
    const intervals = intervalsIn(current);
    const build = { previous: this.previous, previousTables: this.previousTables, intervalsOf: this.intervalsOf };
    const whole = wholeBuildReason(build, model, current, inputs, lookups);
    if (whole) return this.buildWhole(model, intervals.size, whole);

    const prev = this.previous!.get(model.name)!;
    const dirty = changedPartitions(prev, current);
    const known = [...intervals, ...intervalsIn(prev)];
    const ungrouped = dirtyFromModels(dirty, prev, current, modelDeps, known);
    if (ungrouped) return this.buildWhole(model, intervals.size, `${ungrouped} changed (it has no ${inc.group})`);
    dirtyFromEdges(dirty, prev, current, inc.edges, new Set(known));
    for (const lookup of lookups.filter((l) => !l.unchanged))
      for (const i of await this.lookups.dirty(model, current, lakeDeps[0], lookup, files, dirty)) dirty.add(i);
    const skipped = [...intervals].filter((i) => !dirty.has(i)).length;
    this.rebuilt.set(model.name, dirty);
    if (dirty.size === 0) return { rows: await this.count(model.name), intervals: { rebuilt: 0, skipped } };
    const reason = await this.rebuildIntervals(model, dirty, files, lakeDeps, modelDeps);
    if (reason) return this.buildWhole(model, intervals.size, reason);
    return { rows: await this.count(model.name), intervals: { rebuilt: dirty.size, skipped } };
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
    files: Map<string, LakeFile>,
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

  private async count(table: string): Promise<number> {
    const r = await this.conn.runAndReadAll(`SELECT count(*) AS n FROM ${id(table)}`);
    return Number(r.getRowObjectsJson()[0].n);
  }
}
