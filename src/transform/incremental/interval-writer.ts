/**
 * Running a build by intervals on the warehouse's connection (incremental.ts decides, interval-sql.ts writes the
 * statements): a model built whole, or its dirty intervals rebuilt from their own inputs, checked and replaced;
 * and what this build replaced, recorded for those who read it next (the fingerprints of a model downstream, the
 * month folders, a model built by users and the users whose rows changed).
 */
import { quotedIdentifier as id, type DuckDBConnection } from '../../shared/duckdb.js';
import type { Intervals } from '../models/header.js';
import type { Node } from '../models/model-graph.js';
import { narrowLakeView } from '../sources/lake-views.js';
import type { IncrementalOutcome } from './outcome.js';
import {
  changedUsersSql,
  deleteIntervalsSql,
  DIRTY,
  DIRTY_ROW_SQL,
  DIRTY_TABLE_SQL,
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
import type { LakeFile } from './lake-files.js';

export class IntervalWriter {
  /** The intervals each model built by intervals in this build replaced (absent: built whole, or not yet). */
  private readonly rebuilt = new Map<string, Set<string>>();
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
    /** The models that declare their intervals (`intervals:` or `incremental:`), by name. */
    private readonly intervalsOf: Map<string, Intervals>,
  ) {}

  /** The intervals `model` replaced in this build; undefined when built whole (or not by intervals, or not yet). */
  replaced(model: string): Set<string> | undefined {
    return this.rebuilt.get(model);
  }

  /** Records the intervals `model` replaces in this build (before they are replaced). */
  record(model: string, dirty: Set<string>): void {
    this.rebuilt.set(model, dirty);
  }

  /** Keeps the users of the rows that change in `model` (built by intervals) when its intervals are replaced. */
  watch(model: string, columns: { group: string; user: string }): void {
    if (this.intervalsOf.get(model) && !this.watched.has(model)) this.watched.set(model, columns);
  }

  /** The users whose rows of `model` this build changed (IncrementalModels.changedUsers). */
  changedUsers(model: string): { table: string } | 'none' | null {
    const replaced = this.rebuilt.get(model);
    if (!replaced) return null;
    if (replaced.size === 0) return 'none';
    const table = this.changed.get(model);
    return table ? { table } : null;
  }

  async buildWhole(model: Node, intervals: number, why: string): Promise<IncrementalOutcome> {
    this.rebuilt.delete(model.name);
    await this.conn.run(wholeTableSql(model));
    return { rows: await this.count(model.name), intervals: { rebuilt: intervals, skipped: 0, whole: why } };
  }

  /** Replaces the dirty intervals' rows; returns why it could not (nothing replaced), or undefined. */
  async rebuild(
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

  async count(table: string): Promise<number> {
    const r = await this.conn.runAndReadAll(`SELECT count(*) AS n FROM ${id(table)}`);
    return Number(r.getRowObjectsJson()[0].n);
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
}
