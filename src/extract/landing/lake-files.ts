/** Whether a lake folder holds any committed Parquet file (a killed run can leave only hidden temporary files). */
import { existsSync, readdirSync } from 'node:fs';
import { basename } from 'node:path';

export function hasParquet(dir: string): boolean {
  if (!existsSync(dir)) return false;
  return readdirSync(dir, { recursive: true }).some((f) => {
    const name = basename(String(f));
    return name.endsWith('.parquet') && !name.startsWith('.');
  });
}
