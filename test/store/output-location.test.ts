/**
 * The output, resolved once per command into a value (store/lazy.ts): a local folder is the folder as given,
 * with no store code run; --output / -o is one option, declared once, that every command reads.
 */
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { configFromFlags, type ApiFlags } from '../../src/commands/options.js';
import { resolveOutputLazily } from '../../src/store/lazy.js';
import { LOCAL_OUTPUT_HOOKS } from '../../src/shared/output-hooks.js';
import { runCli } from '../support/cli.js';
import { tempOut } from '../support/scratch.js';

test('a local output is the folder as given, with no store session; the environment is left as it was', async () => {
  const before = process.env.PERKS_OUTPUT;
  const settings = () => {
    throw new Error('a local output reads no settings before the command');
  };
  expect(await resolveOutputLazily('build', './my-output', settings)).toEqual({
    dir: './my-output',
    hooks: LOCAL_OUTPUT_HOOKS,
  });
  expect(process.env.PERKS_OUTPUT).toBe(before);
});

test('the settings are parsed once per command: a later call gets the same, flags and all', () => {
  const argv: ApiFlags = { rateLimit: '90', output: tempOut('perks-settings-once-') };
  const first = configFromFlags(argv);
  expect(first.rateLimit).toBe(90);
  expect(first.output).toBe(argv.output);
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
