/**
 * The single-user commands against the sandbox over real HTTP: the lifecycle as the platform answers it,
 * the refusals made before any call from the local data (the latest users snapshot, then the audit log),
 * anonymise forgetting the user in the output directory, and the audit log's contents.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { clientFromConfig, type PerksClient } from '../../src/api/index.js';
import { withLakeConnection } from '../../src/lake/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { clockFrom, setClock } from '../../src/shared/clock.js';
import { addressOf, auditPath, runUserCommand, type ActionOptions, type UserCommand } from '../../src/users/index.js';
import { runCli, stderrLines } from '../support/cli.js';
import { orgConfig, orgEnv, testSandbox } from '../support/sandbox.js';
import { filesUnder } from '../support/files.js';
import { tempOut } from '../support/scratch.js';
import { outputAt } from '../../src/output/index.js';

let sandbox: Sandbox;
let client: PerksClient;
let out: string;
let group: number;
let env: Record<string, string>;
const people = ['ada', 'bob', 'cyd', 'dee', 'eve'].map((n, i) => ({
  email: `${n}@crm.example`,
  UID: `crm-${i + 1}`,
  first_name: `${n[0].toUpperCase()}${n.slice(1)}name`,
  last_name: `${n}-family`,
}));
const ids: Record<string, number> = {};

beforeAll(async () => {
  // The in-process commands and the CLI's (orgEnv) both read the sandbox's day, whatever the suite's clock.
  setClock(clockFrom(new Date('2026-11-22T12:00:00Z')));
  sandbox = await testSandbox({ today: '2026-11-22' });
  out = tempOut('perks-users-');
  env = orgEnv(sandbox, out);
  group = sandbox.credentials.organisation.organisation_group_ids[0];
  client = clientFromConfig(orgConfig(sandbox, out));
  for (const p of people) ids[p.UID] = (await client.call('createUser', { group, body: p })).id;
  const extract = await runCli(['extract', '--streams', 'users'], env);
  expect(extract.code, extract.stderr).toBe(0);
});

afterAll(async () => {
  setClock(undefined);
  await client?.close();
  await sandbox?.close();
});

const run = (command: UserCommand, address: string, more: Partial<ActionOptions> = {}) => {
  const [flag, value] = address.split('=');
  return runUserCommand(command, {
    client,
    clientId: sandbox.credentials.organisation.client_id,
    output: outputAt(out),
    group,
    address: addressOf({ [flag]: value }),
    ...more,
  });
};
const statusOf = (uid: string) => sandbox.world.users.get(ids[uid])?.status;

describe('perks users: the lifecycle', () => {
  test('deactivate, then restore: each answered by the platform, and the local state follows through the audit log', async () => {
    const off = await run('deactivate', 'uid=crm-1');
    expect(off.local).toMatchObject({ id: ids['crm-1'], state: 'active', source: 'the users snapshot of 2026-11-22' });
    expect(statusOf('crm-1')).toBe('Deactivated');
    const on = await run('restore', 'email=ada@crm.example');
    expect(on.local).toMatchObject({ state: 'deactivated' });
    expect(on.local?.source).toMatch(/^audited deactivate at /);
    expect(statusOf('crm-1')).toBe('Active');
  });

  test('what the lifecycle forbids is refused before any call, one line, exit 2', async () => {
    await run('deactivate', 'uid=crm-2');
    const before = sandbox.stats().calls;
    const cases: [string[], string][] = [
      [
        ['users', 'restore', '--uid', 'crm-3', '--group', String(group)],
        `perks: restore refused, nothing sent: user ${ids['crm-3']} is active (the users snapshot of 2026-11-22) and the lifecycle allows restore only from deactivated; refresh the local data (perks extract --streams users) or pass --force to ask the platform anyway`,
      ],
      [
        ['users', 'deactivate', '--id', String(ids['crm-2']), '--group', String(group)],
        `perks: deactivate refused, nothing sent: user ${ids['crm-2']} is deactivated (audited deactivate at `,
      ],
      [
        ['users', 'make-known', '--uid', 'crm-3', '--group', String(group), '--set', 'email=new@crm.example'],
        `perks: make-known refused, nothing sent: user ${ids['crm-3']} is active (the users snapshot of 2026-11-22) and the lifecycle allows make-known only from anonymised`,
      ],
    ];
    for (const [args, start] of cases) {
      const r = await runCli(args, env);
      expect(r.code, args.join(' ')).toBe(2);
      expect(stderrLines(r)).toHaveLength(1);
      expect(stderrLines(r)[0].startsWith(start), stderrLines(r)[0]).toBe(true);
    }
    expect(sandbox.stats().calls).toBe(before);
  });

  test('--force asks the platform anyway and reports its answer: refused, exit 4, audited', async () => {
    const r = await runCli(['users', 'restore', '--uid', 'crm-3', '--group', String(group), '--force'], env);
    expect(r.code).toBe(4);
    expect(stderrLines(r)).toEqual([
      'perks: restore refused by the platform: restoreUser: HTTP 409: Only a deactivated user can be restored; the user is active.',
    ]);
    const last = readFileSync(auditPath(out), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .at(-1);
    expect(last).toMatchObject({
      command: 'restore',
      user_id: ids['crm-3'],
      outcome: 'rejected',
      answer: { status: 409 },
    });
  });

  test('anonymise forgets the user in the output directory in the same step (0 personal values left); make-known brings the user back', async () => {
    const who = people[3];
    const r = await runCli(['users', 'anonymise', '--uid', who.UID, '--group', String(group), '--format', 'json'], env);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.answer).toMatchObject({ id: ids[who.UID], email: null, first_name: null, last_name: null });
    expect(result.forgot.rows).toBeGreaterThan(0);
    // our keys in snake_case, the platform's answer as it gave it
    expect(result).toMatchObject({ dry_run: false, forgot: { quarantine_lines: expect.any(Number) } });
    expect(sandbox.world.users.get(ids[who.UID])).toMatchObject({ status: 'Anonymised', UID: null });

    const personal = [who.email, who.first_name, who.last_name];
    const left = await withLakeConnection(async (c) => {
      const reader = await c.runAndReadAll(
        `SELECT count(*)::INTEGER AS n FROM read_parquet($glob, union_by_name = true)
         WHERE id::BIGINT = $id AND (email IS NOT NULL OR first_name IS NOT NULL OR last_name IS NOT NULL)`,
        { glob: join(out, 'lake', 'users', '**', '*.parquet'), id: ids[who.UID] },
      );
      return Number(reader.getRowObjectsJS()[0].n);
    });
    expect(left).toBe(0);
    for (const file of filesUnder(out)) {
      const text = readFileSync(join(out, file)).toString('latin1');
      for (const value of personal) expect(text.includes(value), `${value} in ${file}`).toBe(false);
    }
    // the others are still there
    const others = filesUnder(join(out, 'lake', 'users')).length;
    expect(others).toBeGreaterThan(0);

    const back = await run('make-known', `id=${ids[who.UID]}`, {
      set: { email: 'dee.new@crm.example', first_name: 'Dee' },
      getLogin: true,
    });
    expect(back.local).toMatchObject({ state: 'anonymised' });
    expect(back.answer).toMatchObject({ id: ids[who.UID], email: 'dee.new@crm.example' });
    expect(String(back.answer?.login_url)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/sso\//);
    expect(sandbox.world.users.get(ids[who.UID])?.status).toBe('Active');
  });

  test('get, update, login-url and stats answer from the platform; a dry run sends nothing', async () => {
    const got = await run('get', 'uid=crm-5');
    expect(got.answer).toMatchObject({ id: ids['crm-5'], email: 'eve@crm.example', status: 'Active' });
    const updated = await run('update', 'uid=crm-5', { set: { last_name: 'Evergreen' } });
    expect(updated.answer).toMatchObject({ id: ids['crm-5'], last_name: 'Evergreen', email: 'eve@crm.example' });
    const url = await run('login-url', 'email=eve@crm.example');
    expect(String(url.answer?.login_url)).toMatch(/\/sso\//);
    const stats = await run('stats', `id=${ids['crm-5']}`, { from: '2026-01-01 00:00:00', to: '2026-11-22 00:00:00' });
    expect(stats.answer).toMatchObject({ all_redemptions_count: 0 });
    const before = sandbox.stats().calls;
    const dry = await run('deactivate', 'uid=crm-5', { dryRun: true });
    expect(dry.answer).toMatchObject({ would_send: 'DELETE /v3/user/delete/{identifier}/{identifier_value}' });
    expect(sandbox.stats().calls).toBe(before);
    expect(statusOf('crm-5')).toBe('Active');
  });

  test('the audit log says who, when, what and the answer for every change, never a secret, a token, a login URL or an e-mail', () => {
    const text = readFileSync(auditPath(out), 'utf8');
    const entries = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(new Set(entries.map((e) => e.command))).toEqual(
      new Set(['deactivate', 'restore', 'anonymise', 'make-known', 'update', 'login-url']),
    );
    for (const e of entries) {
      expect(e.actor.client_id).toBe(sandbox.credentials.organisation.client_id);
      expect(typeof e.actor.operator).toBe('string');
      expect(e.at).toMatch(/^2026-11-22T12:/);
      expect(e.group).toBe(group);
      expect(Object.values(ids)).toContain(e.user_id);
      expect(['ok', 'rejected']).toContain(e.outcome);
    }
    expect(text).not.toContain(sandbox.credentials.organisation.client_secret);
    expect(text).not.toContain('@');
    expect(text).not.toMatch(/sso\/|eyJ|Bearer/);
    for (const p of people) for (const v of [p.first_name, p.last_name]) expect(text).not.toContain(v);
    expect(statSync(auditPath(out)).mode & 0o777).toBe(0o600);
  });

  test('a bad address stops with one line and exit 2', async () => {
    const cases: [string[], string][] = [
      [
        ['users', 'get', '--group', String(group)],
        'perks: name the user: --id <platform id>, --email <address> or --uid <your UID>',
      ],
      [
        ['users', 'get', '--id', '1', '--uid', 'x', '--group', String(group)],
        'perks: name the user once: --id and --uid given, expected exactly one of --id, --email, --uid',
      ],
      [
        ['users', 'deactivate', '--id', 'abc', '--group', String(group)],
        'perks: --id="abc" is invalid: expected a platform user id, a whole number above 0',
      ],
      [
        ['users', 'update', '--id', '1', '--group', String(group), '--set', 'colour=red'],
        'perks: --set colour=… is not a field of update; the fields are email, UID, first_name, last_name, company_name, phone',
      ],
    ];
    for (const [args, line] of cases) {
      const r = await runCli(args, env);
      expect(r.code, args.join(' ')).toBe(2);
      expect(stderrLines(r)).toEqual([line]);
    }
  });
});
