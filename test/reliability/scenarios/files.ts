/**
 * 11. Files: state, quarantine and lake (the extract's files and the write-back ledger) are 0600 in 0700
 * folders under umask 000 (looser modes found are tightened); a run
 * writes nothing outside the output directory (its working directory and TMPDIR stay empty); paths
 * built from API values never leave the lake; values reach SQL only as bound parameters. The last two
 * with fast-check over hostile strings: quotes, `--`, `'); DROP`, NUL, `../`, lone surrogates, any Unicode.
 */
import { chmodSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import fc from 'fast-check';
import { forgetUsers } from '../../../src/forget/index.js';
import {
  lakeColumns,
  openPartitionWrite,
  partitionDir,
  quarantineFile,
  StateStore,
  UnsafePathError,
  withLakeConnection,
} from '../../../src/lake/index.js';
import { Order, UserListItem } from '../../../src/resources/index.js';
import { runCli } from '../../support/cli.js';
import { orgEnv, withSandbox } from '../../support/sandbox.js';
import { withScratch } from '../../support/scratch.js';
import { propertyFailure } from '../../support/random.js';
import { row, type Row, type ScenarioOptions } from '../table.js';
import { now } from '../../../src/shared/clock.js';
import { outputAt } from '../../../src/output/index.js';

const NASTY = [
  "'",
  "''",
  '"',
  '--',
  "'); DROP TABLE orders; --",
  '\u0000',
  '../',
  '..\\',
  '/',
  '\\',
  '%2e%2e%2f',
  '$1',
  '$file',
  '?',
  ';',
  '\n',
  '\r\n',
  '\u2028',
  '\ud800',
  '\udfff',
  '${x}',
  '*',
  '**',
  '=',
  'NULL',
  '.',
  '..',
  ' ',
];

/** Hostile strings: the nasty pieces above glued to each other and to arbitrary (binary) Unicode. */
export const hostile = fc
  .array(
    fc.oneof(fc.constantFrom(...NASTY), fc.string({ unit: 'binary', maxLength: 6 }), fc.string({ maxLength: 6 })),
    { minLength: 1, maxLength: 5 },
  )
  .map((parts) => parts.join(''));

export async function filesScenario(o: ScenarioOptions & { strings: number }): Promise<Row[]> {
  return [await modes(o), pathsStayInside(o), await sqlValues(o)];
}

async function modes(o: ScenarioOptions): Promise<Row> {
  return withSandbox({ seed: 81, today: '2026-11-22' }, (sandbox) =>
    withScratch('files', async (scratch) => {
      const out = scratch.dir('out');
      const cwd = scratch.dir('cwd');
      const tmp = scratch.dir('tmp');
      // A state folder someone loosened, with a world-readable state file in it.
      mkdirSync(join(out, 'state', 'orders'), { recursive: true });
      writeFileSync(join(out, 'state', 'orders', '11.json'), '{}');
      chmodSync(join(out, 'state'), 0o777);
      chmodSync(join(out, 'state', 'orders'), 0o755);
      chmodSync(join(out, 'state', 'orders', '11.json'), 0o644);
      // And a lake folder an older version left open to everyone.
      mkdirSync(join(out, 'lake', 'users'), { recursive: true });
      chmodSync(join(out, 'lake'), 0o777);
      chmodSync(join(out, 'lake', 'users'), 0o777);
      const env = { ...orgEnv(sandbox, out, { PERKS_START_DATE: '2026-11-01' }), TMPDIR: tmp };
      const runs = [['extract', '--quiet'], ['build', '--quiet'], ['writeback'], ['forget', '--anonymised']];
      const problems: string[] = [];
      // Some records drift, so the quarantine has files too (the extract then exits 4, as documented).
      sandbox.setFaults({ driftRate: 0.03 });
      // The most permissive umask: the children inherit it, so every mode checked below is the pipeline's own doing.
      const umask = process.umask(0o000);
      try {
        for (const args of runs) {
          const r = await runCli(args, env, { cwd });
          if (r.code !== (args[0] === 'extract' ? 4 : 0))
            problems.push(`${args[0]} exited ${r.code}: ${r.stderr.slice(0, 200)}`);
        }
      } finally {
        process.umask(umask);
      }
      const wrong: string[] = [];
      let checked = 0;
      const perRoot: Record<string, number> = {};
      for (const root of ['state', 'quarantine', 'lake']) {
        const base = join(out, root);
        const entries = [base, ...safeList(base).map((f) => join(base, f))];
        for (const path of entries) {
          const info = statSync(path);
          const want = info.isDirectory() ? 0o700 : 0o600;
          checked += 1;
          perRoot[root] = (perRoot[root] ?? 0) + 1;
          if ((info.mode & 0o777) !== want)
            wrong.push(`${relative(out, path) || root} is ${(info.mode & 0o777).toString(8)}`);
        }
      }
      for (const w of wrong) problems.push(`mode: ${w}`);
      // Not a goal here, said so the reader knows: the transform's warehouse and marts follow the umask.
      const transformModes = ['warehouse.duckdb', 'marts'].map((f) => `${f} ${modeOf(join(out, f))}`).join(', ');
      // tsx, which runs the TypeScript sources (bin/perks.mjs), keeps its compile cache in TMPDIR: the toolchain's, not data.
      const outside = [
        ...safeList(cwd).map((f) => `cwd/${f}`),
        ...safeList(tmp)
          .filter((f) => !/^tsx-\d+/.test(f))
          .map((f) => `TMPDIR/${f}`),
      ];
      for (const f of outside.slice(0, 5)) problems.push(`written outside the output directory: ${f}`);
      o.log(`files: ${checked} state, quarantine and lake entries checked`);
      return row(
        'files: modes, nothing outside the output',
        runs.length,
        problems,
        `${checked - wrong.length}/${checked} entries 0600/0700 under umask 000 (state ${perRoot.state ?? 0}, quarantine ${perRoot.quarantine ?? 0}, lake ${perRoot.lake ?? 0}; 0777 folders and a 0644 file tightened), ${outside.length} files outside the output directory (cwd and TMPDIR, tsx's compile cache aside); the transform's ${transformModes}`,
      );
    }),
  );
}

const modeOf = (path: string) => {
  try {
    return (statSync(path).mode & 0o777).toString(8);
  } catch {
    return 'absent';
  }
};

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true }).map(String);
  } catch {
    return [];
  }
}

/** Paths from API values: either refused with UnsafePathError, or strictly inside the stream's folder. */
function pathsStayInside(o: ScenarioOptions & { strings: number }): Row {
  const out = resolve('/tmp/perks-paths-never-created');
  const state = new StateStore(out);
  let refused = 0;
  let accepted = 0;
  const escapes: string[] = [];
  const inside = (path: string, base: string) => {
    const rel = relative(base, path);
    return (
      rel !== '' && !rel.startsWith('..') && !rel.split(sep).includes('..') && resolve(base, rel) === resolve(path)
    );
  };
  const failure = propertyFailure(() =>
    fc.assert(
      fc.property(hostile, hostile, (group, day) => {
        const tries: [string, () => string][] = [
          [
            join(out, 'lake', 'orders'),
            () => partitionDir(out, 'orders', { organisation_group_id: group, order_date: day }),
          ],
          [join(out, 'state', 'orders'), () => state.fileOf('orders', group)],
          [join(out, 'quarantine', 'orders'), () => quarantineFile(out, 'orders', day)],
        ];
        for (const [base, make] of tries) {
          try {
            const path = make();
            accepted += 1;
            if (!inside(path, base) || path.includes('\u0000')) escapes.push(JSON.stringify(path));
          } catch (err) {
            if (!(err instanceof UnsafePathError)) throw err;
            refused += 1;
          }
        }
        return escapes.length === 0;
      }),
      { numRuns: o.strings, seed: o.seed },
    ),
  );
  if (failure && !escapes.length) escapes.push(failure);
  return row(
    'paths from API values stay inside (fast-check)',
    o.strings,
    escapes.slice(0, 3).map((e) => `escaped or failed: ${e}`),
    `${o.strings} string pairs: ${refused} refused (one clear line, exit 1), ${accepted} inside the lake, ${escapes.length} outside`,
  );
}

/** Hostile values through a partition write and a forget: they come back exactly, and no statement breaks. */
async function sqlValues(o: ScenarioOptions & { strings: number }): Promise<Row> {
  const values = fc.sample(hostile, { numRuns: o.strings, seed: o.seed });
  return withScratch('sql', async (scratch) => {
    const out = scratch.dir();
    const problems: string[] = [];
    const writer = await openPartitionWrite({
      outDir: out,
      stream: 'orders',
      partition: { organisation_group_id: '11', order_date: '2026-11-02' },
      columns: lakeColumns(Order),
      runId: 'hostile',
      extractedAt: now(),
    });
    await writer.append(
      values.map((v, i) => ({ order_id: i, brand: v, email: `${v}@x`, first_name: v, face_value: 1 })),
    );
    await writer.commit();
    const back = await withLakeConnection(async (c) => {
      const r = await c.runAndReadAll('SELECT order_id::BIGINT AS i, brand FROM read_parquet($g) ORDER BY 1', {
        g: join(out, 'lake', 'orders', '**', '*.parquet'),
      });
      return r.getRowObjectsJS();
    });
    // The one documented change: a lone UTF-16 surrogate becomes U+FFFD (docs/reference/lake.md).
    const expected = (v: string) =>
      v.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
    const differ = back.filter((r) => r.brand !== expected(values[Number(r.i)]));
    if (back.length !== values.length) problems.push(`${back.length} rows read back of ${values.length}`);
    for (const d of differ.slice(0, 3))
      problems.push(`value ${JSON.stringify(values[Number(d.i)])} came back as ${JSON.stringify(d.brand)}`);
    // Hostile emails as the forget's bound list: users 0..99 are forgotten, their orders lose their email, no other does.
    const users = await openPartitionWrite({
      outDir: out,
      stream: 'users',
      partition: { organisation_group_id: '11', _snapshot_date: '2026-11-02' },
      columns: lakeColumns(UserListItem),
      runId: 'hostile',
      extractedAt: now(),
    });
    await users.append(values.slice(0, 100).map((v, i) => ({ id: i, email: `${v}@x` })));
    await users.commit();
    const forgot = await forgetUsers(outputAt(out), [...Array(100).keys()], { lock: false }).catch(
      (err: Error) => (problems.push(`forget: ${err.message}`), undefined),
    );
    const emails = await withLakeConnection(async (c) => {
      const r = await c.runAndReadAll('SELECT order_id::BIGINT AS i, email FROM read_parquet($g) ORDER BY 1', {
        g: join(out, 'lake', 'orders', '**', '*.parquet'),
      });
      return r.getRowObjectsJS();
    });
    // An order is the forgotten user's when its email is one of theirs up to case and blanks at its ends (personal keys).
    const norm = (e: string) =>
      expected(e)
        .toLowerCase()
        .replace(/^[ \t\n\r\u00a0]+|[ \t\n\r\u00a0]+$/g, '');
    const gone = new Set(emails.filter((r) => Number(r.i) < 100).map((r) => norm(`${values[Number(r.i)]}@x`)));
    const wrongForget = emails.filter((r) =>
      Number(r.i) < 100 ? r.email !== null : r.email === null && !gone.has(norm(`${values[Number(r.i)]}@x`)),
    );
    if (wrongForget.length)
      problems.push(
        `forget over hostile emails: ${wrongForget.length} rows wrong, e.g. ${JSON.stringify(wrongForget[0], (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`,
      );
    return row(
      'values reach SQL only as parameters (fast-check)',
      values.length,
      problems,
      `${values.length} hostile strings landed and read back: ${values.length - differ.length} exact (lone surrogates as U+FFFD); forget over 100 of them as emails: ${forgot?.rows ?? 0} rows cleared, ${wrongForget.length} wrong`,
    );
  });
}
