import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, test } from 'vitest';
import { alertExtract, alertStatus, ALERT_KINDS } from '../../src/alerts/index.js';
import { loadConfig } from '../../src/config/index.js';
import { extract, shiftDay } from '../../src/extract/index.js';
import { oweErasures, withLakeConnection } from '../../src/lake/index.js';
import { closesPath } from '../../src/closes/index.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { clockFrom, setClock, type Clock } from '../../src/shared/clock.js';
import { collectStatus, judge } from '../../src/status/index.js';
import { runCli } from '../support/cli.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { orgEnv, withSandbox } from '../support/sandbox.js';
import { withScratch } from '../support/scratch.js';
import { outputAt } from '../../src/output/index.js';

const TODAY = '2026-11-22';
const noon = (day: string) => new Date(`${day}T12:00:00Z`);
const THRESHOLDS = { warnAfterHours: 26, errorAfterHours: 50 };

let moved: { before: Clock | undefined } | undefined;
const receivers: Receiver[] = [];
const receiver = async (answer?: Receiver['answer']) => {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
};
/** The program's clock at `at` (the once-a-day rule reads it), as PERKS_NOW would pin it. */
function at(iso: string): void {
  const before = setClock(clockFrom(new Date(iso)));
  moved ??= { before };
}

afterEach(async () => {
  if (moved) setClock(moved.before);
  moved = undefined;
  while (receivers.length) await receivers.pop()!.close();
});

/** The personal values the lake holds (e-mails, full names): no alert may carry one. */
async function personalValues(outDir: string): Promise<string[]> {
  return withLakeConnection(async (c) => {
    const r = await c.runAndReadAll(
      `SELECT DISTINCT email AS v FROM read_parquet($g, union_by_name = true) WHERE email IS NOT NULL
       UNION SELECT DISTINCT first_name || ' ' || last_name FROM read_parquet($g, union_by_name = true) WHERE last_name IS NOT NULL`,
      { g: `${outDir}/lake/orders/**/*.parquet` },
    );
    return r.getRowObjectsJS().map((x) => x.v as string);
  });
}

describe('alerts', () => {
  test('an extract that quarantines above the threshold and meets a new field posts its outcome, the quarantine and each stream’s schema change as JSON (kind, severity, one line, run id, figures), with no secret and no personal value; stale data alerts once a day, not once per run; a close record that does not verify and an erasure queue not drained are told', async () => {
    const hook = await receiver();
    const token = `CanaryHook${randomBytes(6).toString('hex')}`;
    await withSandbox({ seed: 5, today: TODAY }, (sandbox) =>
      withScratch('alerts', async (scratch) => {
        const out = scratch.dir();
        const config = loadConfig(
          orgEnv(sandbox, out, {
            PERKS_START_DATE: shiftDay(TODAY, -3),
            PERKS_ALERT_WEBHOOK: `${hook.url}/hooks/${token}`,
          }),
        );
        at(`${TODAY}T12:00:00Z`);
        const first = await extract(config, { output: outputAt(out), now: noon(TODAY), streams: ['orders'] });
        expect(first.exitCode).toBe(0);
        // a first run is the schema's baseline: nothing to tell
        expect(await alertExtract(config, outputAt(out), first)).toEqual({
          events: 0,
          sent: 0,
          repeated: 0,
          webhooks: 1,
          problems: [],
        });
        expect(hook.got).toEqual([]);

        const day = shiftDay(TODAY, 1);
        sandbox.advance(1);
        sandbox.setFaults({ schemaDrift: ['newField'], driftRate: 0.3 });
        at(`${day}T12:00:00Z`);
        const second = await extract(config, { output: outputAt(out), now: noon(day), streams: ['orders'] });
        sandbox.setFaults({ schemaDrift: [], driftRate: 0 });
        expect(second.exitCode).toBe(4);
        const outcome = await alertExtract(config, outputAt(out), second);
        const bodies = hook.json();
        expect(outcome).toMatchObject({ sent: bodies.length, repeated: 0, problems: [] });
        expect(new Set(bodies.map((b) => b.kind))).toEqual(new Set(['quarantine', 'run_partial', 'schema_change']));
        // one schema event per stream that changed: orders (tax_amount, and drift's drift_note), its history, …
        const streams = bodies
          .filter((b) => b.kind === 'schema_change')
          .map((b) => (b.figures as { stream: string }).stream);
        expect(streams).toEqual(expect.arrayContaining(['orders', 'order_versions']));
        expect(new Set(streams).size).toBe(streams.length);
        for (const b of bodies) {
          expect(Object.keys(b).sort()).toEqual([
            'at',
            'condition',
            'figures',
            'kind',
            'run_id',
            'severity',
            'source',
            'text',
          ]);
          expect(b).toMatchObject({ source: 'perks-pipeline', run_id: second.runId });
          expect(ALERT_KINDS).toContain(b.kind);
          expect(String(b.text)).not.toMatch(/\n/);
        }
        expect(
          hook.got.every((g) => g.path === `/hooks/${token}` && g.headers['content-type'] === 'application/json'),
        ).toBe(true);
        const orders = bodies.find(
          (b) => b.kind === 'schema_change' && (b.figures as { stream: string }).stream === 'orders',
        )!;
        expect(orders).toMatchObject({
          severity: 'info',
          figures: { new: expect.arrayContaining(['tax_amount']), since: day },
        });
        expect(orders.text).toContain(`field \`tax_amount\` (number) first seen ${day}`);
        expect(bodies.find((b) => b.kind === 'quarantine')!.text).toMatch(
          /^quarantined \d+ of \d+ records .*above the 0\.1% threshold/,
        );
        expect(bodies.find((b) => b.kind === 'run_partial')!.text).toMatch(
          new RegExp(`^perks extract ${second.runId} finished partial \\(exit 4\\): quarantined \\d+ of`),
        );
        const everything = hook.got.map((g) => g.body).join('\n');
        for (const secret of [config.clientSecret!, token]) expect(everything).not.toContain(secret);
        expect(everything).not.toContain('@');
        for (const value of await personalValues(out)) expect(everything).not.toContain(value);

        // Stale: 27 hours after the run, alerted; five hours later the same condition is not repeated; the next day it is.
        const stale = async (iso: string) => {
          at(iso);
          const report = await collectStatus(outputAt(out), config, new Date(iso));
          const before = hook.got.length;
          const o = await alertStatus(config, outputAt(out), report, judge(report, THRESHOLDS));
          return { o, posted: hook.json().slice(before) };
        };
        const once = await stale(`${shiftDay(day, 1)}T15:00:00Z`);
        expect(once.posted.map((b) => [b.kind, b.severity])).toEqual([['data_stale', 'warning']]);
        expect(once.posted[0].text).toMatch(/^data is stale: .* last extracted 27\.0h ago, past --warn-after 26h/);
        expect(once.posted[0].run_id).toBeNull();
        const again = await stale(`${shiftDay(day, 1)}T20:00:00Z`);
        expect(again).toMatchObject({ o: { events: 1, sent: 0, repeated: 1 }, posted: [] });
        const nextDay = await stale(`${shiftDay(day, 2)}T01:00:00Z`);
        expect(nextDay.posted.map((b) => b.kind)).toEqual(['data_stale']);

        // A close record changed outside perks, and a user still owed an erasure: both told, the path as <out>.
        mkdirSync(dirname(closesPath(out)), { recursive: true });
        writeFileSync(closesPath(out), 'not a close record\n');
        await oweErasures(out, 11, [
          { id: 7, group: 11, keys: ['0'.repeat(64)], observed_at: noon(day).toISOString() },
        ]);
        const more = await stale(`${shiftDay(day, 2)}T02:00:00Z`);
        expect(more.posted.map((b) => [b.kind, b.severity, b.text])).toEqual([
          [
            'close_record',
            'error',
            'the close record does not verify: <out>/closes/closes.jsonl line 1 is not JSON; the record was changed outside perks: restore it from a backup (nothing was written)',
          ],
          [
            'erasure_pending',
            'error',
            'the erasure queue is not drained: 1 user anonymised upstream still to be forgotten in group 11: run `perks forget --anonymised`',
          ],
        ]);
      }),
    );
  }, 300_000);

  test('a malformed URL, a webhook that hangs, one that answers 500 and one that answers 400: each named once in the summary, the hanging and failing ones tried 3 times within the bound, the 400 once; the extract’s exit code is unchanged', async () => {
    const [hang, fail, reject] = [await receiver('hang'), await receiver('fail'), await receiver('reject')];
    const token = `CanaryHook${randomBytes(6).toString('hex')}`;
    await withSandbox({ seed: 5, today: TODAY }, async (sandbox) => {
      sandbox.setFaults({ driftRate: 0.3 }); // quarantine above the threshold: exit 4, and something to tell
      await withScratch('alerts-bad', async (scratch) => {
        const env = orgEnv(sandbox, scratch.dir(), {
          PERKS_START_DATE: shiftDay(TODAY, -2),
          PERKS_ALERT_WEBHOOK: `htps:/nowhere/${token}, ${hang.url}/a/${token},${fail.url}/b/${token} ${reject.url}/c/${token}`,
          PERKS_ALERT_TIMEOUT: '0.3',
        });
        const r = await runCli(['extract', '--streams', 'orders', '--quiet'], env);
        expect(r.code, r.stderr).toBe(4);
        const lines = r.stdout.split('\n').filter((l) => l.includes('alerts:'));
        expect(lines).toEqual([
          expect.stringMatching(/^ {2}alerts: 0 sent to 3 webhooks$/),
          expect.stringContaining('PERKS_ALERT_WEBHOOK: webhook 1 of 4 is not an http(s) URL'),
          expect.stringMatching(
            /webhook 2 \(http:\/\/127\.0\.0\.1:\d+\/…\) did not take 2 alerts: no answer within 0\.3 s \(PERKS_ALERT_TIMEOUT\) after 3 attempts/,
          ),
          expect.stringMatching(
            /webhook 3 \(http:\/\/127\.0\.0\.1:\d+\/…\) did not take 2 alerts: HTTP 500 after 3 attempts/,
          ),
          expect.stringMatching(
            /webhook 4 \(http:\/\/127\.0\.0\.1:\d+\/…\) did not take 2 alerts: HTTP 400; check the webhook/,
          ),
        ]);
        expect([hang.got.length, fail.got.length, reject.got.length]).toEqual([3, 3, 1]);
        expect(r.stdout + r.stderr).not.toContain(token);
      });
    });
  }, 300_000);

  test('perks alert test: a sample in the Slack form; no webhook, or a malformed one, exit 2 in one line (perks status --alert too); a webhook answering 500 exit 1', async () => {
    const hook = await receiver();
    const ok = await runCli(['alert', 'test'], { PERKS_ALERT_WEBHOOK: `${hook.url}/x`, PERKS_ALERT_FORMAT: 'slack' });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toBe('alerts: 1 sent to 1 webhook\n');
    expect(hook.json()).toEqual([
      { text: expect.stringMatching(/^\[perks\] info test: a test alert from `perks alert test`/) },
    ]);

    const none = await runCli(['alert', 'test'], {});
    const statusNone = await runCli(['status', '--alert', '--output', '/nonexistent-perks-out'], {});
    expect([statusNone.code, statusNone.stderr]).toEqual([
      2,
      'perks: --alert: PERKS_ALERT_WEBHOOK is not set: set it to the webhook URL(s) to post to, or drop --alert\n',
    ]);
    expect([none.code, none.stderr]).toEqual([
      2,
      expect.stringMatching(/^perks: alerts: PERKS_ALERT_WEBHOOK is not set: .*\n$/),
    ]);
    const bad = await runCli(['alert', 'test'], { PERKS_ALERT_WEBHOOK: 'hooks.example.com/secret-path' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^perks: alerts: PERKS_ALERT_WEBHOOK: webhook 1 of 1 is not an http\(s\) URL .*\n$/);
    expect(bad.stderr).not.toContain('secret-path');
    const failing = await receiver('fail');
    const down = await runCli(['alert', 'test'], { PERKS_ALERT_WEBHOOK: failing.url, PERKS_ALERT_TIMEOUT: '1' });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(
      /^perks: alerts: webhook 1 \(http:\/\/127\.0\.0\.1:\d+\/…\) did not take the alert: HTTP 500 after 3 attempts/,
    );
  }, 180_000);
});
