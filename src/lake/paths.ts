/**
 * The output directory's layout and path-segment validation (temporary names: src/shared/durable-file.ts).
 * Values that come from the API (group ids, dates) become directory names, so each
 * segment is checked against a strict pattern and the joined path must stay inside the lake.
 */
import { join, relative, resolve, sep } from 'node:path';
import type { FolderName } from '../output/index.js';
import { UnsafePathError } from './errors.js';

/** Letters, digits, "_", "-", ".", "+"; not starting with "." (no "..", no hidden names); at most 128. */
const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9_.+-]{0,127}$/;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export function safeSegment(what: string, value: string): string {
  if (typeof value !== 'string' || !SEGMENT.test(value)) throw new UnsafePathError(what, String(value));
  return value;
}

export function safeIdentifier(what: string, value: string): string {
  if (typeof value !== 'string' || !IDENTIFIER.test(value)) throw new UnsafePathError(what, String(value));
  return value;
}

/** A top folder of the output, by its name in the output's table (src/output/folders.ts): no name spelt twice. */
const top = (outDir: string, name: FolderName) => join(outDir, name);
export const lakeRoot = (outDir: string) => top(outDir, 'lake');
export const stateRoot = (outDir: string) => top(outDir, 'state');
export const runsRoot = (outDir: string) => top(outDir, 'runs');
export const quarantineRoot = (outDir: string) => top(outDir, 'quarantine');

/** `<out>/lake/<stream>/<key>=<value>/…`, Hive style, in the order the partition object lists its keys. */
export function partitionDir(outDir: string, stream: string, partition: Record<string, string>): string {
  const streamDir = join(lakeRoot(outDir), safeIdentifier('stream name', stream));
  const segments = Object.entries(partition).map(
    ([key, value]) => `${safeIdentifier('partition key', key)}=${safeSegment(`partition value for ${key}`, value)}`,
  );
  const dir = join(streamDir, ...segments);
  // Defence in depth: whatever the patterns allow, the result must lie under the stream's folder.
  const rel = relative(resolve(streamDir), resolve(dir));
  if (rel !== segments.join(sep)) throw new UnsafePathError('partition', segments.join('/'));
  return dir;
}

/**
 * A path DuckDB reads as itself, never as a pattern: DuckDB globs every path a reader is given (a list's
 * items too), so an output folder named `out[r]` would read `outr`'s files and `a?b` also `axb`'s. Each
 * glob character is put in brackets (`[` → `[[]`), which DuckDB reads as that one character.
 */
export function literalPath(path: string): string {
  return path.replace(/[[*?]/g, (c) => `[${c}]`);
}

/** A glob over the files under `dir` (taken literally): `globUnder(out, '**', '*.parquet')`. */
export function globUnder(dir: string, ...pattern: string[]): string {
  return join(literalPath(dir), ...pattern);
}
