/**
 * Finds the models: every `sql/<layer>/**\/<name>.sql`. The file name is the model name, the top folder
 * its layer (staging, intermediate, marts, writeback, or any folder added later). `sql/tests/` holds
 * singular data tests instead: queries that return the offending rows.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ModelGraphError } from '../errors.js';
import { parseHeader, type Header } from './header.js';

export interface ModelFile {
  name: string;
  layer: string;
  /** Path relative to the SQL folder's parent, e.g. sql/marts/revenue_monthly.sql, for messages. */
  file: string;
  sql: string;
  header: Header;
}

export interface Project {
  models: ModelFile[];
  /** Singular tests from sql/tests/: each a query whose rows are failures. */
  tests: ModelFile[];
}

/** The folder of singular tests; everything else under sql/ is a layer of models. */
export const TESTS_FOLDER = 'tests';
/** The repository's own sql/ folder, wherever the process runs from. */
export const DEFAULT_SQL_DIR = fileURLToPath(new URL('../../../sql', import.meta.url));

const NAME = /^[a-z_][a-z0-9_]*$/;

export function readProject(sqlDir: string = DEFAULT_SQL_DIR): Project {
  let top: string[];
  try {
    top = readdirSync(sqlDir).sort();
  } catch {
    throw new ModelGraphError(`no SQL folder at ${sqlDir}`);
  }
  const project: Project = { models: [], tests: [] };
  const seen = new Map<string, string>();
  for (const layer of top) {
    const dir = join(sqlDir, layer);
    if (!statSync(dir).isDirectory()) continue;
    for (const path of sqlFiles(dir)) {
      const name = basename(path, '.sql');
      const file = relative(join(sqlDir, '..'), path).split(sep).join('/');
      if (!NAME.test(name)) {
        throw new ModelGraphError(`${file}: a model name must be lower_snake_case (letters, digits, _), not "${name}"`);
      }
      const other = seen.get(name);
      if (other) throw new ModelGraphError(`two files define "${name}": ${other} and ${file}; rename one`);
      seen.set(name, file);
      const sql = readFileSync(path, 'utf8');
      const entry = { name, layer, file, sql, header: parseHeader(sql, file) };
      (layer === TESTS_FOLDER ? project.tests : project.models).push(entry);
    }
  }
  return project;
}

function sqlFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((f) => join(dir, f));
}
