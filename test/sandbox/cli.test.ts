import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { expect, test } from 'vitest';

test('perks sandbox prints one JSON start line, serves, and exits 0 on SIGTERM', async () => {
  const child = spawn(process.execPath, ['bin/perks.mjs', 'sandbox', '--port', '0', '--today', '2026-11-22'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', () => reject(new Error(`exited before the start line: ${stderr}`)));
  });
  const start = JSON.parse(line);
  expect(Object.keys(start)).toEqual(['base_url', 'credentials']);
  expect(start.base_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(start.credentials.group.length).toBeGreaterThanOrEqual(3);
  for (const g of start.credentials.group)
    expect(Object.keys(g)).toEqual(['client_id', 'client_secret', 'organisation_group_id']);
  expect(start.credentials.organisation.organisation_group_ids).toEqual(
    start.credentials.group.map((g: { organisation_group_id: number }) => g.organisation_group_id),
  );
  const o = start.credentials.organisation;
  const tok = await fetch(`${start.base_url}/v3/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_id: o.client_id,
      client_secret: o.client_secret,
      grant_type: 'client_credentials',
      scope: '*',
    }),
  });
  expect(tok.status).toBe(200);
  const { access_token } = (await tok.json()).data;
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
  expect(stderr).not.toContain(o.client_secret);
  expect(stderr).not.toContain(access_token);
}, 90_000);

test('perks sandbox refuses a bad flag with one line and exit code 2', async () => {
  const child = spawn(process.execPath, ['bin/perks.mjs', 'sandbox', '--today', '2026-02-30'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  expect(code).toBe(2);
  expect(stderr.trim().split('\n')).toHaveLength(1);
  expect(stderr).toMatch(/today/);
}, 90_000);
