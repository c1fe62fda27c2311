import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, test } from 'vitest';
import { buildFixture } from './fixture.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'perks.mjs');

async function perks(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [BIN, ...args], {
      env: { ...process.env, ...env },
      timeout: 180_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('perks report revenue', () => {
  let out: string;
  beforeAll(async () => {
    out = await buildFixture();
  });

  test('writes the three formats into <out>/reports/ and prints the status and the files', async () => {
    const r = await perks(['report', 'revenue', '--month', '2024-03', '--output', out]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe('revenue 2024-03: PROVISIONAL, reconciled with the lake');
    expect((await readdir(join(out, 'reports'))).sort()).toEqual([
      'revenue-2024-03.csv',
      'revenue-2024-03.html',
      'revenue-2024-03.md',
    ]);
  }, 180_000);

  test('takes the output directory from PERKS_OUTPUT, one group and one format', async () => {
    const r = await perks(['report', 'revenue', '--month', '2024-03', '--group', '11', '--format', 'md'], {
      PERKS_OUTPUT: out,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `revenue 2024-03: CLOSED, reconciled with the lake\n  ${join(out, 'reports', 'revenue-2024-03-g11.md')}\n`,
    );
  }, 180_000);

  test.each([
    [['--month', '2024-3'], 'perks: --month="2024-3" is invalid: expected a month YYYY-MM, e.g. 2024-03'],
    [['--month', '2024-03', '--group', '99'], 'perks: --group=99 is not in the warehouse; its groups are 11, 12'],
    [
      ['--month', '2024-03', '--group', 'abc'],
      'perks: --group="abc" is invalid: expected an organisation_group_id, a whole number above 0',
    ],
    [['--month', '2024-03', '--format', 'pdf'], 'perks: --format="pdf" is invalid: expected html, csv, md or all'],
  ])(
    '%j exits 2 with one line',
    async (args, line) => {
      const r = await perks(['report', 'revenue', ...args, '--output', out]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`${line}\n`);
    },
    60_000,
  );

  test('a missing warehouse exits 2 with one line', async () => {
    const r = await perks(['report', 'revenue', '--month', '2024-03', '--output', join(out, 'empty')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `perks: no warehouse at ${join(out, 'empty', 'warehouse.duckdb')}: run \`perks build\` (or \`perks run\`) first\n`,
    );
  }, 180_000);
});
