import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
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
      'sections',
    ]);
  }, 180_000);

  test('takes the output directory from PERKS_OUTPUT, one group and one format', async () => {
    const r = await perks(['report', 'revenue', '--month', '2024-03', '--group', '11', '--format', 'md'], {
      PERKS_OUTPUT: out,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `revenue 2024-03: FINAL, reconciled with the lake\n  ${join(out, 'reports', 'revenue-2024-03-g11.md')}\n`,
    );
  }, 180_000);

  test.each([
    [['--month', '2024-3'], 'perks: --month="2024-3" is invalid: expected a month YYYY-MM, e.g. 2024-03'],
    [['--month', '2024-03', '--group', '99'], 'perks: --group=99 is not in the warehouse; its groups are 11, 12'],
    [
      ['--month', '2024-03', '--group', 'abc'],
      'perks: --group="abc" is invalid: expected an organisation_group_id, a whole number above 0',
    ],
    [
      ['--month', '2024-03', '--format', 'docx'],
      'perks: --format="docx" is invalid: expected html, csv, md, pdf, a comma-separated list of them, or all',
    ],
  ])(
    '%j exits 2 with one line',
    async (args, line) => {
      const r = await perks(['report', 'revenue', ...args, '--output', out]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`${line}\n`);
    },
    60_000,
  );

  test('--format pdf prints the HTML with the system Chromium: a PDF of A4 pages', async () => {
    const r = await perks(['report', 'revenue', '--month', '2024-03', '--format', 'pdf', '--output', out]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const file = join(out, 'reports', 'revenue-2024-03.pdf');
    expect(r.stdout).toBe(`revenue 2024-03: PROVISIONAL, reconciled with the lake\n  ${file}\n`);
    const pdf = (await readFile(file)).toString('latin1');
    expect(pdf.slice(0, 5)).toBe('%PDF-');
    // every page A4: 210 × 297 mm = 595.28 × 841.89 points (Chromium rounds to its own units)
    const boxes = [...pdf.matchAll(/\/MediaBox\s*\[\s*0 0 ([\d.]+) ([\d.]+)\s*\]/g)].map((m) => [
      Number(m[1]),
      Number(m[2]),
    ]);
    expect(boxes.length).toBeGreaterThan(0);
    for (const [w, h] of boxes) {
      expect(Math.abs(w - 595.28)).toBeLessThan(1);
      expect(Math.abs(h - 841.89)).toBeLessThan(1);
    }
    // nothing left behind: no temporary file
    expect((await readdir(join(out, 'reports'))).filter((f) => f.includes('.tmp'))).toEqual([]);
  }, 180_000);

  test('without Chromium --format pdf says to install it, one line, exit 2, and writes nothing', async () => {
    const empty = await buildFixture();
    const r = await perks(['report', 'revenue', '--month', '2024-03', '--format', 'html,pdf', '--output', empty], {
      PERKS_CHROMIUM: join(empty, 'no-chromium'),
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `perks: PERKS_CHROMIUM="${join(empty, 'no-chromium')}" is not an executable file: --format pdf prints with Chromium; install it (Debian/Ubuntu: \`apt-get install chromium\`) or set PERKS_CHROMIUM to its path\n`,
    );
    expect(await readdir(empty)).not.toContain('reports');
  }, 180_000);

  test('--include-test-groups counts a test group in the totals that leave it out by default', async () => {
    // Acme US (12) marked a test group: its USD and EUR totals leave the headline unless asked.
    const withTest = await buildFixture({
      tweak: `ALTER TABLE stg_groups ADD COLUMN is_sandbox BOOLEAN DEFAULT false; UPDATE stg_groups SET is_sandbox = (organisation_group_id = 12)`,
    });
    const md = async (flags: string[]) => {
      const r = await perks([
        'report',
        'revenue',
        '--month',
        '2024-03',
        '--format',
        'md',
        '--output',
        withTest,
        ...flags,
      ]);
      expect(r.code).toBe(0);
      return readFile(join(withTest, 'reports', 'revenue-2024-03.md'), 'utf8');
    };
    const left = await md([]);
    expect(left).toContain('Left out of the totals: Acme US (group 12), a test group (is_sandbox on the platform)');
    expect(left.match(/^\| \*\*Total\*\* .*$/gm)).toEqual(['| **Total** | GBP | 6 | 94.95 GBP | – | 1 | 0.90 GBP |']);
    const counted = await md(['--include-test-groups']);
    expect(counted).toContain('Test group counted in the totals (--include-test-groups): Acme US (group 12)');
    expect(counted.match(/^\| \*\*Total\*\* .*$/gm)).toEqual([
      '| **Total** | EUR | 1 | 1.35 EUR | – | 0 | 0.00 EUR |',
      '| **Total** | GBP | 6 | 94.95 GBP | – | 1 | 0.90 GBP |',
      '| **Total** | USD | 2 | 39.00 USD | – | 1 | 2.70 USD |',
    ]);
  }, 180_000);

  test('a missing warehouse exits 2 with one line', async () => {
    const r = await perks(['report', 'revenue', '--month', '2024-03', '--output', join(out, 'empty')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `perks: no warehouse at ${join(out, 'empty', 'warehouse.duckdb')}: run \`perks build\` (or \`perks run\`) first\n`,
    );
  }, 180_000);
});
