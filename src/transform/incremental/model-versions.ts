/**
 * Models kept when nothing they read has changed, as SQLMesh reuses a model version it has already built
 * (and data tests not run again: run-models.ts):
 * a table not built by intervals is kept from the previous warehouse (not rebuilt) when its SQL, the values
 * of the settings it reads, and everything it reads are as at the previous build:
 *  - a lake view: the names and sizes of the stream's files (no lake file name is ever used twice, see
 *    lake-partitions.ts) and the view's definition (the columns the files hold, promoted fields);
 *  - a close table: its rows (a count and hash; they are small);
 *  - a model: its version in this build.
 * Every model built gets a version: its previous one when what it read is unchanged (kept, recreated as a
 * view, or built by intervals with none rebuilt), else a new one, so a change anywhere upstream reaches
 * every model downstream. A model whose SQL calls something the build cannot compare (the clock, a random
 * number, a setting, a file read directly) is never kept. Models are otherwise assumed deterministic (the
 * same inputs give the same rows), which `perks build --verify-incremental` checks against a full build.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { quotedIdentifier as id, type DuckDBConnection } from '../../shared/duckdb.js';
import { settingsHash, sha, type ModelState } from './build-state.js';
import { CLOSE_TABLES } from '../sources/close-tables.js';
import { LAKE_STREAMS, lakeViewName } from '../sources/lake-streams.js';
import { parseTree, visitTree, type Node } from '../models/model-graph.js';
import { streamDir } from '../../lake/index.js';

/** Table functions whose rows follow from their arguments alone. */
const SERIES = new Set(['range', 'generate_series', 'unnest']);
const CLOCK_WORDS = new Set(['current_date', 'current_time', 'current_timestamp', 'localtime', 'localtimestamp']);

export class ModelVersions {
  /** What each model not built by intervals was built from in this build (written with the warehouse). */
  readonly states = new Map<string, ModelState>();
  private readonly versions = new Map<string, string>();
  /** Each source's fingerprint once computed in this build (a source does not change during a build). */
  private readonly sources = new Map<string, string>();
  private unstable?: Promise<Set<string>>;

  constructor(
    private readonly conn: DuckDBConnection,
    private readonly outDir: string,
    /** The states of the warehouse this build started from; null: nothing is kept (--full). */
    private readonly previous: Map<string, ModelState> | null,
    /** The tables of the previous warehouse still in this build's database. */
    private readonly previousTables: Set<string>,
    /** Unique to this build: the seed of the versions it gives. */
    private readonly buildToken: string,
  ) {}

  /**
   * Whether `model` (not built by intervals) reads what it read at the previous build: then its table, if the
   * previous warehouse has it, is kept as it is. Records the model's state either way.
   */
  async unchanged(model: Pick<Node, 'name' | 'sql' | 'dependsOn'>): Promise<boolean> {
    const reads: Record<string, string> = {};
    // what the build cannot compare (the clock, a random number, a setting, a file read directly): never kept
    let known = (await this.outsideInputs(model.sql)) === undefined;
    for (const dep of model.dependsOn) {
      const v = await this.versionOfInput(dep);
      if (v === undefined) known = false;
      else reads[dep] = v;
    }
    const current: ModelState = {
      sql: sha(model.sql),
      settings: await settingsHash(this.conn, model.sql),
      partitions: {},
      inputs: {},
      reads,
    };
    this.states.set(model.name, current);
    const prev = this.previous?.get(model.name);
    return (
      known &&
      prev?.version !== undefined &&
      prev.sql === current.sql &&
      prev.settings === current.settings &&
      sameRecords(prev.reads, reads)
    );
  }

  /** Whether the previous warehouse's table of `model` is in this build's database, to be kept. */
  hasPreviousTable(model: string): boolean {
    return this.previousTables.has(model);
  }

  /** Gives `model` its version once built: its previous one when `unchanged`, else a new one. */
  settle(model: string, unchanged: boolean): void {
    const prev = this.previous?.get(model)?.version;
    this.versions.set(model, unchanged && prev !== undefined ? prev : sha(`${this.buildToken}/${model}`));
  }

  /** Whether `model` has the version it had at the previous build (its rows are the ones it had then). */
  isUnchanged(model: string): boolean {
    const prev = this.previous?.get(model)?.version;
    return prev !== undefined && this.versions.get(model) === prev;
  }

  /** `states` (this build's, of every model) with each model's version, to be written with the warehouse. */
  stamped(states: Map<string, ModelState>): Map<string, ModelState> {
    const all = new Map([...states, ...this.states]);
    for (const [name, state] of all) state.version = this.versions.get(name);
    return all;
  }

  /**
   * The first function the SQL calls whose result does not follow from its inputs: one DuckDB says is volatile
   * or fixed only within a query (random(), now(), current_date), current_setting(), or a table function in a
   * FROM other than a series (read_parquet: files no lake view stands for); undefined when none.
   */
  private async outsideInputs(sql: string): Promise<string | undefined> {
    const scalar = new Set<string>();
    const table = new Set<string>();
    visitTree(await parseTree(this.conn, sql), (n) => {
      const fn = (n.function as { function_name?: unknown } | undefined)?.function_name;
      if (n.type === 'TABLE_FUNCTION' && typeof fn === 'string') table.add(fn.toLowerCase());
      else if (n.class === 'FUNCTION' && typeof n.function_name === 'string') scalar.add(n.function_name.toLowerCase());
      // `current_date` and its kin parse as a column named so (bound to the clock later)
      const columns = Array.isArray(n.column_names) ? (n.column_names as unknown[]) : [];
      const column = columns.length === 1 ? columns[0] : undefined;
      if (n.class === 'COLUMN_REF' && typeof column === 'string' && CLOCK_WORDS.has(column.toLowerCase()))
        scalar.add('current_timestamp');
    });
    const reads = [...table].find((f) => !SERIES.has(f));
    if (reads) return reads;
    if (scalar.has('current_timestamp')) return 'the clock';
    if (scalar.has('current_setting')) return 'current_setting';
    const unstable = await this.unstableFunctions();
    return [...scalar].sort().find((f) => unstable.has(f));
  }

  /**
   * The functions DuckDB says are volatile or fixed only within a query, read once per build: a scan of
   * duckdb_functions() costs about 25 ms, and every model and data test asks.
   */
  private unstableFunctions(): Promise<Set<string>> {
    this.unstable ??= this.conn
      .runAndReadAll(
        `SELECT DISTINCT lower(function_name) AS f FROM duckdb_functions()
         WHERE stability IN ('VOLATILE', 'CONSISTENT_WITHIN_QUERY')`,
      )
      .then((r) => new Set((r.getRowObjectsJson() as { f: string }[]).map((row) => row.f)));
    return this.unstable;
  }

  private async versionOfInput(dep: string): Promise<string | undefined> {
    const model = this.versions.get(dep);
    if (model !== undefined) return model;
    const known = this.sources.get(dep);
    if (known !== undefined) return known;
    const stream = LAKE_STREAMS.find((s) => lakeViewName(s.name) === dep);
    const fingerprint = stream
      ? await this.lakeFingerprint(dep, stream.name)
      : (CLOSE_TABLES as readonly string[]).includes(dep)
        ? await this.rowsFingerprint(dep)
        : undefined;
    if (fingerprint !== undefined) this.sources.set(dep, fingerprint);
    return fingerprint;
  }

  /** The names and sizes of the stream's files, and the view's definition. */
  private async lakeFingerprint(view: string, stream: string): Promise<string> {
    const root = streamDir(this.outDir, stream);
    let files: string[] = [];
    try {
      files = readdirSync(root, { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.parquet'))
        .map((f) => `${f}:${statSync(join(root, f)).size}`)
        .sort();
    } catch {
      // no folder yet: no files
    }
    const r = await this.conn.runAndReadAll(
      `SELECT sql FROM duckdb_views() WHERE view_name = $view AND database_name = current_database()`,
      { view },
    );
    const definition = (r.getRowObjectsJson() as { sql: string }[])[0]?.sql ?? '';
    return sha([definition, ...files].join('\n'));
  }

  /**
   * The rows' hashes in order, hashed: a bit_xor of row hashes cancels out when an even number of rows change
   * alike (month_states: every group's February provisional → final left it as it was). The tables are small.
   */
  private async rowsFingerprint(table: string): Promise<string> {
    const r = await this.conn.runAndReadAll(
      `SELECT count(*) || ':' || coalesce(md5(string_agg(CAST(hash(t) AS VARCHAR), ',' ORDER BY hash(t))), '') AS fp FROM ${id(table)} AS t`,
    );
    return String((r.getRowObjectsJson() as { fp: string }[])[0].fp);
  }
}

/**
 * After a count of models, ` (21 kept: nothing they read changed)`; of data tests, ` (40 passed at the previous
 * build: nothing they read changed)`; of marts exported, ` (3 files kept: the rows they hold are unchanged)`;
 * '' when none was kept.
 */
export function describeKept(
  steps: readonly { kind: string; kept?: boolean }[],
  kind: 'model' | 'test' | 'export',
): string {
  const kept = steps.filter((s) => s.kind === kind && s.kept).length;
  if (!kept) return '';
  if (kind === 'export') return ` (${kept} ${kept === 1 ? 'file' : 'files'} kept: the rows they hold are unchanged)`;
  return kind === 'model'
    ? ` (${kept} kept: nothing they read changed)`
    : ` (${kept} passed at the previous build: nothing they read changed)`;
}

function sameRecords(a: Record<string, string> | undefined, b: Record<string, string>): boolean {
  if (!a) return false;
  const keys = Object.keys(b);
  return Object.keys(a).length === keys.length && keys.every((k) => a[k] === b[k]);
}
