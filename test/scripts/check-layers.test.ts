/** scripts/check-layers.mjs, run by `npm run lint`: every import runs down the layers of docs/dev/architecture.md. */
import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { expect, test } from 'vitest';
import { tempOut } from '../support/scratch.js';

const ROOT = join(import.meta.dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'check-layers.mjs');

const check = (root?: string) =>
  spawnSync(process.execPath, [SCRIPT, ...(root ? [root] : [])], { encoding: 'utf8', cwd: ROOT });

async function tree(files: Record<string, string>): Promise<string> {
  const root = tempOut('perks-layers-');
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

const LAYERS = [
  '# Layers',
  '```layers',
  'top      src/run/ bench/',
  'middle   src/report/ src/transform/',
  'bottom   src/shared/',
  '```',
  '',
].join('\n');

test('the repository imports only down its layers, with no circle', () => {
  const run = check();
  expect(run.stdout).toMatch(/^check-layers: \d+ files, \d+ arrows between folders, all down the \d+ layers of /);
  expect(run.status).toBe(0);
});

test('an import back up, one across a layer, a circle, test code and a folder in no layer: one line each', async () => {
  const root = await tree({
    'docs/dev/architecture.md': LAYERS,
    'src/run/pipeline.ts': "import { report } from '../report/index.js';\nexport const run = report;\n",
    'src/report/index.ts': "import { run } from '../run/pipeline.js';\nexport const report = run;\n",
    'src/report/model.ts': "import { build } from '../transform/index.js';\nexport { build };\n",
    'src/transform/index.ts': "export const build = 1;\nimport type { Helper } from '../../test/extract/x.js';\n",
    'src/shared/clock.ts': "export {\n  alert,\n} from '../alerts/index.js';\n",
    'src/alerts/index.ts': 'export const alert = 1;\n',
    'bench/a.ts': "import { sandboxEnv } from '../test/support/sandbox.js';\nexport { sandboxEnv };\n",
  });
  const run = check(root);
  expect(run.status).toBe(1);
  expect(run.stdout.trim().split('\n')).toEqual([
    "src/report/index.ts: import '../run/pipeline.js': runs back up: src/report/ (middle) imports src/run/ (top), a layer above it",
    "src/report/model.ts: import '../transform/index.js': src/report/ and src/transform/ are both middle: a folder does not import one of its own layer",
    "src/transform/index.ts: import '../../test/extract/x.js': only bench/ may import test code, and only test/support/ (docs/dev/architecture.md)",
    'src/alerts/: in no layer of docs/dev/architecture.md: add it to the layers there (and say which may import it)',
    "circle between folders: src/report/ -> src/run/ -> src/report/ (src/report/index.ts imports '../run/pipeline.js'; src/run/pipeline.ts imports '../report/index.js')",
    'circle between files: src/report/index.ts -> src/run/pipeline.ts -> src/report/index.ts',
  ]);
});

test("the lake's layout outside src/lake: a path built from a 'lake' segment or a hive_partitioning read, one line each", async () => {
  const root = await tree({
    'docs/dev/architecture.md': LAYERS,
    'src/report/read.ts': [
      "import { join } from 'node:path';",
      "export const dir = (out: string) => join(out, 'lake', 'orders');",
      '// a comment may say hive_partitioning',
      "export const sql = `SELECT * FROM read_parquet('x', hive_partitioning = true)`;",
      "export const kind: 'lake' | 'model' = 'lake';",
      '',
    ].join('\n'),
  });
  const run = check(root);
  expect(run.status).toBe(1);
  expect(run.stdout.trim().split('\n')).toEqual([
    "src/report/read.ts:2: the lake's layout outside src/lake: read it through src/lake/streams.ts (streamDir, streamGlob, scanSql)",
    "src/report/read.ts:4: the lake's layout outside src/lake: read it through src/lake/streams.ts (streamDir, streamGlob, scanSql)",
  ]);
});

test('a partition folder name or a read_parquet outside src/lake: one line each; src/lake and the named readers may', async () => {
  const root = await tree({
    'docs/dev/architecture.md': LAYERS.replace('src/transform/', 'src/transform/ src/writeback/').replace(
      'bottom   src/shared/',
      'adapters src/lake/\nbottom   src/shared/',
    ),
    'src/report/months.ts': [
      'export const dir = (g: number, m: string) => `organisation_group_id=${g}/order_month=${m}`;',
      "export const day = (name: string) => name.replace('_snapshot_date=', '');",
      '// a comment may say order_date=2026-11-02 and read_parquet(…)',
      "export const sql = 'SELECT organisation_group_id = 1 AS mine';",
      'export const read = (list: string) => `SELECT * FROM read_parquet(${list})`;',
      '',
    ].join('\n'),
    'src/lake/partitions.ts': 'export const folder = (g: number) => `organisation_group_id=${g}`;\n',
    'src/writeback/models.ts': "export const marts = 'SELECT * FROM read_parquet($files)';\n",
  });
  const run = check(root);
  expect(run.status).toBe(1);
  const folder =
    'a partition folder name outside src/lake: list, read and land partitions through src/lake/partitions.ts (streamFiles, groupsOf, snapshotsOf, monthPartitions, appendPartition)';
  expect(run.stdout.trim().split('\n')).toEqual([
    `src/report/months.ts:1: ${folder}`,
    `src/report/months.ts:2: ${folder}`,
    'src/report/months.ts:5: read_parquet outside src/lake: read the lake through src/lake/streams.ts (scanSql, scanFilesSql), or name the file and what it reads in PARQUET_READERS (scripts/check-layers.mjs)',
  ]);
});

test('process.env outside src/config: one line each, a comment aside; src/config and the named exceptions may read it', async () => {
  const root = await tree({
    'docs/dev/architecture.md': [
      '# Layers',
      '```layers',
      'top  src/report/',
      'config  src/config/',
      'base  src/shared/',
      '```',
      '',
    ].join('\n'),
    'src/report/settings.ts': [
      '// a comment may say process.env',
      'export const statuses = process.env.PERKS_REVENUE_STATUSES;',
      'export const fx = (env = process.env) => env.PERKS_FX_RATES;',
      '',
    ].join('\n'),
    'src/config/index.ts': 'export const all = process.env;\n',
    'src/shared/clock.ts': 'export const now = process.env.PERKS_NOW;\n',
  });
  const run = check(root);
  expect(run.status).toBe(1);
  expect(run.stdout.trim().split('\n')).toEqual([
    'src/report/settings.ts:2: process.env outside src/config: add the setting to ConfigSchema (src/config) and pass it down',
    'src/report/settings.ts:3: process.env outside src/config: add the setting to ConfigSchema (src/config) and pass it down',
  ]);
});
