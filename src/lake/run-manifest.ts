/**
 * Run manifests: `<out>/runs/<run_id>.json`, written atomically (temp, fsync, rename, fsync dir), so
 * a manifest is either whole or absent. The extract defines the content; this only places it safely.
 */
import { join } from 'node:path';
import { writeJsonAtomic } from './atomic-file.js';
import { runsRoot, safeSegment } from './paths.js';

export function runManifestPath(outDir: string, runId: string): string {
  return join(runsRoot(outDir), `${safeSegment('run id', runId)}.json`);
}

/** Writes the manifest of run `manifest.run_id` and returns its path. */
export async function writeRunManifest(
  outDir: string,
  manifest: { run_id: string } & Record<string, unknown>,
): Promise<string> {
  const path = runManifestPath(outDir, manifest.run_id);
  await writeJsonAtomic(path, manifest, { mode: 0o644 });
  return path;
}
