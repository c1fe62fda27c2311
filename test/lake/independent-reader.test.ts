import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { join, relative, sep } from 'node:path';
import { expect, test } from 'vitest';
import { lakeColumns, openPartitionWrite, withLakeConnection } from '../../src/lake/index.js';
import { Interaction, OfferListItem, Order } from '../../src/resources/index.js';
import { filesUnder } from '../support/files.js';
import { tempOut } from '../support/scratch.js';

/** One canonical form for both readers: bigint as text, dates as ISO, absent as null, JSON parsed. */
function canonical(value: unknown, jsonKeys: string[] = [], key = ''): unknown {
  if (value === undefined || value === null) return null;
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'string' && jsonKeys.includes(key)) return JSON.parse(value);
  if (Array.isArray(value)) return value.map((v) => canonical(v));
  if (typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, canonical(v, jsonKeys, k)]),
    );
  }
  return value;
}

async function viaDuckDB(outDir: string, stream: string, jsonKeys: string[]) {
  return withLakeConnection(async (c) => {
    const reader = await c.runAndReadAll(
      `SELECT * FROM read_parquet($g, hive_partitioning = true, union_by_name = true)`,
      { g: join(outDir, 'lake', stream, '**', '*.parquet') },
    );
    return reader.getRowObjectsJS().map((r) => canonical(r, jsonKeys));
  });
}

/** hyparquet reads each file; the Hive path supplies the partition columns, as text. */
async function viaHyparquet(
  outDir: string,
  stream: string,
  jsonKeys: string[],
  partitionTypes: Record<string, (s: string) => unknown>,
) {
  const root = join(outDir, 'lake', stream);
  const rows: unknown[] = [];
  for (const file of filesUnder(root).filter((f) => f.endsWith('.parquet'))) {
    const partition = Object.fromEntries(
      relative(root, join(root, file))
        .split(sep)
        .slice(0, -1)
        .map((seg) => seg.split('='))
        .map(([k, v]) => [k, partitionTypes[k](v)]),
    );
    const records = await parquetReadObjects({ file: await asyncBufferFromFile(join(root, file)), compressors });
    for (const record of records) rows.push(canonical({ ...record, ...partition }, jsonKeys));
  }
  return rows;
}

const byKey = (key: string) => (a: unknown, b: unknown) =>
  String((a as Record<string, unknown>)[key]).localeCompare(String((b as Record<string, unknown>)[key]));

test('the lake reads back with an independent Parquet reader (hyparquet) to the same rows as DuckDB', async () => {
  const out = tempOut();
  const extractedAt = new Date('2026-11-03T00:00:00Z');
  const land = async (
    stream: string,
    schema: Parameters<typeof lakeColumns>[0],
    partition: Record<string, string>,
    records: object[],
  ) => {
    const w = await openPartitionWrite({
      outDir: out,
      stream,
      partition,
      columns: lakeColumns(schema),
      runId: 'r1',
      extractedAt,
    });
    await w.append(records);
    await w.commit();
  };
  for (const group of ['11', '12']) {
    await land('orders', Order, { organisation_group_id: group, order_date: '2026-11-02' }, [
      Order.parse({
        order_id: Number(group) * 10,
        face_value: '12.34',
        order_credit: 0.66,
        first_name: 'Zoë "Q"\nline',
        perk_id: null,
      }),
      Order.parse({ order_id: Number(group) * 10 + 1, face_value: 99999999.99, order_status: 'refunded' }),
    ]);
  }
  await land('interactions', Interaction, { organisation_group_id: '11', _snapshot_date: '2026-11-02' }, [
    Interaction.parse({
      id: 1,
      interaction_id: 77,
      interaction_at: '2026-11-01 10:11:12',
      interaction_details: { amount: 1.5, tags: ['a'], nested: { ok: true } },
    }),
    Interaction.parse({ id: 2, interaction_details: null }),
  ]);
  await land('offers', OfferListItem, { _snapshot_date: '2026-11-02' }, [
    OfferListItem.parse({ id: 3, collections: [{ id: 1, name: 'Food' }], type: { id: 4, trackable: 1 } }),
    OfferListItem.parse({ id: 4, collections: [] }),
  ]);

  const asDate = (s: string) => `${s}T00:00:00.000Z`;
  const cases: { stream: string; key: string; json: string[]; partitions: Record<string, (s: string) => unknown> }[] = [
    {
      stream: 'orders',
      key: 'order_id',
      json: [],
      partitions: { organisation_group_id: (s: string) => s, order_date: asDate },
    },
    {
      stream: 'interactions',
      key: 'id',
      json: ['interaction_details'],
      partitions: { organisation_group_id: (s: string) => s, _snapshot_date: asDate },
    },
    { stream: 'offers', key: 'id', json: [], partitions: { _snapshot_date: asDate } },
  ];
  for (const c of cases) {
    const duck = (await viaDuckDB(out, c.stream, c.json)).sort(byKey(c.key));
    const hy = (await viaHyparquet(out, c.stream, c.json, c.partitions)).sort(byKey(c.key));
    expect(duck.length).toBeGreaterThan(0);
    expect(hy).toEqual(duck);
  }
});
