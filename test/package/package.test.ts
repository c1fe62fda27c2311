/**
 * The client as a package: built with `npm run build` (tsc on the exported entry points' closure), then
 * imported by a separate temporary project, as another program would (installed by path: a link in its
 * node_modules), type-checked against the emitted declarations and run against the sandbox it exports.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, test } from 'vitest';
import { ROOT } from '../support/cli.js';
import { tempOut } from '../support/scratch.js';

const run = promisify(execFile);
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

const PROGRAM = `
import { PerksClient, ApiError, clientFromConfig, loadConfig, type User } from 'perks-pipeline/client';
import { startSandbox } from 'perks-pipeline/sandbox';

const sandbox = await startSandbox({ port: 0, scale: 'tiny', today: '2026-11-22' });
const credential = sandbox.credentials.group[0];
const client = new PerksClient({ baseUrl: sandbox.baseUrl, clientId: credential.client_id, clientSecret: credential.client_secret, rateLimit: 600 });
try {
  const created: User = await client.call('createUser', { body: { email: 'ada@example.com', UID: 'crm-1', first_name: 'Ada' } });
  const read = await client.call('getUser', { path: { identifier: 'UID', identifier_value: 'crm-1' } });
  let users = 0;
  for await (const page of client.paginate('listUsers')) users += page.records.length;
  let missing = '';
  try {
    await client.call('getUser', { path: { identifier: 'email', identifier_value: 'nobody@example.com' } });
  } catch (err) {
    if (err instanceof ApiError) missing = err.kind + ' ' + err.status;
  }
  const fromEnv = clientFromConfig(loadConfig({ PERKS_BASE_URL: sandbox.baseUrl, PERKS_CLIENT_ID: String(credential.client_id), PERKS_CLIENT_SECRET: credential.client_secret }));
  const group = await fromEnv.call('getGroup');
  await fromEnv.close();
  console.log(JSON.stringify({ created: created.id, read: read.id, users, missing, group: group.id, calls: sandbox.stats().callsByOperation }));
} finally {
  await client.close();
  await sandbox.close();
}
`;

let project: string;

beforeAll(async () => {
  await run(process.execPath, [TSC, '-p', join(ROOT, 'tsconfig.build.json')], { cwd: ROOT });
  project = tempOut('perks-integrator-');
  mkdirSync(join(project, 'node_modules'));
  symlinkSync(ROOT, join(project, 'node_modules', 'perks-pipeline'), 'dir');
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'integrator', private: true, type: 'module' }));
  writeFileSync(join(project, 'main.ts'), PROGRAM);
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: true,
        outDir: 'out',
        typeRoots: [join(ROOT, 'node_modules', '@types')],
        types: ['node'],
      },
      files: ['main.ts'],
    }),
  );
}, 300_000);

describe('the built package', () => {
  test('another program type-checks against perks-pipeline/client and /sandbox and calls the API through them', async () => {
    await run(process.execPath, [TSC, '-p', join(project, 'tsconfig.json')], { cwd: project });
    const { stdout } = await run(process.execPath, [join(project, 'out', 'main.js')], { cwd: project });
    const out = JSON.parse(stdout.trim());
    expect(out.read).toBe(out.created);
    expect(out.users).toBeGreaterThan(1);
    expect(out.missing).toBe('client 404');
    expect(out.calls.createUser).toBe(1);
    expect(out.group).toBeGreaterThan(0);
  });

  test('a type error in the integrator program is caught by the emitted declarations', async () => {
    writeFileSync(
      join(project, 'bad.ts'),
      `import { PerksClient } from 'perks-pipeline/client';\nconst c = new PerksClient({ baseUrl: 'http://x', clientId: 1, clientSecret: 's' });\nawait c.call('createUser', { body: { emial: 'x@example.com' } });\n`,
    );
    writeFileSync(
      join(project, 'tsconfig.bad.json'),
      JSON.stringify({ extends: './tsconfig.json', compilerOptions: { noEmit: true }, files: ['bad.ts'] }),
    );
    const failed = await run(process.execPath, [TSC, '-p', join(project, 'tsconfig.bad.json')], { cwd: project }).then(
      () => '',
      (err: { stdout: string }) => err.stdout,
    );
    expect(failed).toMatch(/emial/);
  });

  test('only the documented entry points are exported', async () => {
    writeFileSync(
      join(project, 'deep.mjs'),
      `import('perks-pipeline/src/api/client.ts').then(() => console.log('open'), (e) => console.log(e.code));`,
    );
    const { stdout } = await run(process.execPath, [join(project, 'deep.mjs')], { cwd: project });
    expect(stdout.trim()).toBe('ERR_PACKAGE_PATH_NOT_EXPORTED');
  });
});
