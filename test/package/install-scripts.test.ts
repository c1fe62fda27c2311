/**
 * `npm ci` is quiet about install scripts: every dependency the lock file marks as having one is declared in
 * package.json's `allowScripts` (README, "The two commands"), and npm itself, asked read-only
 * (`npm install-scripts ls`), finds none left to review in the installed tree.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, test } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

const run = promisify(execFile);
const json = (file: string) => JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as Record<string, unknown>;

test('every package of the lock file with an install script is declared in allowScripts', () => {
  const lock = json('package-lock.json') as { packages: Record<string, { hasInstallScript?: boolean }> };
  const declared = Object.keys((json('package.json').allowScripts ?? {}) as Record<string, boolean>).map(
    (k) => k.replace(/(.)@.*$/, '$1'), // "esbuild@0.28.2" or "esbuild"
  );
  const withScripts = Object.entries(lock.packages)
    .filter(([, p]) => p.hasInstallScript)
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
  expect(withScripts.length).toBeGreaterThan(0); // esbuild, under tsx: the declaration has something to cover
  expect(withScripts.filter((name) => !declared.includes(name))).toEqual([]);
});

test('npm install-scripts ls finds nothing left to review (what npm ci would warn about)', async () => {
  const { stdout } = await run('npm', ['install-scripts', 'ls', '--json'], { cwd: ROOT });
  expect(JSON.parse(stdout)).toEqual({ allowScripts: [] });
}, 30_000);
