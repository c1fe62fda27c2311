/**
 * `perks sql --format arrow|parquet` as an analyst uses it: typed results read back by independent
 * readers (apache-arrow's IPC reader; hyparquet for Parquet) and compared, value and type, with DuckDB's
 * own answer to the same query.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import * as A from 'apache-arrow';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { baseEnv, PERKS, runCli, stderrLines } from '../support/cli.js';
import { writeFixtureLake } from './fixture-lake.js';
import { AS_OF, namesIn, query } from './helpers.js';

/** Every type the issue names: DECIMAL, DATE, TIMESTAMP (and with zone), BIGINT, lists; plus a struct, text and nulls. */
const QUERY = `SELECT organisation_group_id, month, order_currency, orders, face_value, group_revenue,
    TIMESTAMP '2026-03-31 23:59:59.123456' AS as_of, TIMESTAMPTZ '2026-03-31 22:00:00.000001+00' AS built_at,
    [orders, orders * 1000000000000] AS order_counts, CASE WHEN orders > 1 THEN NULL ELSE -12.34::DECIMAL(18,2) END AS adjustment,
    {'currency': order_currency, 'orders': orders} AS detail
  FROM revenue_monthly ORDER BY organisation_group_id, month, order_currency, order_status`;

/** DuckDB's answer, every value as text (lists as arrays of text), the canonical form both readers are held to. */
const AS_TEXT = `SELECT organisation_group_id::VARCHAR AS organisation_group_id, month::VARCHAR AS month, order_currency, orders::VARCHAR AS orders,
    face_value::VARCHAR AS face_value, group_revenue::VARCHAR AS group_revenue, strftime(as_of, '%Y-%m-%d %H:%M:%S.%f') AS as_of,
    strftime(built_at, '%Y-%m-%d %H:%M:%S.%f') AS built_at, order_counts::VARCHAR[] AS order_counts, adjustment::VARCHAR AS adjustment,
    {'currency': detail.currency, 'orders': detail.orders::VARCHAR} AS detail FROM (${QUERY})`;

let outDir: string;
let expected: Record<string, unknown>[];
let duckTypes: Record<string, string>;
const env = () => ({ PERKS_OUTPUT: outDir });

beforeAll(async () => {
  outDir = await writeFixtureLake();
  const build = await runCli(['build', '--as-of', AS_OF, '--quiet'], env());
  expect(build.code, build.stderr).toBe(0);
  const warehouse = join(outDir, 'warehouse.duckdb');
  expected = await query(warehouse, `SET TimeZone = 'UTC'; ${AS_TEXT}`);
  duckTypes = Object.fromEntries(
    (await query(warehouse, `DESCRIBE ${QUERY}`)).map((r) => [r.column_name as string, r.column_type as string]),
  );
  expect(expected.length).toBeGreaterThan(2);
}, 300_000);
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

const micros = (v: bigint) =>
  new Date(Number(v / 1000n))
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, `.${(((v % 1_000_000n) + 1_000_000n) % 1_000_000n).toString().padStart(6, '0')}`);
const decimal = (unscaled: bigint, scale: number) => {
  const s = (unscaled < 0n ? -unscaled : unscaled).toString().padStart(scale + 1, '0');
  return `${unscaled < 0n ? '-' : ''}${s.slice(0, s.length - scale)}.${s.slice(s.length - scale)}`;
};

/** One Arrow value as text, read from the column's own buffers (no lossy conversion to JS numbers). */
function arrowText(data: A.Data, i: number): unknown {
  if (!data.getValid(i)) return null;
  const t = data.type;
  if (A.DataType.isDecimal(t)) {
    const w = (data.values as Uint32Array).subarray(i * 4, i * 4 + 4);
    const big = BigInt.asIntN(
      128,
      [...w].reduce((acc, word, k) => acc | (BigInt(word) << BigInt(32 * k)), 0n),
    );
    return decimal(big, t.scale);
  }
  if (A.DataType.isTimestamp(t)) return micros((data.values as BigInt64Array)[i]);
  if (A.DataType.isDate(t)) return new Date((data.values as Int32Array)[i] * 86_400_000).toISOString().slice(0, 10);
  if (A.DataType.isInt(t) && t.bitWidth === 64) return (data.values as BigInt64Array)[i].toString();
  if (A.DataType.isList(t)) {
    const [from, to] = [data.valueOffsets[i], data.valueOffsets[i + 1]];
    return Array.from({ length: to - from }, (_, k) => arrowText(data.children[0], from + k));
  }
  if (A.DataType.isStruct(t))
    return Object.fromEntries(t.children.map((f, k) => [f.name, arrowText(data.children[k], i)]));
  return new A.Vector([data]).get(i);
}

describe('perks sql --format arrow', () => {
  test('writes an Arrow IPC stream to stdout that apache-arrow reads back with the same values and types', () => {
    const run = spawnSync(process.execPath, [PERKS, 'sql', QUERY, '--format', 'arrow'], {
      env: baseEnv(env()),
      maxBuffer: 64 << 20,
    });
    expect(run.stderr.toString()).toBe('');
    expect(run.status).toBe(0);
    const table = A.tableFromIPC(run.stdout);
    expect(table.numRows).toBe(expected.length);
    const types = Object.fromEntries(table.schema.fields.map((f) => [f.name, String(f.type)]));
    expect(types).toEqual({
      organisation_group_id: 'Int64',
      month: 'Date32<DAY>',
      order_currency: 'Utf8',
      orders: 'Int64',
      face_value: 'Decimal[38e+2]',
      group_revenue: 'Decimal[38e+2]',
      as_of: 'Timestamp<MICROSECOND>',
      built_at: 'Timestamp<MICROSECOND, UTC>',
      order_counts: 'List<Int64>',
      adjustment: 'Decimal[18e+2]',
      detail: 'Struct<{currency:Utf8, orders:Int64}>',
    });
    expect(duckTypes).toMatchObject({
      organisation_group_id: 'BIGINT',
      month: 'DATE',
      face_value: 'DECIMAL(38,2)',
      adjustment: 'DECIMAL(18,2)',
      as_of: 'TIMESTAMP',
      built_at: 'TIMESTAMP WITH TIME ZONE',
      order_counts: 'BIGINT[]',
    });
    const rows: Record<string, unknown>[] = [];
    for (const batch of table.batches) {
      for (let i = 0; i < batch.numRows; i++)
        rows.push(
          Object.fromEntries(batch.schema.fields.map((f, k) => [f.name, arrowText(batch.data.children[k], i)])),
        );
    }
    expect(rows).toEqual(expected);
  });

  test('--out FILE writes the stream to a file, says how many rows, and leaves no temporary file', async () => {
    const file = join(outDir, 'result.arrow');
    const r = await runCli(['sql', QUERY, '--format', 'arrow', '--out', file], env());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${expected.length} rows written to ${file} (arrow)\n`);
    expect(A.tableFromIPC(readFileSync(file)).numRows).toBe(expected.length);
    expect(namesIn(outDir).filter((n) => n.includes('.tmp'))).toEqual([]);
  });

  test('an empty result is a stream with the schema and no rows', () => {
    const run = spawnSync(
      process.execPath,
      [PERKS, 'sql', 'SELECT month, face_value FROM revenue_monthly WHERE false', '--format', 'arrow'],
      { env: baseEnv(env()) },
    );
    expect(run.status).toBe(0);
    const table = A.tableFromIPC(run.stdout);
    expect(table.numRows).toBe(0);
    expect(table.schema.fields.map((f) => `${f.name}:${f.type}`)).toEqual([
      'month:Date32<DAY>',
      'face_value:Decimal[38e+2]',
    ]);
  });
});

describe('perks sql --format parquet', () => {
  test('writes a Parquet file that hyparquet reads back with the same values and types', async () => {
    const file = join(outDir, 'result.parquet');
    const r = await runCli(['sql', QUERY, '--format', 'parquet', '--out', file], env());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${expected.length} rows written to ${file} (parquet)\n`);
    const buffer = await asyncBufferFromFile(file);
    const schema = Object.fromEntries((await parquetMetadataAsync(buffer)).schema.map((e) => [e.name, e]));
    expect(schema.face_value).toMatchObject({ converted_type: 'DECIMAL', precision: 38, scale: 2 });
    expect(schema.month).toMatchObject({ type: 'INT32', converted_type: 'DATE' });
    expect(schema.as_of).toMatchObject({
      type: 'INT64',
      logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MICROS' },
    });
    expect(schema.built_at).toMatchObject({
      type: 'INT64',
      logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' },
    });
    expect(schema.orders).toMatchObject({ type: 'INT64' });
    expect(schema.order_counts).toMatchObject({ converted_type: 'LIST' });

    const records = await parquetReadObjects({
      file: buffer,
      compressors,
      parsers: {
        timestampFromMicroseconds: micros,
        dateFromDays: (d: number) => new Date(d * 86_400_000).toISOString().slice(0, 10),
      },
    });
    const text = (v: unknown): unknown =>
      v === null || v === undefined ? null : typeof v === 'bigint' ? v.toString() : Array.isArray(v) ? v.map(text) : v;
    const rows = records.map((r) => ({
      ...Object.fromEntries(Object.entries(r).map(([k, v]) => [k, text(v)])),
      // hyparquet gives DECIMAL as a JS number: shown at the column's scale
      face_value: (r.face_value as number).toFixed(2),
      group_revenue: (r.group_revenue as number).toFixed(2),
      adjustment: r.adjustment === null ? null : (r.adjustment as number).toFixed(2),
      detail: {
        currency: (r.detail as { currency: unknown }).currency,
        orders: text((r.detail as { orders: unknown }).orders),
      },
    }));
    expect(rows).toEqual(expected);
  });

  test('to stdout too, when piped', () => {
    const run = spawnSync(process.execPath, [PERKS, 'sql', 'SELECT 1 AS x', '--format', 'parquet'], {
      env: baseEnv(env()),
    });
    expect(run.status).toBe(0);
    expect(run.stdout.subarray(0, 4).toString()).toBe('PAR1');
    expect(run.stdout.subarray(-4).toString()).toBe('PAR1');
  });
});

test('a binary format is refused on a terminal (util-linux `script` gives the command one): one line, exit 2', () => {
  const command = `${process.execPath} ${PERKS} sql 'SELECT 1' --format arrow`;
  const run = spawnSync('script', ['-qec', command, '/dev/null'], { env: baseEnv(env()), encoding: 'utf8' });
  expect(run.status).toBe(2);
  expect(run.stdout.trim()).toBe(
    'perks: --format=arrow writes binary data: give --out FILE, or pipe stdout into the program that reads it',
  );
});

test('bad input: one line each, exit code 2', async () => {
  const cases: [string[], RegExp][] = [
    [
      ['sql', 'EXPLAIN SELECT 1', '--format', 'parquet', '--out', 'x.parquet'],
      /^perks: --format parquet needs a SELECT as the last statement/,
    ],
    [
      ['sql', 'DELETE FROM revenue_monthly', '--format', 'arrow', '--out', 'x.arrow'],
      /^perks: the warehouse is read-only here: DELETE is refused/,
    ],
    [['sql', 'SELECT 1', '--format', 'arrow', '--out', ''], /^perks: --out is empty: give the file to write/],
    [
      ['sql', 'SELECT 1', '--format', 'parquet', '--out', '/nonexistent-dir/x.parquet'],
      /^perks: cannot write \/nonexistent-dir\/x\.parquet: ENOENT; choose another --out\n$/,
    ],
    [
      ['sql', 'SELECT 1', '--format', 'feather'],
      /^perks: --format="feather" is invalid: expected table, csv, json, arrow, parquet\n$/,
    ],
  ];
  const runs = await Promise.all(cases.map(([args]) => runCli(args, env(), { cwd: outDir })));
  runs.forEach((r, i) => {
    expect(r.code, cases[i][0].join(' ')).toBe(2);
    expect(stderrLines(r)).toHaveLength(1);
    expect(r.stderr).toMatch(cases[i][1]);
  });
  expect(namesIn(outDir).filter((n) => /^x\.|\.tmp/.test(n))).toEqual([]);
});
