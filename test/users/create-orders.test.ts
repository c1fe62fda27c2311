/** `perks users create` (with and without a login URL) and `perks users orders` against the sandbox over real HTTP. */
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { auditPath } from '../../src/users/index.js';
import { runCli, stderrLines } from '../support/cli.js';
import { orgEnv, withSandbox } from '../support/sandbox.js';
import { tempOut } from '../support/scratch.js';

describe('perks users create and orders', () => {
  test('create with a login URL answers the user and the URL; the URL is never audited; a second create is the platform refusal, exit 4', async () => {
    await withSandbox({ today: '2026-11-22' }, async (sandbox) => {
      const out = tempOut('perks-users-');
      const env = orgEnv(sandbox, out);
      const group = String(sandbox.credentials.organisation.organisation_group_ids[2]);
      const args = [
        'users',
        'create',
        '--group',
        group,
        '--set',
        'email=zoe@crm.example',
        '--set',
        'UID=crm-z',
        '--set',
        'first_name=Zoe',
      ];
      const r = await runCli([...args, '--login-url', '--format', 'json'], env);
      expect(r.code, r.stderr).toBe(0);
      const result = JSON.parse(r.stdout);
      expect(result).toMatchObject({
        command: 'create',
        operation: 'createUserWithLoginUrl',
        answer: { email: 'zoe@crm.example', UID: 'crm-z', status: 'Active' },
      });
      expect(result.answer.login_url).toMatch(/\/sso\//);
      expect(sandbox.world.users.get(result.answer.id)?.first_name).toBe('Zoe');

      const again = await runCli(args, env);
      expect(again.code).toBe(4);
      expect(stderrLines(again)).toHaveLength(1);
      expect(stderrLines(again)[0]).toMatch(
        /^perks: create refused by the platform: createUser: HTTP 422: .*has already been taken/,
      );

      const audit = readFileSync(auditPath(out), 'utf8');
      const entries = audit
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(entries.map((e) => [e.command, e.operation, e.outcome])).toEqual([
        ['create', 'createUserWithLoginUrl', 'ok'],
        ['create', 'createUser', 'rejected'],
      ]);
      expect(entries[0].user_id).toBe(result.answer.id);
      expect(audit).not.toContain(result.answer.login_url);
      expect(audit).not.toContain('@');
    });
  });

  test("orders lists every order of one user, the sandbox's own", async () => {
    await withSandbox({ today: '2026-11-22' }, async (sandbox) => {
      const out = tempOut('perks-users-');
      const group = sandbox.credentials.organisation.organisation_group_ids[0];
      const counts = new Map<number, number>();
      for (const o of sandbox.world.ordersOf(group)) counts.set(o.user_id, (counts.get(o.user_id) ?? 0) + 1);
      const [userId, n] = [...counts].sort((a, b) => b[1] - a[1])[0];
      const r = await runCli(
        ['users', 'orders', '--id', String(userId), '--group', String(group), '--format', 'json'],
        orgEnv(sandbox, out),
      );
      expect(r.code, r.stderr).toBe(0);
      const orders = JSON.parse(r.stdout) as { order_id: number }[];
      expect(orders.map((o) => o.order_id).sort((a, b) => a - b)).toEqual(
        sandbox.world
          .ordersOf(group, { userId })
          .map((o) => o.order_id)
          .sort((a, b) => a - b),
      );
      expect(orders).toHaveLength(n);
      const table = await runCli(
        ['users', 'orders', '--id', String(userId), '--group', String(group)],
        orgEnv(sandbox, out),
      );
      expect(table.stdout.split('\n')[0]).toMatch(
        /^order_id +order_status +brand +offer +face_value +order_total_paid +order_currency$/,
      );
      expect(table.stdout).toContain(`${n} orders`);
    });
  });
});
