/**
 * The output, resolved once per command into a value (store/lazy.ts): a local folder is the folder as given,
 * with no store code run; --output / -o is one option, declared once, that every command reads. An output no
 * command should run on (PERKS_OUTPUT empty under CI, a path naming a file) is refused before any work.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { configFromFlags, type ApiFlags } from '../../src/commands/options.js';
import { resolveOutputLazily } from '../../src/store/lazy.js';
import { LOCAL_OUTPUT_HOOKS } from '../../src/shared/output-hooks.js';
import { runCli } from '../support/cli.js';
import { orgEnv } from '../support/sandbox.js';
import { sandboxForFile } from '../support/sandbox-hooks.js';
import { tempOut } from '../support/scratch.js';

test('a local output is the folder as given, with no store session; the environment is left as it was', async () => {
  const before = process.env.PERKS_OUTPUT;
  const settings = () => {
    throw new Error('a local output reads no settings before the command');
  };
  const { output, session } = await resolveOutputLazily('build', './my-output', settings);
  expect(session).toBeUndefined();
  expect(output).toMatchObject({
    dir: resolve('./my-output'),
    name: './my-output',
    store: undefined,
    hooks: LOCAL_OUTPUT_HOOKS,
    lake: resolve('./my-output/lake'),
  });
  expect(output?.state('writeback')).toBe(resolve('./my-output/state/writeback'));
  expect(process.env.PERKS_OUTPUT).toBe(before);
});

test('perks store check and the sandbox, given a store URL, have no output: the setting only, no folder, no session', async () => {
  const settings = () => {
    throw new Error('a command with no output reads no settings to resolve it');
  };
  for (const command of ['store check', 'sandbox']) {
    const location = await resolveOutputLazily(command, 's3://acme-perks/prod', settings);
    expect(location).toEqual({ setting: { value: 's3://acme-perks/prod', source: '--output' } });
  }
});

test('the settings are parsed once per command: a later call gets the same, flags and all', () => {
  const argv: ApiFlags = { rateLimit: '90', output: tempOut('perks-settings-once-') };
  const first = configFromFlags(argv);
  expect(first.rateLimit).toBe(90);
  expect(first).not.toHaveProperty('output'); // the output is the command's Output, not a setting
  expect(configFromFlags(argv)).toBe(first);
});

test('-o and --output are one option: the flag wins over PERKS_OUTPUT, and a command reads the folder it names', async () => {
  const dir = tempOut('perks-output-once-');
  for (const flag of ['-o', '--output']) {
    const r = await runCli(['status', flag, dir], { PERKS_OUTPUT: join(dir, 'not-this') });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`perks: no extract has run into ${dir} yet: run \`perks run\`\n`);
  }
  const help = await runCli(['sql', '--help'], {});
  expect(help.stdout.match(/--output/g)).toHaveLength(1);
  expect(help.stdout).toContain('-o, --output');
});

describe('an output no command should run on is refused before any work', () => {
  const sandbox = sandboxForFile();

  test('under CI an empty PERKS_OUTPUT (a workflow variable not defined) is refused, exit 2, before any API call; an explicit folder is not', async () => {
    const s = sandbox();
    const cwd = tempOut('perks-ci-empty-');
    const before = s.stats().calls;
    const env = { ...orgEnv(s, ''), CI: 'true' };
    for (const args of [['run'], ['check'], ['status']]) {
      const r = await runCli(args, env, { cwd });
      expect(r.code, `${args[0]}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toBe(
        'perks: PERKS_OUTPUT is empty under CI (CI=true): the variable it is set from is not defined (the shipped workflows set it from vars.PERKS_STORE_URL), and ./output on a CI runner is thrown away with it: define that variable (the store, s3://bucket/prefix), or set PERKS_OUTPUT to a folder explicitly\n',
      );
    }
    expect(s.stats().calls, 'refused before any API call').toBe(before);
    expect(readdirSync(cwd), 'nothing written').toEqual([]);

    // an explicit folder under CI, and an empty PERKS_OUTPUT off CI (the default folder), run as before
    const explicit = await runCli(['check'], { ...orgEnv(s, join(cwd, 'kept')), CI: 'true' }, { cwd });
    expect(explicit.code, explicit.stderr).toBe(0);
    expect(explicit.stdout).toContain(`ok   output: a local folder, ${join(cwd, 'kept')}\n`);
    const offCi = await runCli(['check'], { ...orgEnv(s, ''), CI: 'false' }, { cwd });
    expect(offCi.code, offCi.stderr).toBe(0);
    expect(offCi.stdout).toContain(`ok   output: a local folder, ${join(cwd, 'output')}\n`);
  });

  test('an output that names a file is refused by check, status, sql and report as by extract: one line, exit 2', async () => {
    const file = join(tempOut('perks-output-file-'), 'report.txt');
    writeFileSync(file, 'not a folder');
    const env = orgEnv(sandbox(), file);
    for (const args of [['check'], ['status'], ['sql', 'SELECT 1'], ['report', 'revenue', '--month', '2026-10']]) {
      const r = await runCli(args, env);
      expect(r.code, `${args[0]}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toBe(
        `perks: PERKS_OUTPUT=${file} names a file, not a folder: give a folder (made if missing) or a store URL (s3://bucket/prefix)\n`,
      );
    }
    expect(readFileSync(file, 'utf8')).toBe('not a folder');
  });
});
