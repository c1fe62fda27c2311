/**
 * The output as one value (src/output): its folder made absolute, its top folders named from the one table,
 * which is also the store's (store/layout.ts reads its views and private folders from it).
 */
import { join, resolve } from 'node:path';
import { expect, test } from 'vitest';
import { FOLDER_NAMES, folderOf, outputAt } from '../../src/output/index.js';
import { LOCAL_OUTPUT_HOOKS } from '../../src/shared/output-hooks.js';
import { isPrivate, isView } from '../../src/store/layout.js';

test('a relative folder becomes absolute, and every top folder sits directly in it', () => {
  const output = outputAt('some/out');
  const dir = resolve('some/out');
  expect(output.dir).toBe(dir);
  expect(output.store).toBeUndefined();
  expect(output.hooks).toBe(LOCAL_OUTPUT_HOOKS);
  expect([output.lake, output.runs, output.closes, output.marts, output.reports, output.audit]).toEqual(
    ['lake', 'runs', 'closes', 'marts', 'reports', 'audit'].map((name) => join(dir, name)),
  );
  expect(output.state()).toBe(join(dir, 'state'));
  expect(output.state('writeback')).toBe(join(dir, 'state', 'writeback'));
  expect(output.state('orders', '11.json')).toBe(join(dir, 'state', 'orders', '11.json'));
  expect(output.warehouse).toBe(join(dir, 'warehouse.duckdb'));
});

test("a store's working copy carries the store's URL and hooks", () => {
  const hooks = { ...LOCAL_OUTPUT_HOOKS };
  const output = outputAt('/copy', { url: 's3://b/p', hooks });
  expect(output.store).toBe('s3://b/p');
  expect(output.hooks).toBe(hooks);
  expect(output.lake).toBe('/copy/lake');
});

test("the store's views and private folders are the table's, as the store kept them before", () => {
  expect(FOLDER_NAMES.filter((f) => isView(`${f}/x`))).toEqual(['marts', 'reports', 'docs']);
  expect(FOLDER_NAMES.filter((f) => isPrivate(`${f}/x`)).sort()).toEqual(
    ['audit', 'closes', 'lake', 'quarantine', 'seed', 'state'].sort(),
  );
  expect([isView('warehouse.duckdb'), isPrivate('warehouse.duckdb'), isView('martsy/x')]).toEqual([false, false, false]);
  expect([folderOf('lake/orders/x.parquet'), folderOf('constructor/x'), folderOf('runs')]).toEqual([
    'lake',
    undefined,
    'runs',
  ]);
});
