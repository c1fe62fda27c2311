/**
 * `perks status` as a scheduler meets it: one real run against a tiny sandbox on 2026-11-22 (noon UTC),
 * then the status asked at several later instants (PERKS_NOW), each with the exit code it must give.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { runCli, stderrLines, type CliResult } from '../support/cli.js';
import { orgEnv } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';
import { sandboxForFile } from '../support/sandbox-hooks.js';
import { MANIFEST_KEYS } from '../../src/lake/index.js';
import { camelKeys } from '../../src/shared/json-keys.js';
import { query } from '../transform/helpers.js';

const sandbox = sandboxForFile({ today: '2026-11-22' });
let outDir: string;
let summaryFile: string;
let run: CliResult;
const STREAMS = ['credit', 'groups', 'interactions', 'offers', 'orders', 'redemption_stats', 'users'];

/** Every key of a JSON value, at every depth. */
const keysOf = (v: unknown): string[] =>
  Array.isArray(v)
    ? v.flatMap(keysOf)
    : v && typeof v === 'object'
      ? Object.entries(v).flatMap(([k, x]) => [k, ...keysOf(x)])
      : [];

/** `perks status` at `at`, with the run's environment. */
const status = (at: string, args: string[] = [], extra: Record<string, string> = {}) =>
  runCli(['status', ...args], orgEnv(sandbox(), outDir, { PERKS_NOW: at, ...extra }));

beforeAll(async () => {
  outDir = tempOut('perks-status-');
  summaryFile = join(outDir, '..', `${outDir.split('/').at(-1)}-summary.md`);
  // no write-back: its rows stay as the backlog status reports
  run = await runCli(
    ['run', '--no-writeback', '--quiet'],
    orgEnv(sandbox(), outDir, { GITHUB_STEP_SUMMARY: summaryFile }),
  );
}, 180_000);

describe('perks status', () => {
  test('one hour after the run: every stream and group fresh, with watermark, rows, last run, backlog and months; exit 0', async () => {
    expect(run.code, run.stderr).toBe(0);
    const r = await status('2026-11-22T13:00:00Z', ['--format', 'json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const s = JSON.parse(r.stdout);
    // one key style in every JSON the CLI prints: snake_case, at every depth (docs/reference/operations.md)
    expect(keysOf(s).filter((k) => !/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/.test(k))).toEqual([]);
    expect(keysOf(s)).toEqual(expect.arrayContaining(['last_success_at', 'age_hours', 'to_send', 'in_progress']));
    expect(s).toMatchObject({
      freshness: 'fresh',
      exit_code: 0,
      warn_after_hours: 26,
      error_after_hours: 50,
      message: null,
      runs: 1,
    });
    expect([...new Set(s.streams.map((x: { stream: string }) => x.stream))].sort()).toEqual(STREAMS);
    const groups = sandbox().credentials.organisation.organisation_group_ids;
    for (const x of s.streams) {
      // the run finished a few seconds after its pinned start (the clock runs on from PERKS_NOW)
      expect(x, `${x.stream}/${x.group}`).toMatchObject({
        freshness: 'fresh',
        last_success_at: expect.stringMatching(/^2026-11-22T12:00:\d\d\.\d{3}Z$/),
        last_run: { outcome: 'success' },
      });
      expect(x.age_hours).toBeCloseTo(1, 1);
      expect(x.rows, `${x.stream}/${x.group}`).toBeGreaterThan(0);
      expect(x.group === null ? x.stream === 'offers' : groups.includes(x.group)).toBe(true);
    }
    // windowed streams carry a watermark: the first local day not extracted, today (the run extracts closed days)
    expect(
      s.streams.filter((x: { stream: string }) => x.stream === 'orders').map((x: { watermark: string }) => x.watermark),
    ).toEqual(groups.map(() => '2026-11-22'));
    expect(s.writeback.to_send).toBeGreaterThan(0);
    expect(s.writeback).toMatchObject({ pending: 0, rejected: 0 });
    // lookback 7: October closed once the watermark passed 7 November; November still provisional
    expect(s.months.map((m: { group: number }) => m.group)).toEqual(groups);
    // the first month is partial: the extract started inside it (90 days back)
    for (const m of s.months) {
      expect(m.final.at(-1)).toBe('2026-10');
      expect(m.partial).toEqual(['2026-08']);
      expect(m.provisional).toEqual(['2026-11']);
    }
  });

  test('the text form shows the same, one line per stream and group', async () => {
    const r = await status('2026-11-22T13:00:00Z');
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[1]).toMatch(/^stream\s+group\s+watermark\s+last success\s+age\s+rows\s+last run\s+freshness$/);
    expect(lines.find((l) => l.startsWith('orders '))).toMatch(
      /^orders\s+\d+\s+2026-11-22\s+2026-11-22T12:00:\d\d\.\d{3}Z\s+1\.0h\s+\d+\s+success\s+fresh$/,
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/^write-back backlog: \d+ to send, 0 pending \(outcome unknown\), 0 rejected$/),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^months of group \d+: 2026-08 partial, 2026-09\.\.2026-10 final, 2026-11 provisional; none signed off$/,
      ),
    );
    expect(lines.at(-1)).toBe('freshness: fresh');
  });

  test('30 hours after: past --warn-after 26h, exit 4 and one line naming the stalest stream', async () => {
    const r = await status('2026-11-23T18:00:00Z', ['--warn-after', '26h', '--error-after', '50h']);
    expect(r.code).toBe(4);
    expect(stderrLines(r)).toHaveLength(1);
    expect(r.stderr).toMatch(
      /^perks: data is stale: \w+( of group \d+)? last extracted 30\.0h ago, past --warn-after 26h \(and \d+ more streams or groups\); look at the last runs and rerun `perks run`\n$/,
    );
    expect(r.stdout.trimEnd().split('\n').at(-1)).toMatch(/^freshness: warn: data is stale/);
  });

  test('three days after: past --error-after 50h, exit 1', async () => {
    const r = await status('2026-11-25T12:00:00Z', ['--warn-after', '26h', '--error-after', '50h', '--format', 'json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ freshness: 'error', exit_code: 1 });
    expect(r.stderr).toMatch(/^perks: data is stale: .* last extracted 3\.0d ago, past --error-after 50h/);
  });

  test('the thresholds from the settings, PERKS_WARN_AFTER and PERKS_ERROR_AFTER; the flags win over them', async () => {
    const settings = { PERKS_WARN_AFTER: '90m', PERKS_ERROR_AFTER: '1d' };
    const runs = await Promise.all([
      status('2026-11-22T14:00:00Z', [], settings),
      status('2026-11-23T14:00:00Z', [], settings),
      status('2026-11-22T14:00:00Z', ['--warn-after', '3h'], settings),
    ]);
    expect(runs.map((r) => r.code)).toEqual([4, 1, 0]);
    expect(runs[0].stderr).toMatch(/past --warn-after 90m/);
  });

  test('bad thresholds: one line naming the value, exit 2', async () => {
    const cases: [string[], Record<string, string>, string][] = [
      [['--warn-after', '26'], {}, 'perks: --warn-after="26" is invalid: expected a duration such as 26h, 90m or 2d'],
      [
        ['--warn-after', '2d', '--error-after', '26h'],
        {},
        'perks: --error-after="26h" is invalid: must be at least --warn-after',
      ],
      [
        [],
        { PERKS_ERROR_AFTER: 'soon' },
        'perks: PERKS_ERROR_AFTER="soon" is invalid: expected a duration such as 26h, 90m or 2d',
      ],
      [['--format', 'xml'], {}, 'perks: --format="xml" is invalid: expected text or json'],
    ];
    const runs = await Promise.all(cases.map(([args, env]) => status('2026-11-22T13:00:00Z', args, env)));
    runs.forEach((r, i) => {
      expect(r.code).toBe(2);
      expect(stderrLines(r)).toEqual([cases[i][2]]);
    });
  });

  test('an output directory no extract has run into: exit 1, and what to do', async () => {
    const empty = tempOut('perks-status-empty-');
    const r = await runCli(['status'], { PERKS_OUTPUT: empty });
    expect(r.code).toBe(1);
    expect(stderrLines(r)).toEqual([`perks: no extract has run into ${empty} yet: run \`perks run\``]);
  });

  test("each month once in the marts' words, a month finance signed off (perks close) as signed off; a record that does not verify: unknown, and the status still answers", async () => {
    const closed = await runCli(
      ['close', '--month', '2026-10', '--group', '11', '--by', 'A. Controller', '--no-reread'],
      orgEnv(sandbox(), outDir, { PERKS_NOW: '2026-11-22T13:00:00Z' }),
    );
    expect(closed.code, closed.stderr).toBe(0);
    const s = JSON.parse((await status('2026-11-22T13:30:00Z', ['--format', 'json'])).stdout);
    for (const m of s.months) expect(m.signed_off, `group ${m.group}`).toEqual(m.group === 11 ? ['2026-10'] : []);
    // the extract's lists keep October final (its data); month_states says what the marts' month_state says
    const eleven = s.months.find((m: { group: number }) => m.group === 11);
    expect(eleven.final).toEqual(['2026-09', '2026-10']);
    expect(eleven.month_states).toEqual([
      { month: '2026-08', state: 'partial' },
      { month: '2026-09', state: 'final' },
      { month: '2026-10', state: 'signed_off' },
      { month: '2026-11', state: 'provisional' },
    ]);
    const marts = await query(
      join(outDir, 'warehouse.duckdb'),
      `SELECT DISTINCT strftime(month, '%Y-%m') AS month, CAST(month_state AS VARCHAR) AS state FROM revenue_monthly
       WHERE organisation_group_id = 11 ORDER BY 1`,
    );
    expect(marts.length).toBeGreaterThanOrEqual(3);
    expect(eleven.month_states).toEqual(expect.arrayContaining(marts));
    const lines = (await status('2026-11-22T13:30:00Z')).stdout.split('\n');
    expect(lines).toContain(
      'months of group 11: 2026-08 partial, 2026-09 final, 2026-10 signed off, 2026-11 provisional',
    );
    const record = join(outDir, 'closes', 'closes.jsonl');
    const original = readFileSync(record, 'utf8');
    try {
      writeFileSync(record, original.replace('A. Controller', 'B. Controller'));
      const broken = await status('2026-11-22T13:30:00Z');
      expect(broken.code).toBe(0);
      expect(broken.stdout).toContain(
        'months of group 11: 2026-08 partial, 2026-09..2026-10 final, 2026-11 provisional; signed off unknown (the close record does not verify: see `perks closes`)',
      );
    } finally {
      writeFileSync(record, original);
    }
  });

  // Last: it adds a run. A later run whose orders failed for one group, written as the previous release wrote
  // manifests (<out>/runs/<run_id>.json, the output contract, in camelCase until issue 43): still read, and that
  // group's orders keep their earlier success.
  test('a later run that failed for one group, its manifest in the old camelCase: shown as its last run, and that group goes stale first', async () => {
    const [first] = readdirSync(join(outDir, 'runs'));
    const written = JSON.parse(readFileSync(join(outDir, 'runs', first), 'utf8'));
    // this release writes snake_case at every depth, but for data (stream and field names)
    expect(written).toMatchObject({
      run_id: first.slice(0, -5),
      finished_at: expect.any(String),
      perks_version: expect.any(String),
    });
    expect(
      keysOf({ ...written, schema: undefined, unknown_fields: undefined, api: undefined }).filter((k) =>
        /[A-Z]/.test(k),
      ),
    ).toEqual([]);
    const manifest = camelKeys(written, MANIFEST_KEYS) as Record<string, unknown> & {
      streams: Record<string, unknown>[];
    };
    expect(manifest.runId).toBe(first.slice(0, -5));
    const orders = manifest.streams.find((x) => x.name === 'orders')!;
    Object.assign(orders, {
      status: 'error',
      failedGroups: [11],
      error: 'orders of group 11: HTTP 500 after 8 attempts',
    });
    orders.groups = (orders.groups as { group: number }[]).filter((g) => g.group !== 11);
    Object.assign(manifest, { runId: 'later', status: 'error', finishedAt: '2026-11-23T12:00:05.000Z' });
    writeFileSync(join(outDir, 'runs', 'later.json'), JSON.stringify(manifest));

    const fresh = JSON.parse((await status('2026-11-23T13:00:00Z', ['--format', 'json'])).stdout);
    const o11 = fresh.streams.find((x: { stream: string; group: number }) => x.stream === 'orders' && x.group === 11);
    expect(o11).toMatchObject({
      last_run: { run_id: 'later', outcome: 'error', error: 'orders of group 11: HTTP 500 after 8 attempts' },
      freshness: 'fresh',
    });
    expect(o11.last_success_at).toMatch(/^2026-11-22T12:00:/);
    expect(
      fresh.streams.find((x: { stream: string; group: number }) => x.stream === 'orders' && x.group === 12),
    ).toMatchObject({
      last_success_at: '2026-11-23T12:00:05.000Z',
      last_run: { outcome: 'success' },
    });
    expect(fresh).toMatchObject({ freshness: 'fresh', runs: 2, last_run: { run_id: 'later', status: 'error' } });

    const stale = await status('2026-11-23T15:00:00Z');
    expect(stale.code).toBe(4);
    expect(stderrLines(stale)).toEqual([
      expect.stringMatching(
        /^perks: data is stale: orders of group 11 last extracted 27\.0h ago, past --warn-after 26h; look at the last runs/,
      ),
    ]);
  });

  // After the later run: a build that fails leaves the marts behind the lake, and status says so.
  test('a failed build behind a fresh extract: the marts are stale (warn, exit 4), naming the failure and how far behind', async () => {
    const before = JSON.parse((await status('2026-11-23T13:00:00Z', ['--format', 'json'])).stdout);
    expect(before.marts).toMatchObject({ extracts_behind: 1, last_attempt: { outcome: 'success' } });
    expect(before.marts_freshness).toBe('fresh');

    const credit = (readdirSync(join(outDir, 'lake', 'credit'), { recursive: true }) as string[]).find((f) =>
      f.endsWith('.parquet'),
    )!;
    const file = join(outDir, 'lake', 'credit', credit);
    const original = readFileSync(file);
    try {
      writeFileSync(file, 'not parquet');
      const build = await runCli(['build'], orgEnv(sandbox(), outDir, { PERKS_NOW: '2026-11-23T13:10:00Z' }));
      expect(build.code).toBe(1);
      const r = await status('2026-11-23T13:30:00Z');
      expect(r.code).toBe(4);
      // the marts were last built by the close of the test above (at 13:00 the day before): a close rebuilds them
      expect(stderrLines(r)).toEqual([
        expect.stringMatching(
          /^perks: marts and reports are stale: as built 24\.\dh ago \(2026-11-22T13:00:\d\d\.\d{3}Z\), 1 extract run behind the lake; the last build failed at 2026-11-23T13:10:\d\d\.\d{3}Z: the lake stream credit .* cannot be read: .*; fix it and rerun `perks build`$/,
        ),
      ]);
      expect(r.stdout).toMatch(
        /^marts: built 2026-11-22T13:00:\d\d\.\d{3}Z \(24\.\dh ago\), 1 extract run behind the lake; last build FAILED at 2026-11-23T13:10:\d\d\.\d{3}Z: the lake stream credit .* \(warn\)$/m,
      );
      // two days on, the marts alone are past --error-after
      const later = JSON.parse((await status('2026-11-24T16:00:00Z', ['--format', 'json'])).stdout);
      expect(later.marts_freshness).toBe('error');
    } finally {
      writeFileSync(file, original);
    }
  });

  test('perks run appends the freshness table to GITHUB_STEP_SUMMARY, after its own summary', () => {
    const md = readFileSync(summaryFile, 'utf8');
    expect(md.indexOf('## Perks data refresh')).toBeGreaterThanOrEqual(0);
    expect(md.indexOf('## Perks data freshness: fresh')).toBeGreaterThan(md.indexOf('## Perks data refresh'));
    expect(md).toMatch(
      /\| orders \| \d+ \| 2026-11-22 \| 2026-11-22T12:00:\d\d\.\d{3}Z \| 0\.0h \| \d+ \| success \| fresh \|/,
    );
    expect(md).toMatch(/Write-back backlog: \d+ to send, 0 pending \(outcome unknown\), 0 rejected\./);
  });
});
