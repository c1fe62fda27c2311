/**
 * The write-back models: every `sql/writeback/*.sql` is one SELECT giving one row per interaction to send.
 * They run here, at send time, against the published marts (`<out>/marts/<mart>.parquet`, one view per
 * file, named by the mart) and the ledger (`lake_writeback_ledger`), so "what was sent before" is always the
 * ledger as it is now.
 */
import { now } from '../shared/clock.js';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { quotedIdentifier } from '../shared/duckdb.js';
import { fileList, isoOf, type Db } from './db.js';
import { WritebackModelError, WritebackError } from './errors.js';
import { WritebackRow } from './rows.js';
import { outputAt } from '../output/index.js';

/** sql/writeback/ of this package. */
export const DEFAULT_SQL_DIR = fileURLToPath(new URL('../../sql/writeback/', import.meta.url));

export interface ModelSql {
  name: string;
  file: string;
  sql: string;
}

export function loadModels(sqlDir: string = DEFAULT_SQL_DIR): ModelSql[] {
  const files = fs.existsSync(sqlDir)
    ? fs
        .readdirSync(sqlDir)
        .filter((f) => f.endsWith('.sql'))
        .sort()
    : [];
  if (!files.length) throw new WritebackError(`no write-back models (*.sql) in ${sqlDir}`);
  return files.map((f) => {
    const file = path.join(sqlDir, f);
    // One SELECT per file; a trailing semicolon is tolerated.
    const sql = fs.readFileSync(file, 'utf8').trim().replace(/;\s*$/, '');
    return { name: path.basename(f, '.sql'), file, sql };
  });
}

/**
 * One view per published mart, so models reference marts by name: `marts/<mart>.parquet`, or a mart exported
 * by months only, its month files (`marts/<mart>/*.parquet`). Returns the mart names.
 */
export async function createMartViews(db: Db, outDir: string): Promise<string[]> {
  const dir = outputAt(outDir).marts;
  const entries = fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }) : [];
  const files = new Map<string, string[]>();
  for (const e of entries) {
    if (e.isFile() && e.name.endsWith('.parquet'))
      files.set(path.basename(e.name, '.parquet'), [path.join(dir, e.name)]);
  }
  for (const e of entries) {
    if (!e.isDirectory() || files.has(e.name)) continue;
    const months = fs.readdirSync(path.join(dir, e.name)).filter((f) => f.endsWith('.parquet'));
    if (months.length)
      files.set(
        e.name,
        months.sort().map((f) => path.join(dir, e.name, f)),
      );
  }
  const marts = [...files.keys()].sort();
  for (const name of marts)
    await db.conn.run(
      `CREATE OR REPLACE TEMP VIEW ${quotedIdentifier(name)} AS SELECT * FROM read_parquet(${fileList(files.get(name)!)})`,
    );
  return marts;
}

export interface ModelOutput {
  model: string;
  rows: WritebackRow[];
}

/** Runs every model; each row is checked, and an id produced twice is an error naming both models. */
export async function evaluateModels(
  db: Db,
  models: ModelSql[],
  marts: string[],
  evaluatedAt: Date = now(),
): Promise<ModelOutput[]> {
  // Models read "now" from the program's clock, never DuckDB's own (get_current_timestamp).
  await db.conn.run(`SET VARIABLE evaluated_at = '${evaluatedAt.toISOString()}'::TIMESTAMPTZ`);
  const seen = new Map<number, string>();
  const out: ModelOutput[] = [];
  for (const model of models) {
    let raw: Record<string, unknown>[];
    try {
      raw =
        await db.all(`SELECT interaction_id::BIGINT AS interaction_id, organisation_group_id::BIGINT AS organisation_group_id,
          identifier::VARCHAR AS identifier, identifier_value::VARCHAR AS identifier_value, kind::VARCHAR AS kind,
          interaction_type::VARCHAR AS interaction_type, ${isoOf('interaction_at::TIMESTAMPTZ')} AS interaction_at,
          interaction_details::JSON::VARCHAR AS interaction_details
        FROM (\n${model.sql}\n) AS model ORDER BY organisation_group_id, interaction_id`);
    } catch (err) {
      const detail = err instanceof Error ? err.message.split('\n')[0] : String(err);
      const hint = marts.length
        ? `marts found: ${marts.join(', ')}`
        : 'no marts in <out>/marts/: run `perks build` first';
      throw new WritebackModelError(model.name, `${detail} (${model.file}; ${hint})`, { cause: err });
    }
    const rows = raw.map((r, i) => parseRow(model, r, i));
    for (const row of rows) {
      const other = seen.get(row.interaction_id);
      if (other)
        throw new WritebackModelError(
          model.name,
          `interaction_id ${row.interaction_id} is also produced by` +
            ` ${other === model.name ? 'another row of the same model' : `model ${other}`}: ids must identify one fact`,
        );
      seen.set(row.interaction_id, model.name);
    }
    out.push({ model: model.name, rows });
  }
  return out;
}

function parseRow(model: ModelSql, r: Record<string, unknown>, index: number): WritebackRow {
  let details: unknown;
  try {
    details = typeof r.interaction_details === 'string' ? JSON.parse(r.interaction_details) : null;
  } catch {
    details = null;
  }
  const parsed = WritebackRow.safeParse({
    ...r,
    interaction_id: r.interaction_id === null ? null : Number(r.interaction_id),
    organisation_group_id: r.organisation_group_id === null ? null : Number(r.organisation_group_id),
    interaction_details: details,
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.join('.') || '(row)';
    throw new WritebackModelError(
      model.name,
      `row ${index + 1}: column ${field} ${issue.message} (value: ${JSON.stringify(r[field] ?? null).slice(0, 80)})`,
    );
  }
  return parsed.data;
}
