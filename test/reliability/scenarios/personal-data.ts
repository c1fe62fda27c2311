/**
 * 10. Personal data: a user with orders in the lake is anonymised upstream; after the next `perks run`
 * (on the next day, so the earlier users snapshot is superseded, not replaced), every value of every
 * file of the output (lake with its old snapshots and old windows, quarantine, warehouse, marts,
 * reports, state, run files) is searched for the user's email and for rows holding both their names.
 * A second user (an erasure request, say) is forgotten on request with `perks forget --user <id>`.
 * The orders also carry a personal field the project does not declare (`contact_phone`, the sandbox's
 * personalField drift): it lands in `_extra` (and the order history's), and must go too.
 */
import { join } from 'node:path';
import { clientFromConfig } from '../../../src/api/index.js';
import { shiftDay } from '../../../src/extract/index.js';
import { quarantineRecord, withLakeConnection } from '../../../src/lake/index.js';
import { runPipeline } from '../../../src/run/index.js';
import type { Sandbox } from '../../../src/sandbox/index.js';
import { contactPhoneOf } from '../../../src/sandbox/http/schema-drift.js';
import { runCli } from '../../support/cli.js';
import { searchOutput, type Hit } from '../../support/decode.js';
import { lakeKeys, missingAgainst } from '../../support/lake-check.js';
import { orgConfig, orgEnv, withSandbox } from '../../support/sandbox.js';
import { withScratch } from '../../support/scratch.js';
import { row, type Row, type ScenarioOptions } from '../table.js';
import { outputAt } from '../../../src/output/index.js';

const TODAY = '2026-11-22';
const START = '2026-10-01';
const noon = (day: string) => new Date(`${day}T12:00:00Z`);

interface Person {
  id: number;
  group: number;
  email: string;
  first: string;
  last: string;
}

export async function personalDataScenario(o: ScenarioOptions): Promise<Row[]> {
  return withSandbox({ seed: 71, today: TODAY }, (sandbox) =>
    withScratch('personal', async (scratch) => {
      const out = scratch.dir();
      const config = orgConfig(sandbox, out, { PERKS_START_DATE: START });
      sandbox.setFaults({ schemaDrift: ['personalField'] });
      const first = await runPipeline(config, { output: outputAt(out), now: noon(TODAY) });
      if (first.exitCode !== 0)
        return [
          row(
            'personal data',
            1,
            [`the first run exited ${first.exitCode}: ${first.steps.map((s) => `${s.name} ${s.detail}`).join('; ')}`],
            'not measured',
          ),
        ];
      const [a, b] = await peopleWithOldOrders(sandbox, out, 2);
      const before = await searchOutput(out, [a.email, contactPhoneOf(a.email)], [a.first, a.last]);
      await anonymise(sandbox, config, a);

      // The next day's run: users anonymised upstream must leave no trace of their names or email.
      sandbox.advance(1);
      const next = await runPipeline(config, { output: outputAt(out), now: noon(shiftDay(TODAY, 1)) });
      const afterRun = await searchOutput(out, [a.email, contactPhoneOf(a.email)], [a.first, a.last]);
      o.log(`personal data: before ${describe(before.hits)}; after the next run ${describe(afterRun.hits)}`);

      // On request, without waiting for a run: `perks forget --user <id>`; a rejected record of theirs is in quarantine too.
      await quarantineRecord({
        outDir: out,
        stream: 'orders',
        runId: 'personal-data',
        record: { order_id: 1, first_name: b.first, last_name: b.last, email: b.email, face_value: 'n/a' },
        reason: 'face_value: not a number',
      });
      const beforeForget = await searchOutput(out, [b.email, contactPhoneOf(b.email)], [b.first, b.last]);
      const keysBefore = await lakeKeys(out);
      const forgotten = await runCli(['forget', '--user', String(b.id)], orgEnv(sandbox, out));
      const keysAfter = await lakeKeys(out);
      const afterForget = await searchOutput(out, [b.email, contactPhoneOf(b.email)], [b.first, b.last]);
      o.log(
        `personal data: perks forget --user ${b.id}: exit ${forgotten.code}; ${forgotten.stdout.trim().split('\n').join(' / ')}`,
      );

      const problems: string[] = [];
      if (before.hits.length === 0) problems.push('the user was not in the output before: nothing was measured');
      if (next.exitCode !== 0)
        problems.push(
          `the next run exited ${next.exitCode}: ${next.steps
            .filter((s) => s.status === 'error')
            .map((s) => `${s.name} ${s.detail}`)
            .join('; ')}`,
        );
      for (const h of afterRun.hits) problems.push(`after the next run: ${h.file} (${h.where}) holds ${h.needle}`);
      if (beforeForget.hits.length === 0)
        problems.push('after perks forget: the second user was not in the output before: nothing was measured');
      if (forgotten.code !== 0) problems.push(`perks forget exited ${forgotten.code}: ${forgotten.stderr.trim()}`);
      for (const h of afterForget.hits) problems.push(`after perks forget: ${h.file} (${h.where}) holds ${h.needle}`);
      const changed = missingAgainst(keysBefore, keysAfter);
      if (changed.missing || changed.duplicated)
        problems.push(
          `after perks forget: the lake lost ${changed.missing} keys and holds ${changed.duplicated} duplicates`,
        );
      const files = afterRun.files.parquet + afterRun.files.duckdb + afterRun.files.text;
      return [
        row(
          'personal data: anonymised upstream, next run',
          1,
          problems.filter((p) => !p.startsWith('after perks forget') && !p.startsWith('perks forget')),
          `before: ${describe(before.hits)}; after: ${afterRun.hits.length} hits in ${files} files (${afterRun.values} values decoded)`,
        ),
        row(
          'personal data: perks forget --user',
          1,
          problems.filter((p) => p.startsWith('after perks forget') || p.startsWith('perks forget')),
          `before: ${describe(beforeForget.hits)}; after: ${afterForget.hits.length} hits in ${files} files`,
        ),
      ];
    }),
  );
}

/** Where the hits are, by folder: `lake/orders ×12, lake/users ×1`. */
function describe(hits: Hit[]): string {
  if (!hits.length) return '0 hits';
  const by = new Map<string, Set<string>>();
  for (const h of hits) {
    const place = h.file
      .split('/')
      .slice(0, h.file.startsWith('lake/') ? 2 : 1)
      .join('/');
    by.set(place, (by.get(place) ?? new Set()).add(h.file));
  }
  return [...by].map(([place, files]) => `${place} ×${files.size}`).join(', ');
}

/** Active users whose orders lie in windows the lookback no longer re-reads, with a name pair no one else has. */
async function peopleWithOldOrders(sandbox: Sandbox, out: string, n: number): Promise<Person[]> {
  const emails = await withLakeConnection(async (c) => {
    const r = await c.runAndReadAll(
      `SELECT lower(email) AS e, count(*) AS n FROM read_parquet($g, hive_partitioning = true)
       WHERE email IS NOT NULL AND order_date::DATE < DATE '2026-11-10' GROUP BY ALL ORDER BY n DESC, e`,
      { g: join(out, 'lake', 'orders', '**', '*.parquet') },
    );
    return r.getRowObjectsJS().map((x) => x.e as string);
  });
  const all = [...sandbox.world.users.all()];
  const pairs = new Map<string, number>();
  for (const u of all)
    pairs.set(`${u.first_name}|${u.last_name}`, (pairs.get(`${u.first_name}|${u.last_name}`) ?? 0) + 1);
  const people: Person[] = [];
  for (const e of emails) {
    const u = all.find((x) => x.email?.toLowerCase() === e);
    if (!u || u.status !== 'Active' || pairs.get(`${u.first_name}|${u.last_name}`) !== 1) continue;
    people.push({ id: u.id, group: u.groupId, email: u.email!, first: u.first_name!, last: u.last_name! });
    if (people.length === n) break;
  }
  if (people.length < n) throw new Error('no user fits: active, with old orders and a unique name');
  return people;
}

async function anonymise(sandbox: Sandbox, config: ReturnType<typeof orgConfig>, p: Person): Promise<void> {
  const client = clientFromConfig(config);
  try {
    await client.call('anonymiseUser', { path: { identifier: 'id', identifier_value: p.id }, group: p.group });
  } finally {
    await client.close();
  }
  if (sandbox.world.users.get(p.id)?.email !== null) throw new Error(`user ${p.id} was not anonymised upstream`);
}
