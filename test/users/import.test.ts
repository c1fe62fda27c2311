/** `perks users import` against the sandbox over real HTTP: bulk calls of 100, every user confirmed, reruns, bad rows. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runCli, stderrLines } from '../support/cli.js';
import { orgEnv, withSandbox } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';

const TODAY = '2026-11-22';

function crmFile(dir: string, n: number, extra: string[] = []): string {
  const lines = ['email,first_name,last_name,UID,meta.location'];
  for (let i = 1; i <= n; i++) lines.push(`person${i}@crm.example,First${i},"Last, ${i}",crm-${i},Leeds`);
  const file = join(dir, 'crm.csv');
  writeFileSync(file, [...lines, ...extra].join('\n') + '\n');
  return file;
}

describe('perks users import', () => {
  test('250 users: 3 bulk calls, every user confirmed by reading it back; the same file again creates nothing and says so', async () => {
    await withSandbox({ today: TODAY }, async (sandbox) => {
      const out = tempOut('perks-users-');
      const file = crmFile(out, 250);
      const group = sandbox.credentials.organisation.organisation_group_ids[1];
      const env = orgEnv(sandbox, out);
      const already = sandbox.world.users.inGroup(group).length;

      const first = await runCli(['users', 'import', file, '--group', String(group), '--format', 'json'], env);
      expect(first.stderr).toBe('');
      expect(first.code).toBe(0);
      const report = JSON.parse(first.stdout);
      expect(report.created).toHaveLength(250);
      expect(report.existing).toHaveLength(0);
      expect(report.rejected).toHaveLength(0);
      expect(report).toMatchObject({ dry_run: false, total_calls: expect.any(Number) }); // snake_case keys
      // the group's listing is cheaper than 250 look-ups: read before (its pages) and after (its pages)
      const pagesBefore = Math.ceil(already / 100);
      const pagesAfter = Math.ceil((already + 250) / 100);
      expect(report.calls).toEqual({ lookups: pagesBefore, bulk: 3, single: 0, confirms: pagesAfter });
      const stats = sandbox.stats().callsByOperation;
      expect(stats.bulkCreateUsers).toBe(3);
      expect(stats.listUsers).toBe(pagesBefore + pagesAfter);
      expect(stats.getUser).toBeUndefined();
      // every reported id is the platform's user with that row's e-mail, in the named group
      for (const { line, id } of report.created as { line: number; id: number }[]) {
        const user = sandbox.world.users.find(group, 'email', `person${line - 1}@crm.example`);
        expect(user?.id).toBe(id);
        expect(user?.UID).toBe(`crm-${line - 1}`);
        expect(user?.last_name).toBe(`Last, ${line - 1}`);
      }

      const again = await runCli(['users', 'import', file, '--group', String(group)], env);
      expect(again.code).toBe(0);
      expect(again.stdout).toMatch(/^0 created, 250 already existing, 0 rejected \(of 250 rows\)$/m);
      expect(again.stdout).toContain('nothing created: every valid row already exists on the platform');
      expect(again.stdout).toContain(`${pagesAfter} calls (${pagesAfter} look-ups, 0 bulk, 0 confirmations)`);
      expect(sandbox.stats().callsByOperation.bulkCreateUsers).toBe(3);

      // two more users into a group of 280: one look-up each is cheaper than the listing's 3 pages
      const few = join(out, 'few.jsonl');
      writeFileSync(
        few,
        '{"email":"new1@crm.example","UID":"crm-new-1"}\n{"email":"new2@crm.example","meta":{"sales":3,"location":"York"}}\n',
      );
      const third = await runCli(['users', 'import', few, '--group', String(group), '--format', 'json'], env);
      expect(third.code, third.stderr).toBe(0);
      const small = JSON.parse(third.stdout);
      expect(small.created.map((c: { line: number }) => c.line)).toEqual([1, 2]);
      expect(small.calls).toEqual({ lookups: 1 + 2, bulk: 1, single: 0, confirms: 1 + 2 });
      expect(sandbox.world.users.find(group, 'email', 'new2@crm.example')?.meta).toMatchObject({
        sales: 3,
        location: 'York',
      });
    });
  });

  test('bad rows (bad e-mail, duplicate, missing e-mail) are named by line and the rest imported; exit 4', async () => {
    await withSandbox({ today: TODAY }, async (sandbox) => {
      const out = tempOut('perks-users-');
      const file = crmFile(out, 5, [
        'not-an-email,Bad,,crm-bad,',
        'person2@crm.example,Again,,crm-dup,',
        ',NoMail,,crm-none,',
      ]);
      const group = sandbox.credentials.organisation.organisation_group_ids[0];
      const r = await runCli(['users', 'import', file, '--group', String(group)], orgEnv(sandbox, out));
      expect(r.code).toBe(4);
      expect(r.stdout).toMatch(/^5 created, 0 already existing, 3 rejected \(of 8 rows\)$/m);
      expect(r.stdout).toContain('line 7: email is not a valid e-mail address');
      expect(r.stdout).toContain('line 8: duplicate of line 3 (same email)');
      expect(r.stdout).toContain('line 9: email is missing (required for every user)');
      expect(sandbox.world.users.find(group, 'UID', 'crm-dup')).toBeUndefined();
      expect(sandbox.world.users.find(group, 'UID', 'crm-5')).toBeDefined();
    });
  });

  test('a bulk call the platform refuses goes user by user, each with its answer; a row the platform silently skips (UID taken) is reported', async () => {
    await withSandbox({ today: TODAY }, async (sandbox) => {
      const out = tempOut('perks-users-');
      const group = sandbox.credentials.organisation.organisation_group_ids[0];
      const taken = sandbox.world.users.inGroup(group).find((u) => u.UID)!.UID!;
      const refused = join(out, 'refused.csv');
      // an SMS without a phone: the sandbox refuses the whole bulk call (422), as Laravel validates every item
      writeFileSync(
        refused,
        'email,UID,send_activation_sms,phone\nok1@crm.example,r-1,,\nsms@crm.example,r-2,true,\nok2@crm.example,r-3,true,+441234\n',
      );
      const r = await runCli(
        ['users', 'import', refused, '--group', String(group), '--format', 'json'],
        orgEnv(sandbox, out),
      );
      expect(r.code).toBe(4);
      const report = JSON.parse(r.stdout);
      expect(report.created.map((c: { line: number }) => c.line)).toEqual([2, 4]);
      expect(report.rejected).toEqual([
        { line: 3, reason: expect.stringMatching(/^the platform refused it: createUser: HTTP 422: .*phone/) },
      ]);
      expect(report.calls).toMatchObject({ bulk: 1, single: 3, confirms: 0 });

      const skipped = join(out, 'skipped.csv');
      writeFileSync(skipped, `email,UID\nfresh@crm.example,fresh-1\nother@crm.example,${taken}\n`);
      const s = await runCli(
        ['users', 'import', skipped, '--group', String(group), '--confirm-wait', '0', '--format', 'json'],
        orgEnv(sandbox, out),
      );
      expect(s.code).toBe(4);
      const second = JSON.parse(s.stdout);
      expect(second.created.map((c: { line: number }) => c.line)).toEqual([2]);
      expect(second.rejected).toEqual([
        {
          line: 3,
          reason: expect.stringMatching(
            /^the platform accepted it in a bulk call but has not created it .*UID may be taken/,
          ),
        },
      ]);
    });
  });

  test('the calls are paced by the client at PERKS_RATE_LIMIT, token included', async () => {
    await withSandbox({ today: TODAY }, async (sandbox) => {
      const out = tempOut('perks-users-');
      const file = crmFile(out, 3);
      const group = sandbox.credentials.organisation.organisation_group_ids[0];
      const r = await runCli(
        ['users', 'import', file, '--group', String(group), '--format', 'json'],
        orgEnv(sandbox, out, { PERKS_RATE_LIMIT: '300' }),
      );
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).created).toHaveLength(3);
      const times = sandbox.stats().callTimes[String(sandbox.credentials.organisation.client_id)];
      expect(times).toHaveLength(3); // a listing page, the bulk call, a listing page
      // 60 s / 300 = 200 ms a slot. The sandbox sees arrivals, which a busy machine can make one call late and the
      // next on time: any k calls span at least (k - 1) slots minus that lateness (as in test/scale/limiter.test.ts).
      for (let i = 0; i < times.length; i++)
        for (let j = i + 1; j < times.length; j++)
          expect(times[j] - times[i], `calls ${i} and ${j}`).toBeGreaterThanOrEqual((j - i) * 200 - 60);
      expect(sandbox.stats().tokenRequests).toBe(1);
    });
  });

  test('a dry run checks the file and sends nothing', async () => {
    await withSandbox({ today: TODAY }, async (sandbox) => {
      const out = tempOut('perks-users-');
      const file = crmFile(out, 120);
      const r = await runCli(
        ['users', 'import', file, '--group', '11', '--dry-run'],
        orgEnv(sandbox, out, { PERKS_RATE_LIMIT: '120' }),
      );
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('dry run, nothing sent: 120 rows, 120 to import, 0 rejected');
      expect(r.stdout).toContain(
        'would make at most 244 calls (121 look-ups, 2 bulk, 121 confirmations): about 2.0 min at 120 calls/min',
      );
      expect(sandbox.stats().calls).toBe(0);
    });
  });

  test('bad input stops before any call with one line and exit 2: unknown column, no group among several, missing file', async () => {
    await withSandbox({ today: TODAY }, async (sandbox) => {
      const out = tempOut('perks-users-');
      const env = orgEnv(sandbox, out);
      const bad = join(out, 'bad.csv');
      writeFileSync(bad, 'email,favourite_colour\na@b.example,blue\n');
      const cases: [string[], RegExp][] = [
        [
          ['users', 'import', bad, '--group', '11'],
          /^perks: .*bad\.csv: unknown column "favourite_colour"; the columns are email, .*/,
        ],
        [
          ['users', 'import', crmFile(out, 1)],
          /^perks: name the user's group: --group <id>, one of 11,12,13,14 \(PERKS_GROUP_IDS names several\)$/,
        ],
        [
          ['users', 'import', join(out, 'missing.csv'), '--group', '11'],
          /^perks: cannot read .*missing\.csv: ENOENT; name a CSV file/,
        ],
        [
          ['users', 'import', bad, '--group', '99'],
          /^perks: --group=99 is not one of PERKS_GROUP_IDS \(11,12,13,14\): name one of them$/,
        ],
      ];
      for (const [args, line] of cases) {
        const r = await runCli(args, env);
        expect(r.code, args.join(' ')).toBe(2);
        expect(stderrLines(r)).toHaveLength(1);
        expect(stderrLines(r)[0]).toMatch(line);
      }
      expect(sandbox.stats().calls).toBe(0);
    });
  });
});
