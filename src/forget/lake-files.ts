/** A stream's committed Parquet files (temporary files are hidden and never end in .parquet). */
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { streamDir } from '../lake/index.js';

export function lakeFiles(outDir: string, stream: string): string[] {
  const dir = streamDir(outDir, stream);
  try {
    return readdirSync(dir, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.parquet') && !basename(f).startsWith('.'))
      .sort()
      .map((f) => join(dir, f));
  } catch {
    return [];
  }
}
