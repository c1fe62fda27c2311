/** `perks --version` says which program this is (issue 43); every run manifest records the same (extract.test.ts). */
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { runCli } from '../support/cli.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

test('perks --version prints the package version and exits 0, as does a command given --version', async () => {
  for (const args of [['--version'], ['status', '--version']]) {
    const r = await runCli(args, {});
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(version);
  }
});
