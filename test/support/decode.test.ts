/** The output search the personal-data scenarios rely on: it must find what is there, and only that. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { withLakeConnection } from '../../src/lake/index.js';
import { searchOutput } from './decode.js';
import { tempOut } from './scratch.js';

test('many people in one pass: each email anywhere, each name pair only where one row or line holds both', async () => {
  const dir = tempOut('perks-decode-');
  await withLakeConnection((c) =>
    c.run(`COPY (SELECT * FROM (VALUES ('Ann', 'Berg', 'A@x.io'), ('Cy', 'Dahl', NULL)) AS t(first_name, last_name, email))
           TO '${join(dir, 'people.parquet')}' (FORMAT parquet, COMPRESSION zstd)`),
  );
  writeFileSync(join(dir, 'log.jsonl'), '{"first":"Bo","last":"Lind"}\n{"note":"nothing"}\n');

  const found = await searchOutput(
    dir,
    ['a@x.io', 'c@x.io'],
    [
      ['Ann', 'Berg'],
      ['Bo', 'Lind'],
      ['Ann', 'Dahl'],
    ],
  );

  expect(found.hits.map((h) => [h.file, h.needle, h.where]).sort()).toEqual([
    ['log.jsonl', 'Bo+Lind', 'line 1'],
    ['people.parquet', 'Ann+Berg', 'row 1'],
    ['people.parquet', 'a@x.io', 'email'],
  ]);
  expect(found.files).toEqual({ parquet: 1, duckdb: 0, text: 1 });
  // one pair alone is the same search
  expect((await searchOutput(dir, [], ['Cy', 'Dahl'])).hits).toEqual([
    { file: 'people.parquet', needle: 'Cy+Dahl', where: 'row 2' },
  ]);
});
