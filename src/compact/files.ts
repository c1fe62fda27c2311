/** A file helper of compaction: a stream's committed files. */
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { lakeRoot } from '../lake/index.js';

/** A stream's committed Parquet files (temporary files are hidden and never end in .parquet). */
export function streamFiles(outDir: string, stream: string): string[] {
  const dir = join(lakeRoot(outDir), stream);
  try {
    return readdirSync(dir, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.parquet') && !basename(f).startsWith('.'))
      .map((f) => join(dir, f));
  } catch {
    return [];
  }
}
