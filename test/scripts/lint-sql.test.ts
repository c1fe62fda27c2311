/** scripts/lint-sql.mjs, run by `npm run lint`: the SQL conventions of docs/dev/sql-style.md, checked. */
import { spawnSync } from 'node:child_process';
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { tempOut } from '../support/scratch.js';

const ROOT = join(import.meta.dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'lint-sql.mjs');

const lint = (sqlDir?: string) =>
  spawnSync(process.execPath, [SCRIPT, ...(sqlDir ? [sqlDir] : [])], { encoding: 'utf8', cwd: ROOT });

test('the SQL of the repository follows its conventions', () => {
  const run = lint();
  expect(run.stdout).toMatch(/^lint-sql: \d+ models and \d+ tests follow docs\/dev\/sql-style\.md\n$/);
  expect(run.status).toBe(0);
});

test('a finding names the file, the line and the rule, one line each, and fails the lint', async () => {
  const dir = tempOut('perks-lint-sql-');
  const sql = join(dir, 'sql');
  await cp(join(ROOT, 'sql'), sql, { recursive: true });
  const mart = join(sql, 'marts', 'dim_groups.sql');
  const text = await readFile(mart, 'utf8');
  await writeFile(
    mart,
    text
      .replace('-- key: organisation_group_id', '-- key: organisation_group_id, no_such_column')
      .replace(/\nselect /, '\nSELECT ')
      .replace(/\n\)\n\nselect/, '\n)\n\nselect\t'),
  );
  await writeFile(join(sql, 'intermediate', 'users_again.sql'), '-- grain: one row per user\nselect 1 as one  \n');
  const run = lint(sql);
  expect(run.status).toBe(1);
  const lines = run.stdout.trim().split('\n');
  expect(lines).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/^sql\/marts\/dim_groups\.sql:\d+: key: names no_such_column, which the model has no/),
      expect.stringMatching(/^sql\/marts\/dim_groups\.sql:\d+: lowercase: /),
      expect.stringMatching(/^sql\/intermediate\/users_again\.sql:1: header: opens with no description/),
      expect.stringMatching(/^sql\/intermediate\/users_again\.sql:1: header: has no `-- key:` line/),
      expect.stringMatching(
        /^sql\/intermediate\/users_again\.sql:1: file-name: a model of sql\/intermediate\/ is named int_/,
      ),
      expect.stringMatching(/^sql\/intermediate\/users_again\.sql:2: layout: trailing whitespace/),
    ]),
  );
  expect(run.stderr).toMatch(/^lint-sql: \d+ finding\(s\) in sql\/ \(conventions: docs\/dev\/sql-style\.md\)\n$/);
});
