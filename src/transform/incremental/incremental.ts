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
import type { DuckDBConnection } from '../../shared/duckdb.js';
import type { Intervals } from '../models/header.js';
import type { Node } from '../models/model-graph.js';
import { LAKE_STREAMS, lakeViewName } from '../sources/lake-streams.js';
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
import { inIntervals } from './interval-sql.js';
import { IntervalWriter } from './interval-writer.js';
import { lakeFiles, type LakeFile } from './lake-files.js';
import { Lookups, type StagedLookup } from './lookups.js';
import { monthsHeld, NO_MONTH } from './month-range.js';
import type { IncrementalOutcome } from './outcome.js';

export { describeIntervals, type IncrementalOutcome, type IntervalCounts } from './outcome.js';

/**
 * The engine a build runs its incremental models through; it owns its parts, one responsibility each: the
 * fingerprints of upstream models (fingerprints.ts), the lookups (lookups.ts), which intervals are dirty
 * (dirty-intervals.ts), and the rebuild with its record of what was replaced (interval-writer.ts, its SQL
 * interval-sql.ts); it says in which order they act, and answers what later steps ask of this build.
 */
export class IncrementalModels {
  /** The state each incremental model is built from in this build (written with the warehouse). */
  readonly states = new Map<string, ModelState>();
  /** The months each model holds once built in this build (the summary's count, the month folder's files). */
  private readonly held = new Map<string, readonly string[]>();
  private readonly fingerprints: Fingerprints;
  private readonly lookups: Lookups;
  private readonly writer: IntervalWriter;

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
    this.writer = new IntervalWriter(conn, outDir, intervalsOf);
    this.fingerprints = new Fingerprints(conn, intervalsOf, unchangedSinceLastBuild, (m) => this.writer.replaced(m));
    this.lookups = new Lookups(conn, outDir, previous, previousTables, unchangedSinceLastBuild);
  }

  /**
   * The months (`YYYY-MM`, any group) whose rows this build replaced in `model`; null when it was built whole
   * (or not by intervals): every month is new.
   */
  replacedMonths(model: string): Set<string> | null {
    const replaced = this.writer.replaced(model);
    return replaced ? new Set([...replaced].map((interval) => interval.slice(interval.indexOf('/') + 1))) : null;
  }

  /**
   * The rows this build replaced in `model` (a predicate over alias t) and how many group-months they fill;
   * null when it was built whole (or not by intervals): every row is new.
   */
  replacedRows(model: string): { where: string; intervals: number } | null {
    const replaced = this.writer.replaced(model);
    const iv = this.intervalsOf.get(model);
    return replaced && iv ? { where: inIntervals(iv, replaced), intervals: replaced.size } : null;
  }

  /** Keeps the users of the rows that change in `model` (built by intervals) when its intervals are replaced. */
  watchUsers(model: string, columns: { group: string; user: string }): void {
    this.writer.watch(model, columns);
  }

  /**
   * The users (a temporary table of `g` BIGINT, `u` VARCHAR) whose rows of `model` this build changed; null when
   * it was not built by intervals in this build (built whole, or not watched): any user may have changed.
   */
  changedUsers(model: string): { table: string } | 'none' | null {
    return this.writer.changedUsers(model);
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
    if (whole) return this.writer.buildWhole(model, intervals.size, whole);

    const prev = this.previous!.get(model.name)!;
    const dirty = changedPartitions(prev, current);
    const known = [...intervals, ...intervalsIn(prev)];
    const ungrouped = dirtyFromModels(dirty, prev, current, modelDeps, known);
    if (ungrouped)
      return this.writer.buildWhole(model, intervals.size, `${ungrouped} changed (it has no ${inc.group})`);
    dirtyFromEdges(dirty, prev, current, inc.edges, new Set(known));
    for (const lookup of lookups.filter((l) => !l.unchanged))
      for (const i of await this.lookups.dirty(model, current, lakeDeps[0], lookup, files, dirty)) dirty.add(i);
    const skipped = [...intervals].filter((i) => !dirty.has(i)).length;
    this.writer.record(model.name, dirty);
    if (dirty.size === 0) return { rows: await this.writer.count(model.name), intervals: { rebuilt: 0, skipped } };
    const reason = await this.writer.rebuild(model, dirty, files, lakeDeps, modelDeps);
    if (reason) return this.writer.buildWhole(model, intervals.size, reason);
    return { rows: await this.writer.count(model.name), intervals: { rebuilt: dirty.size, skipped } };
  }
}
