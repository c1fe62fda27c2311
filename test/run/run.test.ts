import { describe, expect, test } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parse } from 'yaml';
import { DuckDBInstance } from '@duckdb/node-api';
import { commands } from '../../src/commands/index.js';
import { writePendingJournal } from '../writeback/fixtures.js';
import { startReceiver } from '../support/receiver.js';
import { SANDBOX_DEFAULTS, sandboxEnv } from '../support/sandbox.js';
import { sandboxForTest } from '../support/sandbox-hooks.js';
import { tempOut } from '../support/scratch.js';
import { now, todayUtc } from '../../src/shared/clock.js';
import { shiftDay } from '../../src/extract/index.js';

function perks(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PERKS_')));
  const child = spawn(process.execPath, ['bin/perks.mjs', ...args], {
    // none of the developer's PERKS_* values; the command starts at this process's instant (its clock, pinned by
    // vitest.config.ts, which the sandboxes started here follow), whatever the day the suite runs
    env: { ...clean, PERKS_NOW: now().toISOString(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

const out = () => tempOut('perks-run-');

describe('the whole job, for the people who use it', () => {
  test('the demo runs everything against the embedded sandbox and the report equals the mart', async () => {
    const dir = out();
    const r = await perks(['demo', '--scale', 'tiny', '--output', dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('limit is raised');
    // off a terminal (a pipe here), progress is a line per stream, not an event per window (--progress json)
    const progress = r.stderr.trimEnd().split('\n');
    expect(progress.length, r.stderr).toBeLessThanOrEqual(12);
    expect(progress.filter((l) => l.startsWith('{'))).toEqual([]);
    expect(progress).toContainEqual(expect.stringMatching(/^orders +success +\d+ rows, \d+ calls, \d+ ms$/));
    expect(existsSync(join(dir, 'warehouse.duckdb'))).toBe(true);
    for (const mart of ['revenue_monthly', 'savings_monthly', 'engagement_users', 'engagement_monthly']) {
      expect(existsSync(join(dir, 'marts', `${mart}.parquet`)), mart).toBe(true);
    }
    const csv = readdirSync(join(dir, 'reports')).find((f) => f.endsWith('.csv'))!;
    expect(readdirSync(join(dir, 'reports')).filter((f) => /\.(html|md)$/.test(f)).length).toBe(2);
    const month = csv.match(/revenue-(\d{4}-\d{2})\.csv/)![1];
    // it ends with what to open and run next, on the folder it wrote (--output)
    const next = r.stdout.slice(r.stdout.lastIndexOf('\nnext:\n'));
    expect(next).toContain(`\n    ${join(dir, 'reports', `revenue-${month}.html`)}\n`);
    expect(next).toContain(`\n    PERKS_OUTPUT=${dir} npx perks report revenue --month ${month} --format pdf\n`);
    expect(next).toContain(`\n    PERKS_OUTPUT=${dir} npx perks close --month ${month} --by "your name"\n`);
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    const compare = await c.runAndReadAll(
      `WITH report AS (
         SELECT organisation_group_id::BIGINT AS g, order_currency AS cur, sum(group_revenue::DECIMAL(18,2)) AS revenue, sum(orders::BIGINT) AS orders
         FROM read_csv($csv, header = true, all_varchar = true) GROUP BY ALL),
       mart AS (
         SELECT organisation_group_id AS g, order_currency AS cur, sum(group_revenue) AS revenue, sum(orders) AS orders
         FROM read_parquet($mart) WHERE month = $month::DATE GROUP BY ALL)
       SELECT count(*) AS differences FROM report FULL JOIN mart USING (g, cur)
       WHERE report.revenue IS DISTINCT FROM mart.revenue OR report.orders IS DISTINCT FROM mart.orders`,
      { csv: join(dir, 'reports', csv), mart: join(dir, 'marts', 'revenue_monthly.parquet'), month: `${month}-01` },
    );
    expect(Number(compare.getRowObjectsJS()[0].differences)).toBe(0);
    // the summary names each mart with the rows its Parquet file holds, and the write-back's calls
    for (const mart of ['revenue_monthly', 'savings_monthly', 'engagement_users', 'engagement_monthly']) {
      const counted = await c.runAndReadAll(`SELECT count(*) AS n FROM read_parquet($file)`, {
        file: join(dir, 'marts', `${mart}.parquet`),
      });
      expect(r.stdout).toMatch(new RegExp(`\\n  ${mart} +${Number(counted.getRowObjectsJS()[0].n)} rows\\n`));
    }
    expect(r.stdout).toMatch(/writeback +success .* \d+ sent, 0 rejected, \d+ calls/);
    c.closeSync();
  });

  test('a run over less than a month of history succeeds, says there is no month to report yet, and writes the CI job summary', async () => {
    const sandbox = await sandboxForTest({ ...SANDBOX_DEFAULTS, rateLimit: 1_000_000 });
    // Up to five days of this month only (on the 1st: nothing closed yet), so no month has data before it.
    const today = todayUtc();
    const fiveDaysBack = new Date(now().getTime() - 5 * 86_400_000).toISOString().slice(0, 10);
    const start = fiveDaysBack.slice(0, 7) === today.slice(0, 7) ? fiveDaysBack : `${today.slice(0, 7)}-01`;
    const summary = join(out(), 'step-summary.md');
    const r = await perks(['run', '--quiet'], {
      ...sandboxEnv(sandbox, out(), 1_000_000),
      PERKS_START_DATE: start,
      GITHUB_STEP_SUMMARY: summary,
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/report\s+success.*no month to report yet/);
    // the CI job summary (GitHub Actions): steps, streams and marts as Markdown tables
    const md = readFileSync(summary, 'utf8');
    expect(md).toContain('## Perks data refresh');
    expect(md).toMatch(/\| report \| success \| [\d.]+ s \| no month to report yet/);
    expect(md).toMatch(/\| orders \| success \| \d+ \| \d+ \| 0 \|/);
    expect(md).toMatch(/\| engagement_users \| \d+ \|/);
    expect(md).toContain('Exit code 0.');
  });

  test('a write-back pending row that cannot be resolved and PERKS_WRITEBACK_LIMIT: the run is partial (exit 4), capped, still reports, and alerts the webhook', async () => {
    const sandbox = await sandboxForTest({ ...SANDBOX_DEFAULTS, rateLimit: 1_000_000 });
    const hook = await startReceiver();
    try {
      const org = sandbox.credentials.organisation;
      const dir = out();
      // A row a crashed run left pending, for a user the platform does not know: its listing answers 404.
      writePendingJournal(
        dir,
        [
          {
            interaction_id: 4_503_599_627_370_000,
            organisation_group_id: org.organisation_group_ids[0],
            identifier: 'id',
            identifier_value: '987654321',
            kind: 'segment_change',
            interaction_type: 'segment_change',
            interaction_at: now().toISOString(),
            interaction_details: {},
          },
        ],
        '',
        new Date(now().getTime() - 60_000),
      );
      const r = await perks(['run', '--quiet', '--writeback-limit', '5'], {
        ...sandboxEnv(sandbox, dir, 1_000_000),
        PERKS_START_DATE: shiftDay(todayUtc(), -3),
        PERKS_WRITEBACK_LIMIT: '1000', // the flag wins
        PERKS_ALERT_WEBHOOK: `${hook.url}/run`,
      });
      expect(r.code, r.stdout + r.stderr).toBe(4);
      // the run's outcome and the backlog it leaves, posted once each; the exit code is the run's
      const [outcome, backlog] = hook.json();
      expect(outcome).toMatchObject({
        kind: 'run_partial',
        severity: 'warning',
        condition: 'run_partial:perks run:writeback',
      });
      expect(outcome.text).toMatch(/^perks run \S+ finished partial \(exit 4\): writeback: 5 sent, 0 rejected/);
      expect(backlog).toMatchObject({ kind: 'writeback_backlog', figures: { rejected: 0, pending: 1, threshold: 0 } });
      expect(r.stdout).toMatch(new RegExp(`\nalerts: ${hook.got.length} sent to 1 webhook\nexit code 4\n$`));
      expect(r.stdout).toMatch(
        /writeback\s+success.*5 sent, 0 rejected, \d+ calls, 1 pending unresolved \(cannot tell whether it was stored: .*HTTP 404.*\), \d+ left for the next run/,
      );
      expect(r.stdout).toMatch(/report\s+success/);
      const bad = await perks(['run', '--writeback-limit', '-1'], { PERKS_OUTPUT: dir });
      expect(bad.code).toBe(2);
      expect(bad.stderr.trim().split('\n')).toEqual([
        'perks: --writeback-limit="-1" is invalid: expected a whole number of rows, 0 or more',
      ]);
    } finally {
      await hook.close();
    }
  });

  test('a malformed setting exits 2 with one line naming the variable', async () => {
    const r = await perks(['extract'], {
      PERKS_BASE_URL: 'http://127.0.0.1:9',
      PERKS_CLIENT_ID: '1',
      PERKS_CLIENT_SECRET: 'x',
      PERKS_RATE_LIMIT: 'fast',
      PERKS_OUTPUT: out(),
    });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('PERKS_RATE_LIMIT');
  });

  test('a missing base URL exits 2 and says how to run offline', async () => {
    const r = await perks(['run'], { PERKS_OUTPUT: out() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/PERKS_BASE_URL is not set/);
  });

  test('refused credentials exit 3 and never print the secret', async () => {
    const sandbox = await sandboxForTest(SANDBOX_DEFAULTS);
    const cred = sandbox.credentials.group[0];
    const r = await perks(['run'], {
      PERKS_BASE_URL: sandbox.baseUrl,
      PERKS_CLIENT_ID: String(cred.client_id),
      PERKS_CLIENT_SECRET: 'canary-wrong-secret-7731',
      PERKS_OUTPUT: out(),
      PERKS_DEBUG: '1',
    });
    expect(r.code).toBe(3);
    expect(r.stdout + r.stderr).not.toContain('canary-wrong-secret-7731');
    expect(r.stdout + r.stderr).toMatch(/refused the client credentials/);
  });

  test('perks check says in words what works, with few calls, and names a configured rate above the one the API reports', async () => {
    const sandbox = await sandboxForTest({ ...SANDBOX_DEFAULTS, rateLimit: 600 });
    const org = sandbox.credentials.organisation;
    const env = {
      PERKS_BASE_URL: sandbox.baseUrl,
      PERKS_CLIENT_ID: String(org.client_id),
      PERKS_CLIENT_SECRET: org.client_secret,
      PERKS_OUTPUT: out(),
    };
    const ok = await perks(['check'], { ...env, PERKS_RATE_LIMIT: '120' });
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^ok {3}token: obtained \(1 token request\); organisation-level credential$/m);
    for (const g of org.organisation_group_ids) expect(ok.stdout).toMatch(new RegExp(`^ok {3}group ${g}: `, 'm'));
    expect(ok.stdout).toMatch(
      /^ok {3}rate limit: the API reports 600 calls\/min \(X-RateLimit-Limit, \d+ left\); pacing at 118 calls\/min \(configured 120\)$/m,
    );
    expect(Number(/(\d+) calls made/.exec(ok.stdout)![1])).toBeLessThanOrEqual(3);
    expect(ok.stdout).not.toContain(org.client_secret);
    const high = await perks(['check'], { ...env, PERKS_RATE_LIMIT: '1000' });
    expect(high.code).toBe(2);
    expect(high.stdout).toMatch(
      /^FAIL rate limit: the API reports 600 calls\/min \(X-RateLimit-Limit\), below the configured 1000: set PERKS_RATE_LIMIT=600/m,
    );
  });

  test('an unreachable API exits 1 with a message saying so', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const r = await perks(['check'], {
      PERKS_BASE_URL: `http://127.0.0.1:${port}`,
      PERKS_CLIENT_ID: '1',
      PERKS_CLIENT_SECRET: 'secret-unused',
      PERKS_OUTPUT: out(),
    });
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toMatch(/could not reach the API/);
  });

  test('the scheduled workflow is valid YAML and calls commands that exist', () => {
    const workflow = parse(readFileSync('.github/workflows/refresh.yml', 'utf8'));
    expect(workflow.on.schedule[0].cron).toMatch(/^[\d*/ ,-]+$/);
    const names = new Set(
      commands.flatMap((c) => (Array.isArray(c.command) ? c.command : [c.command])).map((c) => String(c).split(' ')[0]),
    );
    const runs: string[] = workflow.jobs.refresh.steps
      .filter((s: { run?: string }) => s.run)
      .map((s: { run: string }) => s.run);
    const perksCalls = runs.filter((r) => r.startsWith('npx perks'));
    expect(perksCalls.length).toBeGreaterThan(0);
    for (const call of perksCalls) expect(names.has(call.split(' ')[2]), call).toBe(true);
    for (const secret of ['PERKS_CLIENT_ID', 'PERKS_CLIENT_SECRET', 'PERKS_BASE_URL'])
      expect(workflow.jobs.refresh.env[secret]).toMatch(/secrets\./);
  });
});

describe('perks run after a failed extract', () => {
  test('its summary lists only files that exist: no warehouse or marts when the extract failed before any was built', async () => {
    const sandbox = await sandboxForTest({ ...SANDBOX_DEFAULTS, today: '2026-11-22' });
    const dir = out();
    const o = sandbox.credentials.organisation;
    const r = await perks(['run', '--quiet', '--no-writeback'], {
      PERKS_BASE_URL: sandbox.baseUrl,
      PERKS_CLIENT_ID: String(o.client_id),
      PERKS_CLIENT_SECRET: 'not-the-secret',
      PERKS_GROUP_IDS: o.organisation_group_ids.join(','),
      PERKS_OUTPUT: dir,
      PERKS_NOW: '2026-11-22T12:00:00Z',
    });
    expect(r.code).toBe(3);
    expect(existsSync(join(dir, 'warehouse.duckdb'))).toBe(false);
    expect(r.stdout).not.toContain('warehouse.duckdb');
    expect(r.stdout).not.toMatch(/marts +\//);
  });
});
