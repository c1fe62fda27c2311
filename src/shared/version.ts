/**
 * This program's version: the `version` of its package.json, found by walking up from this module, so it
 * is the same whether the sources run (tsx), their compiled copy (the tests' cache under node_modules) or an
 * installed package. `perks --version` prints it; every run manifest records it.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const NAME = 'perks-pipeline';
let found: string | undefined;

export function perksVersion(): string {
  if (found) return found;
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === NAME && pkg.version) return (found = pkg.version);
    } catch {
      // no package.json here, or not ours: look further up
    }
    if (dirname(dir) === dir) return (found = 'unknown');
  }
}
