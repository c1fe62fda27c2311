import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { lakeColumns, openPartitionWrite, UnsafePathError, withLakeConnection } from '../../src/lake/index.js';
import { Interaction, OfferListItem, Order, UserCredit } from '../../src/resources/index.js';
import { filesUnder } from '../support/files.js';
import { tempOut } from '../support/scratch.js';
import { readStream } from './helpers.js';

const extractedAt = new Date('2026-11-03T04:05:06.789Z');
const orders = (ids: number[], face = '12.34') =>
  ids.map((id) =>
    Order.parse({
      order_id: id,
      order_status: 'complete',
      email: `u${id}@example.com`,
      face_value: face,
      order_credit: 0.66,
      perk_id: '7',
    }),
  );

async function land(
  outDir: string,
  records: object[],
  partition = { organisation_group_id: '11', order_date: '2026-11-02' },
  runId = 'run-1',
) {
  const writer = await openPartitionWrite({
    outDir,
    stream: 'orders',
    partition,
    columns: lakeColumns(Order),
    runId,
    extractedAt,
  });
  await writer.append(records);
  return writer.commit();
}

describe('a partition write', () => {
  test('reads back through the Hive glob with the exact values and declared types', async () => {
    const out = tempOut();
    const result = await land(out, orders([1, 2]));
    expect(result).toMatchObject({ rows: 2, files: 1 });
    expect(result.bytes).toBeGreaterThan(0);
    const { rows, types } = await readStream(out, 'orders', 'order_id');
    expect(types).toMatchObject({
      order_id: 'BIGINT',
      perk_id: 'BIGINT',
      face_value: 'DECIMAL(18,2)',
      email: 'VARCHAR',
      _extracted_at: 'TIMESTAMP WITH TIME ZONE',
      _run_id: 'VARCHAR',
    });
    expect(rows[0]).toMatchObject({
      order_id: '1',
      perk_id: '7',
      face_value: '12.34',
      order_credit: '0.66',
      email: 'u1@example.com',
      organisation_group_id: '11',
      order_date: '2026-11-02',
      _run_id: 'run-1',
      _extracted_at: '2026-11-03 04:05:06.789+00',
    });
    expect(rows.map((r) => r.order_id)).toEqual(['1', '2']);
  });

  test('money is exact DECIMAL: 12.34 + 0.66 sums to exactly 13.00', async () => {
    const out = tempOut();
    await land(out, orders([1]));
    const sum = await withLakeConnection(async (c) =>
      (
        await c.runAndReadAll(`SELECT (sum(face_value) + sum(order_credit))::VARCHAR FROM read_parquet($g)`, {
          g: join(out, 'lake/orders/**/*.parquet'),
        })
      ).getRows(),
    );
    expect(sum).toEqual([['13.00']]);
  });

  test('partition values live in the path only, not inside the file', async () => {
    const out = tempOut();
    const records = [Interaction.parse({ id: 5, organisation_group_id: 11, interaction_details: { a: 1 } })];
    const writer = await openPartitionWrite({
      outDir: out,
      stream: 'interactions',
      partition: { organisation_group_id: '11', _snapshot_date: '2026-11-02' },
      columns: lakeColumns(Interaction),
      runId: 'run-1',
      extractedAt,
    });
    await writer.append(records);
    const result = await writer.commit();
    expect(result.unknownFields).toEqual({});
    const names = await withLakeConnection(async (c) =>
      (await c.runAndReadAll(`SELECT name FROM parquet_schema($f)`, { f: result.path })).getRows().map((r) => r[0]),
    );
    expect(names).not.toContain('organisation_group_id');
    expect((await readStream(out, 'interactions', 'id')).rows[0]).toMatchObject({
      organisation_group_id: '11',
      interaction_details: '{"a":1}',
    });
  });

  test('nested offers and credit land as STRUCT and LIST values, unknown keys dropped and counted', async () => {
    const out = tempOut();
    const offer = OfferListItem.parse({
      id: 9,
      title: 'Ten off',
      start_date: '2026-01-02 03:04:05',
      redemption_online: 1,
      new_top: 'x',
      Title: 'not the title',
      collections: [
        { id: '1', name: 'Food', colour: 'red' },
        { id: 2, name: null },
      ],
      type: { id: 3, trackable: 0, voucher_code: 'ABC', novel: true },
    });
    const writer = await openPartitionWrite({
      outDir: out,
      stream: 'offers',
      partition: { _snapshot_date: '2026-11-02' },
      columns: lakeColumns(OfferListItem),
      runId: 'r',
      extractedAt,
    });
    await writer.append([offer]);
    const result = await writer.commit();
    expect(result.unknownFields).toEqual({ new_top: 1, Title: 1, 'collections[].colour': 1, 'type.novel': 1 });
    const { rows, types } = await readStream(out, 'offers', 'id');
    expect(types.collections).toBe('STRUCT("id" BIGINT, "name" VARCHAR)[]');
    expect(rows[0]).toMatchObject({
      title: 'Ten off',
      start_date: '2026-01-02 03:04:05+00',
      redemption_online: true,
      collections: [
        { id: '1', name: 'Food' },
        { id: '2', name: null },
      ],
      type: { id: '3', trackable: false, voucher_code: 'ABC', perk_id: null },
    });

    const credit = UserCredit.parse({
      available: '5.50',
      credits: [{ status: 'active', amount: 10, remaining_amount: '5.5', expires_at: '2027-01-01T00:00:00Z' }],
    });
    const cw = await openPartitionWrite({
      outDir: out,
      stream: 'credit',
      partition: { organisation_group_id: '11', _snapshot_date: '2026-11-02' },
      columns: lakeColumns(UserCredit, { user_id: 'BIGINT' }),
      runId: 'r',
      extractedAt,
    });
    await cw.append([{ ...credit, user_id: 42 }]);
    await cw.commit();
    const c = await readStream(out, 'credit', 'user_id');
    expect(c.rows[0]).toMatchObject({
      user_id: '42',
      available: '5.50',
      credits: [
        {
          status: 'active',
          amount: '10.00',
          remaining_amount: '5.50',
          expires_at: '2027-01-01 00:00:00+00',
          created_at: null,
        },
      ],
    });
  });

  test('with an _extra column, every undeclared key lands in it as JSON at its path (inside structs and lists too), and the fields seen are counted with their JSON types', async () => {
    const out = tempOut();
    const offer = (id: number, more: object) =>
      OfferListItem.parse({ id, title: `Offer ${id}`, collections: [{ id: 1 }, { id: 2 }], type: { id: 3 }, ...more });
    const writer = await openPartitionWrite({
      outDir: out,
      stream: 'offers',
      partition: { _snapshot_date: '2026-11-02' },
      columns: lakeColumns(OfferListItem, { _extra: 'JSON' }),
      runId: 'r',
      extractedAt,
    });
    await writer.append([
      offer(1, {
        tax: 1.5,
        _extra: 'a key of that name',
        type: { id: 3, novel: { deep: [1, 2] } },
        collections: [{ id: 1 }, { id: 2, colour: 'red' }],
      }),
      offer(2, { tax: '1.50' }),
      offer(3, {}),
    ]);
    const result = await writer.commit();
    expect(result.unknownFields).toEqual({ tax: 2, _extra: 1, 'type.novel': 1, 'collections[].colour': 1 });
    expect(result.fields.tax).toEqual({ declared: false, count: 2, types: { number: 1, string: 1 } });
    expect(result.fields.title).toEqual({ declared: true, count: 3, types: { string: 3 } });
    expect(result.fields['type.id']).toEqual({ declared: true, count: 3, types: { number: 3 } });
    expect(result.fields['collections[]']).toEqual({ declared: true, count: 6, types: { object: 6 } });
    const { rows } = await readStream(out, 'offers', 'id');
    const typed = await withLakeConnection(async (c) =>
      (
        await c.runAndReadAll('SELECT DISTINCT typeof(_extra) AS t FROM read_parquet($g)', {
          g: join(out, 'lake', 'offers', '**', '*.parquet'),
        })
      ).getRowObjectsJS(),
    );
    expect(typed).toEqual([{ t: 'JSON' }]);
    expect(rows.map((r) => (r._extra === null ? null : JSON.parse(r._extra as string)))).toEqual([
      {
        tax: 1.5,
        _extra: 'a key of that name',
        type: { novel: { deep: [1, 2] } },
        collections: [null, { colour: 'red' }],
      },
      { tax: '1.50' },
      null,
    ]);
    expect(rows[0]).toMatchObject({ title: 'Offer 1', type: { id: '3' } });
  });

  test('awkward text lands: quotes, newlines, NUL, emoji, a literal \\ud800; a cut emoji becomes U+FFFD', async () => {
    const out = tempOut();
    const names = ['say "hi"\nnext line', 'nul \u0000 char', 'emoji 😀', 'literal \\ud800 text', 'cut \ud83d emoji'];
    await land(
      out,
      names.map((first_name, i) => ({ order_id: i, first_name })),
    );
    const { rows } = await readStream(out, 'orders', 'order_id');
    expect(rows.map((r) => r.first_name)).toEqual([...names.slice(0, 4), 'cut \ufffd emoji']);
  });

  test('re-writing a partition replaces it: no key twice, one file, under a name no file had before', async () => {
    const out = tempOut();
    const first = await land(out, orders([1, 2, 3]));
    const second = await land(out, orders([2, 3, 4], '20.00'), undefined, 'run-2');
    expect(second.path).not.toBe(first.path);
    const { rows } = await readStream(out, 'orders', 'order_id');
    expect(rows.map((r) => [r.order_id, r.face_value, r._run_id])).toEqual([
      ['2', '20.00', 'run-2'],
      ['3', '20.00', 'run-2'],
      ['4', '20.00', 'run-2'],
    ]);
    // The journal (docs/analysts.md) names the switch of the second file for the first while it happens.
    expect(filesUnder(join(out, 'lake'))).toEqual([
      '_compaction.json',
      expect.stringMatching(/^orders\/organisation_group_id=11\/order_date=2026-11-02\/part\.v[0-9a-f]{12}\.parquet$/),
    ]);
    expect(second.path.endsWith(filesUnder(join(out, 'lake'))[1])).toBe(true);
  });

  test('a re-extracted window with no rows leaves an empty partition, not the old rows', async () => {
    const out = tempOut();
    await land(out, orders([1]));
    expect((await land(out, [])).rows).toBe(0);
    expect((await readStream(out, 'orders', 'order_id')).rows).toEqual([]);
  });

  test('an aborted write leaves the previous partition intact and no temporary file', async () => {
    const out = tempOut();
    const { path } = await land(out, orders([1, 2]));
    const writer = await openPartitionWrite({
      outDir: out,
      stream: 'orders',
      partition: { organisation_group_id: '11', order_date: '2026-11-02' },
      columns: lakeColumns(Order),
      runId: 'run-2',
      extractedAt,
    });
    await writer.append(orders([7, 8, 9]));
    await writer.abort();
    await writer.abort();
    expect((await readStream(out, 'orders', 'order_id')).rows.map((r) => r.order_id)).toEqual(['1', '2']);
    expect(filesUnder(out).map((f) => join(out, f))).toEqual([path]);
  });

  test('a commit that fails leaves the previous partition intact and no temporary file', async () => {
    const out = tempOut();
    const { path } = await land(out, orders([1]));
    await expect(land(out, [{ order_id: 'not a number' }], undefined, 'run-2')).rejects.toThrow();
    expect((await readStream(out, 'orders', 'order_id')).rows.map((r) => [r.order_id, r._run_id])).toEqual([
      ['1', 'run-1'],
    ]);
    expect(filesUnder(out).map((f) => join(out, f))).toEqual([path]);
  });

  test('append mode adds a file per commit beside the existing ones', async () => {
    const out = tempOut();
    for (const ids of [[1], [2]]) {
      const w = await openPartitionWrite({
        outDir: out,
        stream: 'orders',
        partition: { organisation_group_id: '11', order_date: '2026-11-02' },
        columns: lakeColumns(Order),
        runId: 'run-1',
        extractedAt,
        mode: 'append',
      });
      await w.append(orders(ids));
      await w.commit();
    }
    expect(await readdir(join(out, 'lake/orders/organisation_group_id=11/order_date=2026-11-02'))).toEqual([
      'part-run-1-0.parquet',
      'part-run-1-1.parquet',
    ]);
    expect((await readStream(out, 'orders', 'order_id')).rows.map((r) => r.order_id)).toEqual(['1', '2']);
  });

  test('pages appended one by one land in order, across many pages', async () => {
    const out = tempOut();
    const writer = await openPartitionWrite({
      outDir: out,
      stream: 'orders',
      partition: { organisation_group_id: '1', order_date: '2026-11-02' },
      columns: lakeColumns(Order),
      runId: 'r',
      extractedAt,
    });
    for (let page = 0; page < 300; page += 1)
      await writer.append(orders(Array.from({ length: 100 }, (_, i) => page * 100 + i)));
    expect((await writer.commit()).rows).toBe(30_000);
    const stats = await withLakeConnection(async (c) =>
      (
        await c.runAndReadAll(
          `SELECT count(DISTINCT order_id), min(order_id), max(order_id), sum(face_value)::VARCHAR FROM read_parquet($g)`,
          { g: join(out, 'lake/orders/**/*.parquet') },
        )
      ).getRowsJson(),
    );
    expect(stats).toEqual([['30000', '0', '29999', '370200.00']]);
  });

  test('appends that are not awaited one by one still land every row once', async () => {
    const out = tempOut();
    const writer = await openPartitionWrite({
      outDir: out,
      stream: 'orders',
      partition: { d: '1' },
      columns: lakeColumns(Order),
      runId: 'r',
      extractedAt,
    });
    const pad = 'x'.repeat(300);
    await Promise.all(
      Array.from({ length: 8 }, (_, page) =>
        writer.append(Array.from({ length: 5_000 }, (_, i) => ({ order_id: page * 5_000 + i, offer: pad }))),
      ),
    );
    expect((await writer.commit()).rows).toBe(40_000);
    const stats = await withLakeConnection(async (c) =>
      (
        await c.runAndReadAll(`SELECT count(*), count(DISTINCT order_id) FROM read_parquet($g)`, {
          g: join(out, 'lake/orders/**/*.parquet'),
        })
      ).getRowsJson(),
    );
    expect(stats).toEqual([['40000', '40000']]);
  });

  test.each([['../x'], ['..'], ['a/b'], ['a\0b'], [''], ['.hidden'], ['a\\b'], ['x=y'], ['%2e%2e']])(
    'the hostile partition value %j is refused',
    async (value) => {
      const out = tempOut();
      await expect(land(out, orders([1]), { organisation_group_id: value, order_date: '2026-11-02' })).rejects.toThrow(
        UnsafePathError,
      );
      expect(filesUnder(out)).toEqual([]);
    },
  );

  test('hostile stream names, partition keys and run ids are refused too', async () => {
    const out = tempOut();
    const base = {
      outDir: out,
      stream: 'orders',
      partition: { d: '2026-11-02' },
      columns: lakeColumns(Order),
      runId: 'r',
      extractedAt,
    };
    await expect(openPartitionWrite({ ...base, stream: '../orders' })).rejects.toThrow(UnsafePathError);
    await expect(openPartitionWrite({ ...base, partition: { '../k': '1' } })).rejects.toThrow(UnsafePathError);
    await expect(openPartitionWrite({ ...base, runId: '../../x' })).rejects.toThrow(UnsafePathError);
  });
});
