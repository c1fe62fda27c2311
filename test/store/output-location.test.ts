/**
 * The output, resolved once per command into a value (store/lazy.ts): a local folder is the folder as given,
 * with no store code run; --output / -o is one option, declared once, that every command reads.
 */
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { resolveOutputLazily } from '../../src/store/lazy.js';
import { runCli } from '../support/cli.js';
import { tempOut } from '../support/scratch.js';

test('a local output is the folder as given, with no store session; the environment is left as it was', async () => {
  const before = process.env.PERKS_OUTPUT;
  expect(await resolveOutputLazily('build', './my-output')).toEqual({ dir: './my-output' });
  expect(process.env.PERKS_OUTPUT).toBe(before);
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
