/**
 * The lookups of a model built by intervals (`lookup:` in its header: a row joined by key, e.g. a user): the
 * intervals a changed lookup row dirties, those whose rows match its key. Each lookup model's keys are kept in the
 * warehouse for the next build (lookupTable), and for a model read from the lake the keys its lake rows hold, per
 * folder (lookupRowsTable), so that the lake is not read again to find them. A dirtiness of its own, with its own
 * tables: apart from the fingerprints (fingerprints.ts) and the rebuild (interval-writer.ts).
 */
import { quotedIdentifier as id, quotedString as str, type DuckDBConnection } from '../../shared/duckdb.js';
import type { Lookup } from '../models/header.js';
import type { Node } from '../models/model-graph.js';
import { folderMonth } from '../sources/lake-partitions.js';
import { narrowLakeView } from '../sources/lake-views.js';
import { sha, type ModelState } from './build-state.js';
import { partitionsOf, type LakeFile } from './lake-files.js';

/** Each incremental model's lookup keys as last built (see stage), kept in the warehouse. */
export const lookupTable = (model: string): string => `_build_lookup_${model}`;
/**
 * A model read from the lake: the lookup keys its lake rows hold (a hash of the lookup expression) per folder
 * and month, kept in the warehouse (see indexLookupRows).
 */
export const lookupRowsTable = (model: string): string => `_build_lookup_rows_${model}`;
const CHANGED = '_perks_changed';

export interface StagedLookup extends Lookup {
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

export class Lookups {
  constructor(
    private readonly conn: DuckDBConnection,
    private readonly outDir: string,
    /** The states of the warehouse this build started from; null: build every model whole (--full). */
    private readonly previous: Map<string, ModelState> | null,
    private readonly previousTables: Set<string>,
    /** Whether a model's rows are the ones it had at the previous build (model-versions.ts). */
    private readonly unchangedSinceLastBuild: (model: string) => boolean,
  ) {}

  /**
   * Each lookup model's keys as they are now: per group, the hash of the key column and of the whole row
   * (a temporary table); `previous` whether the last build kept them (lookupTable: one per model, replaced
   * whole at each build; deleting a model's rows from one shared table cost seconds at a million users).
   * A lookup model with the rows it had at the previous build is not read: its keys are the ones kept then.
   */
  async stage(model: Node): Promise<StagedLookup[]> {
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
          : `CREATE OR REPLACE TEMP TABLE ${table} AS
               SELECT t.${id(inc.group)} AS g, hash(CAST(t.${id(lookup.column)} AS VARCHAR)) AS h, hash(${read}) AS v
               FROM ${id(lookup.model)} AS t`,
      );
      staged.push({ ...lookup, table, previous: previous || this.previous === null, unchanged });
    }
    return staged;
  }

  /**
   * The intervals whose lake rows match a key whose lookup row was added, removed or changed; `current` the
   * model's state in this build (the folders whose keys it indexed are recorded in it).
   */
  async dirty(
    model: Node,
    current: ModelState,
    lakeView: string | undefined,
    lookup: StagedLookup,
    files: Map<string, LakeFile>,
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
        return await this.indexLookupRows(model, current, lakeView!, lookup, candidates);
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
  async carry(model: Node, current: ModelState, files: Map<string, LakeFile>): Promise<void> {
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

  /** Keeps this build's lookup keys for the next build (in the new warehouse; as they are when none changed). */
  async keep(model: Node, lookups: StagedLookup[]): Promise<void> {
    const once = lookups.filter((l, i) => lookups.findIndex((o) => o.model === l.model) === i);
    const rows = once.map((l) => `SELECT ${str(l.model)} AS lookup, g, h, v FROM ${l.table}`);
    if (rows.length && !lookups.every((l) => l.unchanged))
      await this.conn.run(`CREATE OR REPLACE TABLE ${id(lookupTable(model.name))} AS ${rows.join(' UNION ALL ')}`);
    for (const l of lookups) await this.conn.run(`DROP TABLE IF EXISTS temp.${l.table}`);
  }

  /**
   * The intervals (a row's `<group>/<YYYY-MM>`) of the lake group-months `candidates` whose rows hold a key of
   * CHANGED; a group-month not indexed since its files changed is read first (the lake view narrowed to its files).
   */
  private async indexLookupRows(
    model: Node,
    current: ModelState,
    lakeView: string,
    lookup: StagedLookup,
    candidates: LakeFile[],
  ): Promise<string[]> {
    if (candidates.length === 0) return [];
    const inc = model.header.incremental!;
    const c = this.conn;
    const table = id(lookupRowsTable(model.name));
    const recorded = (current.lookupRows ??= {});
    const key = (p: LakeFile) => `${lookup.model}|${p.stream}/${p.group}/${p.month}`;
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
}
