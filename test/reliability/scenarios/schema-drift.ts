/**
 * Schema drift over several daily runs (issue 26): the sandbox's `schemaDrift` switch makes orders carry
 * an undeclared `tax_amount` from the second day (a number) and as a string from the third, offers' `type`
 * an undeclared `redeem_limit` and credit items a `reason` from the second day, and on the third day
 * orders stop sending the declared `offer_excerpt` and offers' `type` its `voucher_code`.
 * Then: every extra is in the lake's `_extra` column, read by DuckDB as JSON (nested ones at their path,
 * in every version of the order history too); the schema history names each change with its first day;
 * and a field declared afterwards (promoted) reads typed values for the records landed before, without a call.
 */
import { join } from 'node:path';
import { extract, shiftDay, type ExtractResult } from '../../../src/extract/index.js';
import { changeLine, readSchemaHistory, withLakeConnection, type SchemaChange } from '../../../src/lake/index.js';
import type { Sandbox } from '../../../src/sandbox/index.js';
import { createLakeViews, LAKE_STREAMS } from '../../../src/transform/index.js';
import type { Config } from '../../../src/config/index.js';
import { collectStatus, judge, statusText } from '../../../src/status/index.js';
import { orgConfig, withSandbox } from '../../support/sandbox.js';
import { withScratch } from '../../support/scratch.js';
import { row, type Row, type ScenarioOptions } from '../table.js';
import { outputAt } from '../../../src/output/index.js';

const TODAY = '2026-11-22';
const noon = (day: string) => new Date(`${day}T12:00:00Z`);
const DAYS = [TODAY, shiftDay(TODAY, 1), shiftDay(TODAY, 2)];

export async function schemaDriftScenario(o: ScenarioOptions): Promise<Row[]> {
  return withSandbox({ seed: 26, today: TODAY }, (sandbox) =>
    withScratch('schema-drift', async (scratch) => {
      const out = scratch.dir();
      const config = orgConfig(sandbox, out, { PERKS_START_DATE: shiftDay(TODAY, -5) });
      const problems: string[] = [];
      const runs: (ExtractResult & { manifest: string })[] = [];
      const switches = [[], ['newField', 'nestedField'], ['typeChange', 'nestedField', 'removedField']] as const;
      for (const [i, day] of DAYS.entries()) {
        if (i > 0) sandbox.advance(1);
        sandbox.setFaults({ schemaDrift: [...switches[i]] });
        const r = await extract(config, {
          output: outputAt(out),
          now: noon(day),
          streams: ['orders', 'offers', 'credit'],
        });
        if (r.exitCode !== 0) problems.push(`run ${i + 1} exited ${r.exitCode}`);
        runs.push(r);
        o.log(
          `schema drift: run ${i + 1} (${day}): ${(r.schemaChanges ?? []).map(changeLine).join('; ') || 'no change'}`,
        );
      }
      sandbox.setFaults({ schemaDrift: [] });
      problems.push(
        ...(await checkExtras(
          out,
          runs.map((r) => r.runId),
        )),
      );
      problems.push(...(await checkHistory(out, runs)));
      problems.push(...(await checkStatus(out, config)));
      problems.push(
        ...(await checkPromotion(
          out,
          sandbox,
          runs.map((r) => r.runId),
        )),
      );
      return [
        row(
          'schema drift: fields added, retyped, removed, nested',
          runs.length,
          problems,
          `${runs.reduce((n, r) => n + (r.schemaChanges?.length ?? 0), 0)} changes named over ${runs.length} runs`,
        ),
      ];
    }),
  );
}

const glob = (out: string, stream: string) => join(out, 'lake', stream, '**', '*.parquet');

/** The one row of a query of counts, as numbers. */
async function one(sql: string, params: Record<string, string> = {}): Promise<Record<string, number>> {
  const row = await withLakeConnection(async (c) => (await c.runAndReadAll(sql, params)).getRowObjectsJS()[0]);
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)]));
}

async function checkExtras(out: string, [first, second, third]: string[]): Promise<string[]> {
  const problems: string[] = [];
  const scan = `read_parquet($g, hive_partitioning = true, union_by_name = true)`;
  // every file has the column, as JSON, whether its records carried extras or not (union_by_name never clashes)
  const types = await withLakeConnection(async (c) => {
    const r = await c.runAndReadAll(
      `SELECT DISTINCT typeof(_extra) AS t FROM read_parquet($g, union_by_name = false, filename = true)`,
      { g: glob(out, 'orders') },
    );
    return r.getRowObjectsJS().map((x) => x.t as string);
  });
  if (types.join() !== 'JSON') problems.push(`orders files type _extra as ${types.join(', ')}, not JSON`);
  const orders = await one(
    `SELECT count(*) FILTER (WHERE _run_id = $first AND _extra IS NOT NULL)::BIGINT AS before,
            count(*) FILTER (WHERE _run_id = $second)::BIGINT AS second,
            count(*) FILTER (WHERE _run_id = $second AND (_extra->'tax_amount')::DECIMAL(18,2) = round(order_total_paid * 0.2, 2)
                             AND json_type(_extra->'tax_amount') IN ('DOUBLE', 'UBIGINT', 'BIGINT'))::BIGINT AS number,
            count(*) FILTER (WHERE _run_id = $third AND json_type(_extra->'tax_amount') = 'VARCHAR'
                             AND (_extra->>'tax_amount')::DECIMAL(18,2) = round(order_total_paid * 0.2, 2))::BIGINT AS string,
            count(*) FILTER (WHERE _run_id = $third)::BIGINT AS third,
            count(*) FILTER (WHERE _run_id = $third AND offer_excerpt IS NOT NULL)::BIGINT AS excerpts
     FROM ${scan}`,
    { g: glob(out, 'orders'), first, second, third },
  );
  if (orders.before !== 0) problems.push(`${orders.before} orders of the first run carry extras`);
  if (!orders.second || orders.number !== orders.second)
    problems.push(
      `of ${orders.second} orders of the second run, ${orders.number} hold tax_amount as a number in _extra`,
    );
  if (!orders.third || orders.string !== orders.third)
    problems.push(`of ${orders.third} orders of the third run, ${orders.string} hold tax_amount as a string in _extra`);
  if (orders.excerpts) problems.push(`${orders.excerpts} orders of the third run have an offer_excerpt`);
  // the order history keeps each version's extras
  const versions = await one(
    `SELECT count(*) FILTER (WHERE _run_id <> $first AND NOT is_removed)::BIGINT AS n,
            count(*) FILTER (WHERE _run_id <> $first AND NOT is_removed AND (_extra->>'tax_amount') IS NOT NULL)::BIGINT AS kept
     FROM ${scan}`,
    { g: glob(out, 'order_versions'), first },
  );
  if (!versions.n || versions.kept !== versions.n)
    problems.push(`of ${versions.n} order versions seen after the first run, ${versions.kept} keep tax_amount`);
  // nested: inside a struct at its path; inside a list of structs, one entry per item
  const offers = await one(
    `SELECT count(*) FILTER (WHERE _run_id = $second)::BIGINT AS n,
            count(*) FILTER (WHERE _run_id = $second AND (_extra->'type'->>'redeem_limit')::BIGINT = 1 + type.id % 5)::BIGINT AS nested,
            count(*) FILTER (WHERE _run_id = $third AND type.voucher_code IS NOT NULL)::BIGINT AS codes
     FROM ${scan}`,
    { g: glob(out, 'offers'), second, third },
  );
  if (!offers.n || offers.nested !== offers.n)
    problems.push(`of ${offers.n} offers of the second run, ${offers.nested} hold type.redeem_limit in _extra`);
  if (offers.codes) problems.push(`${offers.codes} offers of the third run have a voucher code`);
  const credit = await one(
    `SELECT count(*) FILTER (WHERE _run_id <> $first AND len(credits) > 0)::BIGINT AS n,
            count(*) FILTER (WHERE _run_id <> $first AND len(credits) > 0 AND json_array_length(_extra->'credits') = len(credits)
                             AND list_distinct(CAST(json_extract_string(_extra, '$.credits[*].reason') AS VARCHAR[])) = ['welcome bonus'])::BIGINT AS items
     FROM ${scan}`,
    { g: glob(out, 'credit'), first },
  );
  if (credit.items !== credit.n)
    problems.push(`of ${credit.n} credit rows with items after the first run, ${credit.items} keep each item's reason`);
  return problems;
}

async function checkHistory(out: string, runs: (ExtractResult & { manifest: string })[]): Promise<string[]> {
  const problems: string[] = [];
  const history = await readSchemaHistory(out);
  const expect = (what: string, got: unknown, want: unknown) => {
    if (got !== want)
      problems.push(`schema history: ${what} is ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
  };
  const orders = history.streams.orders?.fields ?? {};
  expect('orders tax_amount first seen', orders.tax_amount?.first.day, DAYS[1]);
  expect('orders tax_amount declared', orders.tax_amount?.declared, false);
  expect('orders tax_amount as a number since', orders.tax_amount?.types.number?.first.day, DAYS[1]);
  expect('orders tax_amount as a string since', orders.tax_amount?.types.string?.first.day, DAYS[2]);
  expect('orders offer_excerpt absent since', orders.offer_excerpt?.absentSince?.day, DAYS[2]);
  expect('orders offer_excerpt last seen', orders.offer_excerpt?.last.day, DAYS[1]);
  const offers = history.streams.offers?.fields ?? {};
  expect('offers type.redeem_limit first seen', offers['type.redeem_limit']?.first.day, DAYS[1]);
  expect('offers type.voucher_code absent since', offers['type.voucher_code']?.absentSince?.day, DAYS[2]);
  expect('order_versions tax_amount first seen', history.streams.order_versions?.fields.tax_amount?.first.day, DAYS[1]);
  // each run names its own changes, once
  const named = (r: ExtractResult) =>
    (r.schemaChanges ?? []).map((c: SchemaChange) => `${c.stream} ${c.field} ${c.kind} ${c.day}`);
  const want = [
    [],
    [`orders tax_amount new ${DAYS[1]}`, `offers type.redeem_limit new ${DAYS[1]}`],
    [
      `orders tax_amount type ${DAYS[2]}`,
      `orders offer_excerpt absent ${DAYS[2]}`,
      `offers type.voucher_code absent ${DAYS[2]}`,
    ],
  ];
  runs.forEach((r, i) => {
    const got = named(r);
    for (const w of want[i])
      if (!got.includes(w)) problems.push(`run ${i + 1} does not name "${w}": ${got.join('; ')}`);
    if (i === 0 && got.length) problems.push(`the first run names changes: ${got.join('; ')}`);
  });
  return problems;
}

/** `perks status` names each change with its day, and the undeclared fields each stream carries now. */
async function checkStatus(out: string, config: Config): Promise<string[]> {
  const report = await collectStatus(outputAt(out), config, noon(DAYS[2]));
  const text = statusText(report, judge(report, { warnAfterHours: 26, errorAfterHours: 50 }), {
    warnAfterHours: 26,
    errorAfterHours: 50,
  });
  const want = [
    `schema: orders: field \`tax_amount\` (number) first seen ${DAYS[1]}`,
    `schema: orders: field \`tax_amount\` arrives as string since ${DAYS[2]} (was number)`,
    `schema: orders: field \`offer_excerpt\` absent since ${DAYS[2]} (declared; last seen ${DAYS[1]})`,
    `schema: offers: field \`type.voucher_code\` absent since ${DAYS[2]}`,
    `schema: offers: field \`type.redeem_limit\` (number) first seen ${DAYS[1]}`,
    'schema: orders carries 1 undeclared field, kept in _extra: tax_amount (number or string)',
  ];
  return want.filter((w) => !text.includes(w)).map((w) => `perks status does not say "${w}":\n${text}`);
}

/** `tax_amount` declared (as money) after the fact: the lake view reads it typed for the records landed before. */
async function checkPromotion(out: string, sandbox: Sandbox, [, second, third]: string[]): Promise<string[]> {
  const calls = sandbox.stats().calls;
  const promoted = LAKE_STREAMS.map((s) =>
    s.name === 'orders' || s.name === 'order_versions'
      ? { ...s, columns: [...s.columns, { name: 'tax_amount', type: 'DECIMAL(18,2)' }] }
      : s,
  );
  const got = await withLakeConnection(async (c) => {
    await createLakeViews(c, join(out, 'lake'), promoted);
    const r = await c.runAndReadAll(
      `SELECT typeof(tax_amount) AS t,
              count(*) FILTER (WHERE _run_id IN ($second, $third))::BIGINT AS n,
              count(*) FILTER (WHERE _run_id IN ($second, $third) AND tax_amount = round(order_total_paid * 0.2, 2))::BIGINT AS typed
       FROM lake_orders GROUP BY ALL`,
      { second, third },
    );
    return r.getRowObjectsJS().map((x) => ({ t: x.t as string, n: Number(x.n), typed: Number(x.typed) }));
  });
  const problems: string[] = [];
  if (got.length !== 1 || got[0].t !== 'DECIMAL(18,2)')
    problems.push(`promoted tax_amount reads as ${got.map((g) => g.t).join(', ')}`);
  else if (!got[0].n || got[0].typed !== got[0].n)
    problems.push(`promoted tax_amount: ${got[0].typed} of ${got[0].n} orders landed with it read its value`);
  if (sandbox.stats().calls !== calls) problems.push('promoting a field made API calls');
  return problems;
}
