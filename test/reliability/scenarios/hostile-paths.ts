/**
 * Paths are data, never patterns (issue 16, item 1). An output folder whose name holds `[ ] ? * { }`,
 * quotes, spaces or unicode (a comma and a backslash are refused by the configuration) builds and answers from its own lake only, while a decoy sibling (the folder
 * the name would match as a glob: `out[r]` → `outr`, `a?b` → `axb`) holds more orders that must never be
 * read. A copied output directory reads its own lake, not the folder it was built in.
 */
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { extract } from '../../../src/extract/index.js';
import { globUnder, withLakeConnection } from '../../../src/lake/index.js';
import { buildWarehouse, queryWarehouse } from '../../../src/transform/index.js';
import { runCli, stderrLines } from '../../support/cli.js';
import { orgConfig, orgEnv, withSandbox } from '../../support/sandbox.js';
import { withScratch } from '../../support/scratch.js';
import { LakeWriter, writeFixtureLake } from '../../transform/fixture-lake.js';
import { AS_OF } from '../../transform/helpers.js';
import { row, type Row, type ScenarioOptions } from '../table.js';
import { outputAt } from '../../../src/output/index.js';

/** What a plain folder's build of the fixture lake answers: the expected counts. */
interface Expected {
  lake: number;
  staged: number;
}

/** Folder names built from the characters a glob reads as a pattern, and quotes, spaces, unicode. */
export const hostileName = fc
  .array(
    fc.constantFrom(
      '[r]',
      '[',
      ']',
      '?',
      '*',
      '{a.b}',
      '{',
      '}',
      "'",
      '"',
      ' ',
      'ü',
      '日本',
      'x',
      '-',
      '[!a]',
      '**',
      '$',
      '%',
    ),
    { minLength: 1, maxLength: 6 },
  )
  .map((parts) => `out${parts.join('')}`);

/** The sibling the name matches when read as a glob (brackets read as a class, `?` and `*` as any). */
export const decoyOf = (name: string): string =>
  name
    .replace(/\[!?([^\]]*)\]/g, (_, inner: string) => (inner ? (_.startsWith('[!') ? 'b' : inner[0]) : ''))
    .replace(/[?*]+/g, 'x');

async function count(warehouse: string, sql: string): Promise<number> {
  const r = await queryWarehouse(warehouse, sql);
  return Number(Object.values(r.rows[0])[0]);
}

/** One hostile folder and its decoy, built and read: the problems found. */
export async function hostileFolder(root: string, name: string, expected: Expected): Promise<string[]> {
  const dir = join(root, name);
  const decoy = join(root, decoyOf(name));
  const problems: string[] = [];
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  await writeFixtureLake(dir);
  if (decoy !== dir) {
    rmSync(decoy, { recursive: true, force: true });
    await writeFixtureLake(decoy);
    const w = await LakeWriter.create(decoy);
    try {
      // 20 more orders that only the decoy holds, by their run id
      const rows = Array.from({ length: 20 }, (_, i) => ({
        order_id: 900_000 + i,
        order_status: 'Complete',
        order_currency: 'GBP',
        group_revenue: 1,
      }));
      await w.file(
        'orders',
        { organisation_group_id: 11, order_date: '2026-03-15' },
        'part-decoy.parquet',
        '2026-03-31T09:00:00Z',
        rows,
      );
    } finally {
      w.close();
    }
  }
  const built = await buildWarehouse({ output: outputAt(dir), asOf: AS_OF });
  if (!built.ok) return [`${JSON.stringify(name)}: build failed: ${built.error}`];
  const orders = await count(outputAt(dir).warehouse, 'SELECT count(*) FROM lake_orders');
  const staged = await count(outputAt(dir).warehouse, 'SELECT count(*) FROM stg_orders');
  if (orders !== expected.lake)
    problems.push(
      `${JSON.stringify(name)}: lake_orders has ${orders} rows, expected ${expected.lake} (decoy ${JSON.stringify(decoyOf(name))})`,
    );
  if (staged !== expected.staged)
    problems.push(`${JSON.stringify(name)}: stg_orders has ${staged} rows, expected ${expected.staged}`);
  // the readers of the extract and forget steps glob the lake too
  const direct = await withLakeConnection(async (c) => {
    const r = await c.runAndReadAll('SELECT count(*)::INTEGER AS n FROM read_parquet($glob)', {
      glob: globUnder(join(dir, 'lake', 'orders'), '**', '*.parquet'),
    });
    return Number(r.getRowObjectsJson()[0].n);
  });
  if (direct !== expected.lake)
    problems.push(`${JSON.stringify(name)}: a lake reader read ${direct} orders, expected ${expected.lake}`);
  // a copy of the output directory, its original's lake gone: it reads its own
  const copy = join(root, `${name}-copy`);
  cpSync(dir, copy, { recursive: true });
  rmSync(join(dir, 'lake'), { recursive: true, force: true });
  const copied = await count(outputAt(copy).warehouse, 'SELECT count(*) FROM lake_orders').catch(
    (err: Error) => err.message,
  );
  if (copied !== expected.lake)
    problems.push(
      `${JSON.stringify(name)}: a copy of the output directory read ${copied} orders from lake_orders, expected its own ${expected.lake}`,
    );
  rmSync(copy, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
  if (decoy !== dir) rmSync(decoy, { recursive: true, force: true });
  return problems;
}

/** The issue's repro through the command line: extract into `out[r]` beside a fuller `outr`, build, count. */
async function issueRepro(root: string): Promise<string[]> {
  return withSandbox({ seed: 16, today: '2026-11-22' }, async (sandbox) => {
    const dir = join(root, 'x', 'out[r]');
    const decoy = join(root, 'x', 'outr');
    await extract(orgConfig(sandbox, dir, { PERKS_START_DATE: '2026-11-18' }), {
      output: outputAt(dir),
      now: new Date('2026-11-22T12:00:00Z'),
      streams: ['orders', 'users'],
    });
    await extract(orgConfig(sandbox, decoy, { PERKS_START_DATE: '2026-10-01' }), {
      output: outputAt(decoy),
      now: new Date('2026-11-22T12:00:00Z'),
      streams: ['orders', 'users'],
    });
    const own = await withLakeConnection(async (c) =>
      Number(
        (
          await c.runAndReadAll('SELECT count(*)::INTEGER AS n FROM read_parquet($g)', {
            g: globUnder(join(dir, 'lake', 'orders'), '**', '*.parquet'),
          })
        ).getRowObjectsJson()[0].n,
      ),
    );
    const env = orgEnv(sandbox, dir);
    const build = await runCli(['build', '--quiet'], env);
    if (build.code !== 0) return [`perks build in out[r]: exit ${build.code}: ${stderrLines(build).join(' | ')}`];
    const sql = await runCli(['sql', 'SELECT count(*) AS n FROM lake_orders', '--format', 'csv'], env);
    const n = Number(sql.stdout.split('\n')[1]);
    return n === own && own > 0 ? [] : [`perks sql in out[r] counted ${n} orders; its own lake holds ${own}`];
  });
}

export const FIXED_NAMES = ['out[r]', 'a?b', 'st*r', 'q\'uo"te', 'sp ace', 'ünï日本', 'br{a.b}'];

/** `fixed`: the named folders always tried (default FIXED_NAMES); `paths`: how many generated ones besides. */
export async function hostilePathsScenario(
  o: ScenarioOptions & { paths: number; fixed?: string[]; repro?: boolean },
): Promise<Row[]> {
  const names = [
    ...new Set([
      ...(o.fixed ?? FIXED_NAMES),
      ...(o.paths ? fc.sample(hostileName, { numRuns: o.paths, seed: o.seed }) : []),
    ]),
  ];
  return withScratch('hostile-paths', async (scratch) => {
    const root = scratch.dir();
    const problems: string[] = [];
    const plain = join(root, 'plain');
    await writeFixtureLake(plain);
    const reference = await buildWarehouse({ output: outputAt(plain), asOf: AS_OF });
    if (!reference.ok) throw new Error(`the plain folder's build failed: ${reference.error}`);
    const expected = {
      lake: await count(outputAt(plain).warehouse, 'SELECT count(*) FROM lake_orders'),
      staged: await count(outputAt(plain).warehouse, 'SELECT count(*) FROM stg_orders'),
    };
    for (const name of names) {
      const found = await hostileFolder(root, name, expected);
      o.log(`hostile path ${JSON.stringify(name)}: ${found.join('; ') || 'ok'}`);
      problems.push(...found);
    }
    const rows = [
      row(
        'hostile output paths read only their own lake (fast-check)',
        names.length,
        problems,
        `${names.length} folder names with [ ] ? * { } quotes spaces unicode, each beside a decoy of 20 more orders: ${names.length - new Set(problems.map((p) => p.split(':')[0])).size} built and read only their own ${expected.lake} lake orders, and so did a copy of each`,
      ),
    ];
    if (o.repro !== false) {
      const repro = await issueRepro(root);
      rows.push(
        row(
          "PERKS_OUTPUT='…/out[r]' beside 'outr': build and sql read out[r]",
          1,
          repro,
          repro.length ? repro[0] : 'extract, build and sql in out[r] counted exactly its own orders',
        ),
      );
    }
    return rows;
  });
}
