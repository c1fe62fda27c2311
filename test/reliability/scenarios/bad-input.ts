/**
 * 7. Bad input: each case runs the real command line and must end with one clear line on stderr
 * (`perks: …` naming what to fix) and its documented exit code (README, src/shared/exit-codes.ts),
 * leaving the output directory exactly as it was: no partial file visible, no state advanced.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { extract } from '../../../src/extract/index.js';
import { damagedFiles, withLakeConnection } from '../../../src/lake/index.js';
import { buildWarehouse } from '../../../src/transform/index.js';
import type { Sandbox } from '../../../src/sandbox/index.js';
import { ExitCode } from '../../../src/shared/exit-codes.js';
import { runCli, stderrLines } from '../../support/cli.js';
import { leftovers } from '../../support/lake-check.js';
import { orgConfig, orgEnv, withSandbox } from '../../support/sandbox.js';
import { withScratch, type Scratch } from '../../support/scratch.js';
import { row, selectByName, type Row, type ScenarioOptions } from '../table.js';
import { outputAt } from '../../../src/output/index.js';

export interface BadInput {
  name: string;
  args: string[];
  /** Environment beyond the sandbox credential and the output directory. */
  env?: Record<string, string | undefined>;
  /** Prepares the output directory (an extracted lake is there when `lake` is true). */
  lake?: boolean;
  setup?: (out: string) => void | Promise<void>;
  /** The output directory to use instead of the scratch one (e.g. a file). */
  output?: (out: string) => string;
  code: number;
  /** What the one line must say. */
  says: RegExp;
  /** Needs root (mounts). */
  root?: boolean;
  /** A file (relative to the output) that must be left exactly as it was; without a lake or a check, the whole output. */
  keeps?: string;
  /** Further checks of the output afterwards: the problems found. */
  check?: (out: string) => Promise<string[]>;
}

const START = '2026-11-10';

export const BAD_INPUTS: BadInput[] = [
  {
    name: 'PERKS_RATE_LIMIT not a number',
    args: ['extract'],
    env: { PERKS_RATE_LIMIT: 'fast' },
    code: ExitCode.config,
    says: /PERKS_RATE_LIMIT="fast" is invalid/,
  },
  {
    name: 'PERKS_RATE_LIMIT zero',
    args: ['extract'],
    env: { PERKS_RATE_LIMIT: '0' },
    code: ExitCode.config,
    says: /PERKS_RATE_LIMIT="0" is invalid/,
  },
  {
    name: 'PERKS_CLIENT_ID not a number',
    args: ['extract'],
    env: { PERKS_CLIENT_ID: 'abc' },
    code: ExitCode.config,
    says: /PERKS_CLIENT_ID="abc" is invalid/,
  },
  {
    name: 'PERKS_CLIENT_SECRET missing',
    args: ['extract'],
    env: { PERKS_CLIENT_SECRET: undefined },
    code: ExitCode.config,
    says: /PERKS_CLIENT_SECRET is not set/,
  },
  {
    name: 'PERKS_BASE_URL not a URL',
    args: ['extract'],
    env: { PERKS_BASE_URL: 'api.example' },
    code: ExitCode.config,
    says: /PERKS_BASE_URL="api.example" is invalid/,
  },
  {
    name: 'PERKS_BASE_URL not http(s)',
    args: ['extract'],
    env: { PERKS_BASE_URL: 'ftp://example.com' },
    code: ExitCode.config,
    says: /PERKS_BASE_URL="ftp:\/\/example\.com" is invalid: expected an http\(s\) URL/,
  },
  {
    name: 'PERKS_BASE_URL with a password',
    args: ['extract'],
    env: { PERKS_BASE_URL: 'https://me:canary-pw@api.example.com' },
    code: ExitCode.config,
    says: /PERKS_BASE_URL="https:\/\/\(hidden\)@api\.example\.com" is invalid: expected no user or password/,
  },
  {
    name: 'PERKS_API_TIMEZONE unknown',
    args: ['extract'],
    env: { PERKS_API_TIMEZONE: 'Mars/Olympus' },
    code: ExitCode.config,
    says: /PERKS_API_TIMEZONE="Mars\/Olympus" is invalid: expected an IANA time zone/,
  },
  {
    name: 'PERKS_GROUP_IDS malformed',
    args: ['extract'],
    env: { PERKS_GROUP_IDS: '11,,x' },
    code: ExitCode.config,
    says: /PERKS_GROUP_IDS="11,,x" is invalid/,
  },
  {
    name: 'PERKS_GROUP_IDS with a group twice',
    args: ['extract'],
    env: { PERKS_GROUP_IDS: '11,12,11' },
    code: ExitCode.config,
    says: /PERKS_GROUP_IDS="11,12,11" is invalid: a group id is listed twice/,
  },
  {
    name: 'PERKS_SCOPE blank',
    args: ['extract'],
    env: { PERKS_SCOPE: ' ' },
    code: ExitCode.config,
    says: /PERKS_SCOPE=" " is invalid: must not be blank/,
  },
  {
    name: 'PERKS_LOOKBACK_DAYS negative',
    args: ['extract'],
    env: { PERKS_LOOKBACK_DAYS: '-3' },
    code: ExitCode.config,
    says: /PERKS_LOOKBACK_DAYS="-3" is invalid/,
  },
  {
    name: 'PERKS_CREDIT_PATH without placeholders',
    args: ['extract'],
    env: { PERKS_CREDIT_PATH: '/v3/credit' },
    code: ExitCode.config,
    says: /PERKS_CREDIT_PATH="\/v3\/credit" is invalid/,
  },
  {
    name: 'PERKS_NOW not an instant',
    args: ['extract'],
    env: { PERKS_NOW: 'tomorrow' },
    code: ExitCode.config,
    says: /PERKS_NOW="tomorrow" is invalid/,
  },
  {
    name: 'PERKS_START_DATE not a date',
    args: ['extract'],
    env: { PERKS_START_DATE: 'yesterday' },
    code: ExitCode.config,
    says: /PERKS_START_DATE="yesterday" is invalid/,
  },
  {
    name: 'PERKS_START_DATE 2026-02-30',
    args: ['extract'],
    env: { PERKS_START_DATE: '2026-02-30' },
    code: ExitCode.config,
    says: /PERKS_START_DATE="2026-02-30" is invalid/,
  },
  {
    name: '--start-date 2026-13-01',
    args: ['extract', '--start-date', '2026-13-01'],
    code: ExitCode.config,
    says: /--start-date="2026-13-01" is invalid/,
  },
  {
    name: '--start-date 2026-02-30',
    args: ['extract', '--start-date', '2026-02-30'],
    code: ExitCode.config,
    says: /--start-date="2026-02-30" is invalid/,
  },
  {
    name: '--end-date 2026-02-30',
    args: ['extract', '--end-date', '2026-02-30'],
    code: ExitCode.config,
    says: /--end-date="2026-02-30" is invalid/,
  },
  {
    name: '--start-date after --end-date',
    args: ['extract', '--start-date', '2026-11-10', '--end-date', '2026-11-01'],
    code: ExitCode.config,
    says: /--start-date must be before --end-date/,
  },
  {
    name: '--streams with an unknown stream',
    args: ['extract', '--streams', 'orders,bogus'],
    code: ExitCode.config,
    says: /unknown stream "bogus"/,
  },
  {
    name: '--budget-minutes negative',
    args: ['extract', '--budget-minutes', '-5'],
    code: ExitCode.config,
    says: /--budget-minutes/,
  },
  { name: 'an unknown flag', args: ['extract', '--bogus'], code: ExitCode.config, says: /Unknown argument/ },
  {
    name: 'report --month 2026-13',
    args: ['report', 'revenue', '--month', '2026-13'],
    code: ExitCode.config,
    says: /month/,
  },
  {
    name: 'build --as-of 2026-02-30',
    args: ['build', '--as-of', '2026-02-30'],
    code: ExitCode.config,
    says: /as-of|asOf/,
  },
  {
    name: 'forget --user not an id',
    args: ['forget', '--user', 'abc'],
    code: ExitCode.config,
    says: /--user="abc" is invalid/,
  },
  { name: 'forget without a user', args: ['forget'], code: ExitCode.config, says: /name the users to forget/ },
  {
    name: 'wrong client secret',
    args: ['extract'],
    env: { PERKS_CLIENT_SECRET: 'not-the-secret' },
    code: ExitCode.auth,
    says: /refused the client credentials/,
  },
  {
    name: 'output path is a file',
    args: ['extract'],
    output: (out) => (writeFileSync(join(out, 'a-file'), 'x'), join(out, 'a-file')),
    code: ExitCode.config,
    says: /not a directory|is a file|names a file/,
  },
  {
    name: 'output inside a file',
    args: ['extract'],
    output: (out) => (writeFileSync(join(out, 'a-file'), 'x'), join(out, 'a-file', 'out')),
    code: ExitCode.config,
    says: /not a directory|is a file|names a file/,
  },
  // Issue 16: every flag and setting checked before any work, one line naming it, exit 2; --plan writes nothing.
  {
    name: 'run --month abc',
    args: ['run', '--month', 'abc'],
    code: ExitCode.config,
    says: /--month="abc" is invalid: expected a month YYYY-MM/,
  },
  {
    name: 'run --month 2026-13',
    args: ['run', '--month', '2026-13'],
    code: ExitCode.config,
    says: /--month="2026-13" is invalid/,
  },
  {
    name: 'extract --end-date 2026-1-1',
    args: ['extract', '--end-date', '2026-1-1'],
    code: ExitCode.config,
    says: /--end-date="2026-1-1" is invalid: expected a date YYYY-MM-DD/,
  },
  {
    name: 'extract --start-date abc',
    args: ['extract', '--start-date', 'abc'],
    code: ExitCode.config,
    says: /--start-date="abc" is invalid/,
  },
  {
    name: 'PERKS_START_DATE 2026-1-1',
    args: ['extract'],
    env: { PERKS_START_DATE: '2026-1-1' },
    code: ExitCode.config,
    says: /PERKS_START_DATE="2026-1-1" is invalid/,
  },
  {
    name: 'build --as-of abc',
    args: ['build', '--as-of', 'abc'],
    code: ExitCode.config,
    says: /--as-of="abc" is invalid: expected a real calendar date/,
  },
  {
    name: 'build --as-of 2026-1-1',
    args: ['build', '--as-of', '2026-1-1'],
    code: ExitCode.config,
    says: /--as-of="2026-1-1" is invalid/,
  },
  {
    name: 'extract --groups beyond a safe integer, --plan',
    args: ['extract', '--groups', '9007199254740993', '--plan'],
    code: ExitCode.config,
    says: /--groups="9007199254740993" is invalid: expected group ids, whole numbers from 1 to 9007199254740991/,
  },
  {
    name: 'PERKS_GROUP_IDS beyond a safe integer',
    args: ['extract'],
    env: { PERKS_GROUP_IDS: '11,99999999999999999999' },
    code: ExitCode.config,
    says: /PERKS_GROUP_IDS="11,99999999999999999999" is invalid/,
  },
  {
    // a configuration mistake a rerun cannot fix: exit 3 (credentials), never 1 ("transient, rerun is safe")
    name: 'PERKS_GROUP_IDS a group the credential cannot reach (HTTP 403)',
    args: ['extract'],
    env: { PERKS_GROUP_IDS: '99' },
    code: ExitCode.auth,
    says: /^perks: getGroup: HTTP 403: forbidden: the credential cannot reach this group \(check PERKS_GROUP_IDS\)/,
  },
  {
    name: 'PERKS_CLIENT_ID beyond a safe integer',
    args: ['extract'],
    env: { PERKS_CLIENT_ID: '9007199254740993' },
    code: ExitCode.config,
    says: /PERKS_CLIENT_ID="9007199254740993" is invalid/,
  },
  {
    name: 'run --budget-minutes -1',
    args: ['run', '--budget-minutes', '-1'],
    code: ExitCode.config,
    says: /--budget-minutes must be a number of minutes, 0 or more/,
  },
  {
    name: 'users get --id beyond a safe integer',
    args: ['users', 'get', '--id', '9007199254740993'],
    code: ExitCode.config,
    says: /--id="9007199254740993" is invalid/,
  },
  {
    name: 'build --new-days abc',
    args: ['build', '--new-days', 'abc'],
    code: ExitCode.config,
    says: /--new-days=NaN is invalid/,
  },
  {
    name: 'report --month 2026-1',
    args: ['report', 'revenue', '--month', '2026-1'],
    code: ExitCode.config,
    says: /--month="2026-1" is invalid/,
  },
  {
    name: 'extract --plan writes nothing',
    args: ['extract', '--plan', '--groups', '11'],
    code: ExitCode.success,
    says: /calls/,
  },
  {
    name: 'PERKS_OUTPUT with a 300-character folder name',
    args: ['build'],
    output: (out) => join(out, 'n'.repeat(300)),
    code: ExitCode.config,
    says: /PERKS_OUTPUT=".*n{300}" is invalid: a folder name is longer than 255 bytes/,
  },
  {
    name: 'PERKS_OUTPUT with a comma',
    args: ['sql', 'SELECT 1'],
    output: (out) => join(out, 'a,b'),
    code: ExitCode.config,
    says: /PERKS_OUTPUT=".*a,b" is invalid: expected no comma/,
  },
  { name: 'sql with an empty query', args: ['sql', ''], code: ExitCode.config, says: /the query is empty/ },
  {
    name: 'sql reading a file outside the output directory',
    args: ['sql', "SELECT * FROM read_text('/etc/passwd')"],
    lake: true,
    setup: buildIn,
    code: ExitCode.config,
    says: /reads a file outside the output directory.*pass --read-files-anywhere/,
  },
  {
    name: 'sql on a damaged warehouse (exit 1, not bad input)',
    args: ['sql', 'SELECT 1'],
    lake: true,
    setup: async (out) => (await buildIn(out), writeFileSync(join(out, 'warehouse.duckdb'), 'garbage'.repeat(100))),
    code: ExitCode.failed,
    says: /warehouse .* cannot be opened/,
  },
  {
    name: 'report on a damaged warehouse (exit 1, not bad input)',
    args: ['report', 'revenue', '--month', '2026-11'],
    lake: true,
    setup: async (out) => (await buildIn(out), writeFileSync(join(out, 'warehouse.duckdb'), 'garbage'.repeat(100))),
    code: ExitCode.failed,
    says: /cannot open the warehouse .* read-only/,
  },
  {
    name: 'sql on a damaged lake file (exit 1, not bad input)',
    args: ['sql', 'SELECT count(*) FROM lake_orders'],
    lake: true,
    setup: async (out) => (await buildIn(out), corrupt(join(out, 'lake', 'orders'), (f) => f.includes('2026-11-12'))),
    code: ExitCode.failed,
    says: /the query could not read its data: .*(part|day-2026-11-12)[.\w-]*\.parquet/,
  },
  {
    name: 'output on a read-only file system',
    args: ['extract'],
    root: true,
    output: (out) => mount(join(out, 'ro'), 'ro,size=1m'),
    code: ExitCode.config,
    says: /read-only|permission denied/,
  },
  {
    name: 'corrupt state file',
    args: ['extract', '--streams', 'orders'],
    lake: true,
    setup: (out) => writeFileSync(join(out, 'state', 'orders', '11.json'), '{"watermark": "2026-11-2'),
    keeps: 'state/orders/11.json',
    code: ExitCode.config,
    says: /state file .*11\.json is corrupt/,
  },
  {
    name: 'state file of the wrong shape',
    args: ['extract', '--streams', 'orders'],
    lake: true,
    setup: (out) => editState(out, (s) => ({ ...s, watermark: 20261120, pass: { upper: '2026-11-22', done: 'all' } })),
    keeps: 'state/orders/11.json',
    code: ExitCode.config,
    says: /state file .*11\.json is corrupt \(watermark: .*\): delete it .* or rerun with --full-refresh/,
  },
  {
    name: 'watermark beyond tomorrow (a clock set back)',
    args: ['extract', '--streams', 'orders'],
    lake: true,
    setup: (out) => editState(out, (s) => ({ ...s, watermark: '2027-03-01' })),
    keeps: 'state/orders/11.json',
    code: ExitCode.config,
    says: /state file .*11\.json says 2027-03-01 is already extracted, beyond tomorrow .*--full-refresh/,
  },
  {
    name: 'watermark beyond tomorrow, then --full-refresh',
    args: ['extract', '--streams', 'orders', '--full-refresh'],
    lake: true,
    setup: (out) => editState(out, (s) => ({ ...s, watermark: '2027-03-01' })),
    code: ExitCode.success,
    says: /orders +success/,
    check: (out) =>
      Promise.resolve(
        JSON.parse(readFileSync(join(out, 'state', 'orders', '11.json'), 'utf8')).watermark === '2027-03-01'
          ? ['the future watermark was kept']
          : [],
      ),
  },
  {
    name: 'corrupt Parquet file in a window the run re-extracts (healed)',
    args: ['extract', '--streams', 'orders', '--start-date', '2026-11-18', '--end-date', '2026-11-21'],
    lake: true,
    setup: (out) =>
      corrupt(join(out, 'lake', 'orders'), (f) => f.includes('organisation_group_id=11/') && f.includes('2026-11-20')),
    code: ExitCode.success,
    says: /orders +success/,
    check: lakeReadable,
  },
  {
    name: 'corrupt users snapshot of an earlier day, removed by the next run (healed)',
    args: ['extract', '--streams', 'users'],
    lake: true,
    setup: (out) => {
      const day = join(out, 'lake', 'users', 'organisation_group_id=12');
      cpSync(join(day, '_snapshot_date=2026-11-22'), join(day, '_snapshot_date=2026-11-21'), { recursive: true });
      corrupt(join(day, '_snapshot_date=2026-11-21'), () => true);
    },
    code: ExitCode.success,
    says: /users +success/,
    check: async (out) => [
      ...(await lakeReadable(out)),
      ...(damagedFiles(join(out, 'lake', 'users', 'organisation_group_id=12', '_snapshot_date=2026-11-21')).length
        ? ['the damaged snapshot file is still there']
        : []),
    ],
  },
  {
    name: 'corrupt users snapshot, re-landed before it is read (healed)',
    args: ['extract', '--streams', 'credit'],
    lake: true,
    setup: (out) => corrupt(join(out, 'lake', 'users'), (f) => f.includes('organisation_group_id=12')),
    code: ExitCode.success,
    says: /credit +success/,
    check: lakeReadable,
  },
  {
    name: 'corrupt Parquet file, then perks build',
    args: ['build'],
    lake: true,
    setup: (out) => corrupt(join(out, 'lake', 'orders'), (f) => f.includes('2026-11-12')),
    code: ExitCode.failed,
    says: /lake stream orders .* cannot be read: .*(part|day-2026-11-12)[.\w-]*\.parquet.*; repair: perks extract --streams orders --groups \d+ --start-date 2026-11-12 --end-date 2026-11-13/,
  },
  {
    name: 'corrupt Parquet file outside the lookback, healed by the next extract',
    args: ['extract', '--streams', 'orders'],
    lake: true,
    setup: (out) => corrupt(join(out, 'lake', 'orders'), (f) => f.includes('2026-11-12')),
    code: ExitCode.success,
    says: /re-extracting 1 window whose lake file was damaged: 2026-11-12/,
    check: lakeReadable,
  },
  {
    name: 'corrupt Parquet file, repaired by the command the build names',
    args: [
      'extract',
      '--streams',
      'orders',
      '--groups',
      '11',
      '--start-date',
      '2026-11-12',
      '--end-date',
      '2026-11-13',
    ],
    lake: true,
    setup: (out) =>
      corrupt(join(out, 'lake', 'orders'), (f) => f.includes('organisation_group_id=11/') && f.includes('2026-11-12')),
    code: ExitCode.success,
    says: /orders +success/,
    check: lakeReadable,
  },
  {
    name: 'full disk (a 300 kB file system)',
    args: ['extract'],
    env: { PERKS_START_DATE: '2026-06-01' },
    root: true,
    output: (out) => mount(join(out, 'full'), 'size=300k'),
    code: ExitCode.failed,
    says: /disk full while writing/,
    check: lakeReadable,
  },
];

/** Rewrites group 11's orders state. */
function editState(out: string, change: (state: Record<string, unknown>) => Record<string, unknown>): void {
  const file = join(out, 'state', 'orders', '11.json');
  writeFileSync(file, JSON.stringify(change(JSON.parse(readFileSync(file, 'utf8')))));
}

/** Builds the warehouse of the copied lake (for the cases that query it). */
async function buildIn(out: string): Promise<void> {
  const built = await buildWarehouse({ output: outputAt(out), asOf: '2026-11-22' });
  if (!built.ok) throw new Error(`the case's warehouse did not build: ${built.error}`);
}

/** Every Parquet file of the lake reads whole: no partial file is visible. */
async function lakeReadable(out: string): Promise<string[]> {
  const lake = join(out, 'lake');
  const files = readdirSync(lake, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.parquet'));
  const bad: string[] = [];
  await withLakeConnection(async (c) => {
    for (const f of files)
      await c
        .runAndReadAll('SELECT count(*) FROM read_parquet($f)', { f: join(lake, f) })
        .catch(() => bad.push(`unreadable lake file ${f}`));
  });
  return bad;
}

function corrupt(dir: string, which: (file: string) => boolean): void {
  const file = readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.parquet') && which(f))
    .sort()[0];
  if (!file) throw new Error(`no Parquet file to corrupt under ${dir}`);
  const path = join(dir, file);
  const bytes = readFileSync(path);
  writeFileSync(path, Buffer.concat([Buffer.from('garbage!'), bytes.subarray(8, Math.floor(bytes.length / 2))]));
}

const mounts: string[] = [];
function mount(dir: string, options: string): string {
  mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir]);
  mounts.push(dir);
  return dir;
}
function unmountAll(): void {
  while (mounts.length) execFileSync('umount', ['-l', mounts.pop()!]);
}

/** A file's content, or a folder's files with their sizes and modification times (state included). */
function snapshot(dir: string): string {
  let info;
  try {
    info = statSync(dir);
  } catch {
    return '(none)';
  }
  if (info.isFile()) return readFileSync(dir, 'latin1');
  let names: string[];
  try {
    names = readdirSync(dir, { recursive: true }).map(String).sort();
  } catch {
    return '(none)';
  }
  return names
    .filter((n) => !n.startsWith('runs/') && n !== 'runs' && n !== '.perks.lock')
    .map((n) => {
      const s = statSync(join(dir, n));
      return s.isFile() ? `${n}:${s.size}:${s.mtimeMs}` : n;
    })
    .join('\n');
}

export async function badInputScenario(o: ScenarioOptions & { cases?: string[] }): Promise<Row[]> {
  const isRoot = process.getuid?.() === 0;
  const cases = selectByName('bad-input case', BAD_INPUTS, (c) => c.name, o.cases);
  return withSandbox({ seed: 41, today: '2026-11-22' }, (sandbox) =>
    withScratch('bad-input', async (scratch) => {
      const lake = scratch.dir('lake');
      await extract(orgConfig(sandbox, lake, { PERKS_START_DATE: START }), {
        output: outputAt(lake),
        now: new Date('2026-11-22T12:00:00Z'),
        streams: ['orders', 'users'],
      });
      const problems: string[] = [];
      const answered: string[] = [];
      let ran = 0;
      try {
        for (const c of cases) {
          if (c.root && !isRoot) {
            problems.push(`${c.name}: not run (needs root for a tmpfs mount)`);
            continue;
          }
          ran += 1;
          const result = await runCase(sandbox, scratch, lake, c);
          if (result) problems.push(`${c.name}: ${result}`);
          else answered.push(c.name);
          o.log(`bad input: ${c.name}: ${result || 'ok'}`);
        }
      } finally {
        unmountAll();
      }
      return [
        row(
          'bad input → one clear line and its exit code',
          ran,
          problems,
          `${answered.length}/${cases.length} answered with one line and the documented code, nothing changed on disk`,
        ),
      ];
    }),
  );
}

/** Stack traces and DuckDB's query excerpts are not for the person running the command. */
const NOISE = /^\s+at |^LINE \d+:|^\s*\^\s*$/m;

/** One case; the problem found, or '' when the answer is right. */
async function runCase(sandbox: Sandbox, scratch: Scratch, lake: string, c: BadInput): Promise<string> {
  let out = scratch.dir();
  if (c.lake) cpSync(lake, out, { recursive: true });
  if (c.output) out = c.output(out);
  await c.setup?.(out);
  const kept = c.keeps ? join(out, c.keeps) : c.lake || c.check ? undefined : out;
  const before = kept && snapshot(kept);
  const env = Object.fromEntries(
    Object.entries({ ...orgEnv(sandbox, out, { PERKS_START_DATE: START }), ...c.env }).filter(
      ([, v]) => v !== undefined,
    ),
  ) as Record<string, string>;
  const args = [...c.args, ...(['extract', 'build'].includes(c.args[0]) ? ['--quiet'] : [])];
  const r = await runCli(args, env, { timeoutMs: 60_000 });
  const lines = stderrLines(r);
  const found: string[] = [];
  if (r.code !== c.code) found.push(`exit ${r.code ?? r.signal}, expected ${c.code}`);
  // The one line: on stderr (a refused command), or the failed step's line of the run summary on stdout.
  const line = lines.length ? lines[0] : r.stdout.split('\n').find((l) => c.says.test(l));
  if (lines.length > 1) found.push(`${lines.length} lines on stderr: ${lines.slice(0, 3).join(' | ').slice(0, 300)}`);
  else if (!line || !c.says.test(line) || (lines.length === 1 && !line.startsWith('perks: ')))
    found.push(
      `said: ${(line ?? r.stdout.split('\n').find((l) => /error/.test(l)) ?? '(nothing)').trim().slice(0, 240)}`,
    );
  if (NOISE.test(r.stdout) || NOISE.test(r.stderr)) found.push('a stack trace or query excerpt was printed');
  if (kept && snapshot(kept) !== before) found.push(`${c.keeps ?? 'the output directory'} changed`);
  if (leftovers(out).length) found.push(`temporary files left: ${leftovers(out).slice(0, 2).join(', ')}`);
  if (c.check) found.push(...(await c.check(out)));
  return found.join('; ');
}
