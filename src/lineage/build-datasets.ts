/**
 * `perks build` as datasets: every lake stream and close-record source in; every model's table out, with its
 * columns as the warehouse has them (information_schema of the new warehouse), its rows and its data tests as
 * assertions; every mart's exported file out, with the same columns, its rows and bytes. And one run per model,
 * the build's child: its inputs (the models and sources its SQL reads), its table out.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import type { BuildResult, ModelDoc, StepResult } from '../transform/index.js';
import { openWarehouse } from '../report/index.js';
import type { Dataset, DatasetIo, OutputDataset } from './events.js';
import { assertionsFacet, outputStatisticsFacet, schemaFacet, type Assertion } from './facets.js';
import { outputFile, warehouseTable, writtenFile, type Place } from './datasets.js';
import { lakeDataset } from './stage-datasets.js';
import { SOURCE_FILES } from './reads.js';

type Columns = Map<string, { name: string; type: string }[]>;

/** One model's run within the build: what it read and wrote, and when (from the build's steps' times). */
export interface ModelRun {
  model: string;
  status: 'success' | 'error';
  startedAt: Date;
  endedAt: Date;
  io: DatasetIo;
  error?: string;
}

export interface BuildDatasets {
  io: DatasetIo;
  models: ModelRun[];
}

/** The columns of every table and view of the warehouse the build left (none when it cannot be opened). */
export async function warehouseColumns(dir: string): Promise<Columns> {
  const columns: Columns = new Map();
  const wh = await openWarehouse(dir);
  try {
    const rows = await wh.all(
      `SELECT table_name, column_name, data_type FROM information_schema.columns
       WHERE table_schema = 'main' ORDER BY table_name, ordinal_position`,
    );
    for (const r of rows) {
      const table = String(r.table_name);
      if (!columns.has(table)) columns.set(table, []);
      columns.get(table)!.push({ name: String(r.column_name), type: String(r.data_type) });
    }
  } finally {
    wh.close();
  }
  return columns;
}

/**
 * A source a model reads: a lake view is the stream's folder, a close table the close record, else a model: its
 * table, or for an ephemeral model (a temporary table of the build, never stored) `temp.main.<model>`.
 */
export function sourceDataset(place: Place, name: string, ephemeral: ReadonlySet<string> = new Set()): Dataset {
  if (name.startsWith('lake_')) return lakeDataset(place, name.slice('lake_'.length));
  const file = SOURCE_FILES[name];
  if (file) return outputFile(place, file);
  return ephemeral.has(name) ? { namespace: place.warehouse, name: `temp.main.${name}` } : warehouseTable(place, name);
}

/** The data tests of each model, as assertions (a test not run, skipped after a failure, is left out). */
export function assertionsByModel(steps: readonly StepResult[]): Map<string, Assertion[]> {
  const byModel = new Map<string, Assertion[]>();
  for (const s of steps) {
    if (s.kind !== 'test' || s.status === 'skipped') continue;
    const [model, ...rest] = s.name.split(' · ');
    const assertion = rest.join(' · ');
    const column = /^(?:not_null|accepted_values)\((\w+)\)$/.exec(assertion)?.[1];
    const list = byModel.get(model) ?? [];
    list.push({
      assertion,
      success: s.status === 'success',
      ...(column ? { column } : {}),
      ...(s.status === 'warn' ? { severity: 'warn' as const } : {}),
    });
    byModel.set(model, list);
  }
  return byModel;
}

/** The build's datasets and its models' runs; `docs` the models (describeModels: layers, dependencies). */
export async function buildDatasets(
  place: Place,
  r: BuildResult,
  docs: readonly ModelDoc[],
  startedAt: Date,
): Promise<BuildDatasets> {
  const columns: Columns = r.ok
    ? await warehouseColumns(place.dir)
    : new Map<string, { name: string; type: string }[]>();
  const assertions = assertionsByModel(r.steps);
  const stepOf = new Map(r.steps.filter((s) => s.kind === 'model').map((s) => [s.name, s]));
  const ephemeral = new Set(docs.filter((d) => d.materialized === 'ephemeral').map((d) => d.name));
  const table = (doc: ModelDoc): OutputDataset | undefined => {
    // an ephemeral model's columns are the dictionary's (the build dropped its temporary table)
    const cols = ephemeral.has(doc.name)
      ? doc.columns.map(({ name, type }) => ({ name, type }))
      : columns.get(doc.name);
    if (r.ok && !cols) return undefined;
    const rows = stepOf.get(doc.name)?.rows;
    const tests = assertions.get(doc.name);
    return {
      ...sourceDataset(place, doc.name, ephemeral),
      facets: {
        ...(cols ? { schema: schemaFacet(cols) } : {}),
        ...(tests?.length ? { dataQualityAssertions: assertionsFacet(tests) } : {}),
      },
      ...(rows !== null && rows !== undefined
        ? { outputFacets: { outputStatistics: outputStatisticsFacet({ rowCount: rows }) } }
        : {}),
    };
  };
  const tables = docs.flatMap((d) => table(d) ?? []);
  const sources = [...new Set(docs.flatMap((d) => d.dependsOn).filter((n) => !docs.some((d) => d.name === n)))].sort();
  const inputs = dedupe(sources.map((s) => sourceDataset(place, s)));
  const marts = r.ok ? r.marts.map((path) => martFile(place, path, columns, r.steps)) : [];
  return {
    io: { inputs, outputs: [...tables, ...marts] },
    models: modelRuns(place, r, docs, tables, startedAt, ephemeral),
  };
}

/** A mart's export: its file (or its month files' folder), with the table's columns, its rows and bytes. */
function martFile(place: Place, path: string, columns: Columns, steps: readonly StepResult[]): OutputDataset {
  const whole = path.endsWith('.parquet') && !path.includes('*');
  const target = whole ? path : dirname(path);
  const mart =
    (whole
      ? target
          .split('/')
          .pop()!
          .replace(/\.parquet$/, '')
      : target.split('/').pop()) ?? '';
  const cols = columns.get(mart);
  const rel = relative(place.dir, target);
  const step = steps.find((s) => s.kind === 'export' && s.name === `marts/${rel.replace(/^marts\//, '')}`);
  const size = whole && existsSync(target) ? statSync(target).size : undefined;
  return {
    ...writtenFile(place, target),
    ...(cols ? { facets: { schema: schemaFacet(cols) } } : {}),
    outputFacets: { outputStatistics: outputStatisticsFacet({ rowCount: step?.rows ?? undefined, size }) },
  };
}

/** One run per model the build ran (or failed on), timed from the steps in the order they ran. */
function modelRuns(
  place: Place,
  r: BuildResult,
  docs: readonly ModelDoc[],
  tables: readonly OutputDataset[],
  startedAt: Date,
  ephemeral: ReadonlySet<string>,
): ModelRun[] {
  const runs: ModelRun[] = [];
  let at = startedAt.getTime();
  const byName = new Map(docs.map((d) => [d.name, d]));
  for (const s of r.steps) {
    const from = at;
    at += s.ms;
    const doc = byName.get(s.name);
    if (s.kind !== 'model' || !doc || (s.status !== 'success' && s.status !== 'error')) continue;
    const output = tables.find((t) => t.name === sourceDataset(place, doc.name, ephemeral).name);
    runs.push({
      model: doc.name,
      status: s.status,
      startedAt: new Date(from),
      endedAt: new Date(at),
      io: {
        inputs: dedupe(doc.dependsOn.map((d) => sourceDataset(place, d, ephemeral))),
        outputs: output ? [output] : [],
      },
      ...(s.error ? { error: s.error } : {}),
    });
  }
  return runs;
}

function dedupe(datasets: Dataset[]): Dataset[] {
  const seen = new Set<string>();
  return datasets.filter((d) => {
    const key = `${d.namespace}\n${d.name}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
