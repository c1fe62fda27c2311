/**
 * Bounded memory: the build's DuckDB runs under the memory limit asked for (flag, PERKS_BUILD_MEMORY_LIMIT,
 * or the default) and spills into a folder inside <out>, which is gone after the build.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { buildSettingsOf, buildWarehouse, checkBuildOptions } from '../../src/transform/index.js';
import { ConfigError } from '../../src/shared/exit-codes.js';
import { loadConfig } from '../../src/config/index.js';
import { writeFixtureLake } from './fixture-lake.js';
import { AS_OF, copyOfProject, query, temporaries } from './helpers.js';
import { outputAt } from '../../src/output/index.js';

let outDir: string;
// the project's models plus one that records the settings the build's DuckDB runs under
const project = copyOfProject();
const sqlDir = project.sqlDir;

beforeAll(async () => {
  outDir = await writeFixtureLake();
  writeFileSync(
    join(sqlDir, 'marts', 'build_settings.sql'),
    "-- grain: one row\nselect current_setting('memory_limit') as memory_limit, current_setting('temp_directory') as temp_directory\n",
  );
});
afterAll(() => {
  rmSync(outDir, { recursive: true, force: true });
  project.remove();
});

const settings = async () =>
  (await query(join(outDir, 'warehouse.duckdb'), 'SELECT * FROM build_settings'))[0] as {
    memory_limit: string;
    temp_directory: string;
  };

test('the memory limit asked for reaches DuckDB, and it spills inside <out>, leaving nothing behind', async () => {
  const result = await buildWarehouse({ output: outputAt(outDir), sqlDir, asOf: AS_OF, memoryLimit: '512MB' });
  expect(result.ok).toBe(true);
  const s = await settings();
  expect(s.memory_limit).toBe('488.2 MiB'); // 512 MB as DuckDB shows it
  expect(s.temp_directory.startsWith(outDir)).toBe(true);
  expect(s.temp_directory).toMatch(/warehouse\.duckdb\.tmp-.*\.spill$/);
  expect(temporaries(outDir)).toEqual([]);
});

test('PERKS_BUILD_MEMORY_LIMIT is the default; a flag overrides it; the built-in default is 1GB', async () => {
  expect(
    checkBuildOptions({ output: outputAt(outDir) }, loadConfig({ PERKS_BUILD_MEMORY_LIMIT: '3GB' })).memoryLimit,
  ).toBe('3GB');
  expect(
    checkBuildOptions({ output: outputAt(outDir), memoryLimit: '2GB' }, loadConfig({ PERKS_BUILD_MEMORY_LIMIT: '3GB' }))
      .memoryLimit,
  ).toBe('2GB');
  expect(checkBuildOptions({ output: outputAt(outDir) }, loadConfig({})).memoryLimit).toBe('1GB');
  // a caller passes the settings it read: the build reads no environment
  const read = loadConfig({ PERKS_BUILD_MEMORY_LIMIT: '256MB' });
  expect((await buildWarehouse({ output: outputAt(outDir), sqlDir, asOf: AS_OF, ...buildSettingsOf(read) })).ok).toBe(
    true,
  );
  expect((await settings()).memory_limit).toBe('244.1 MiB');
});

test('a memory limit that is not a size is one line naming the setting (exit 2)', () => {
  const fromEnv = () =>
    checkBuildOptions({ output: outputAt(outDir) }, loadConfig({ PERKS_BUILD_MEMORY_LIMIT: 'lots' }));
  expect(fromEnv).toThrow(ConfigError);
  expect(fromEnv).toThrow(/^PERKS_BUILD_MEMORY_LIMIT="lots" is invalid: expected a size such as 1GB$/);
  const fromFlag = () => checkBuildOptions({ output: outputAt(outDir), memoryLimit: 'lots' }, loadConfig({}));
  expect(fromFlag).toThrow(
    /^--memory-limit \(or PERKS_BUILD_MEMORY_LIMIT\)="lots" is invalid: expected a size such as 1GB$/,
  );
});
