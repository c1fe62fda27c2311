import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { quarantineFile, quarantineRecord } from '../../src/lake/index.js';
import { Order } from '../../src/resources/index.js';
import { registerSecret } from '../../src/shared/redact.js';
import { tempOut } from '../support/scratch.js';

const linesOf = async (file: string) =>
  (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

test('a rejected record goes to quarantine/<stream>/<run_id>.jsonl with each zod issue and the raw record', async () => {
  const out = tempOut();
  const raw = { order_id: 'abc', face_value: '12.3.4', email: 'a@example.com', extra: { nested: true } };
  const parsed = Order.safeParse(raw);
  expect(parsed.success).toBe(false);
  await quarantineRecord({ outDir: out, stream: 'orders', runId: 'run-1', record: raw, reason: parsed.error! });
  await quarantineRecord({
    outDir: out,
    stream: 'orders',
    runId: 'run-1',
    record: { order_id: 2 },
    reason: 'duplicate order_id in one window',
  });

  const file = join(out, 'quarantine', 'orders', 'run-1.jsonl');
  expect(quarantineFile(out, 'orders', 'run-1')).toBe(file);
  const [first, second] = await linesOf(file);
  expect(first).toMatchObject({ run_id: 'run-1', stream: 'orders', record: raw });
  expect(Number.isNaN(Date.parse(first.at))).toBe(false);
  expect(first.issues.map((i: { path: string; value: unknown }) => [i.path, i.value])).toEqual([
    ['order_id', 'abc'],
    ['face_value', '12.3.4'],
  ]);
  expect(first.issues.every((i: { message: string }) => i.message.length > 0)).toBe(true);
  expect(second.issues).toEqual([{ path: '', message: 'duplicate order_id in one window' }]);
});

test('quarantine files are private (0600 in 0700 folders) and never carry a registered secret', async () => {
  const out = tempOut();
  registerSecret('s3cr3t-client-secret-value');
  await quarantineRecord({
    outDir: out,
    stream: 'users',
    runId: 'r',
    record: { note: 'token s3cr3t-client-secret-value' },
    reason: 'bad',
  });
  const file = join(out, 'quarantine', 'users', 'r.jsonl');
  expect(await readFile(file, 'utf8')).not.toContain('s3cr3t-client-secret-value');
  expect((await stat(file)).mode & 0o777).toBe(0o600);
  expect((await stat(join(out, 'quarantine'))).mode & 0o777).toBe(0o700);
  expect((await stat(join(out, 'quarantine', 'users'))).mode & 0o777).toBe(0o700);
});
