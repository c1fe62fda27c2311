/**
 * Run manifests: `<out>/runs/<run_id>.json`, written atomically (temp, fsync, rename, fsync dir), so
 * a manifest is either whole or absent. The extract defines the content; this places it safely and reads
 * back the parts that status and the build record rely on.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { writeJsonAtomic } from './atomic-file.js';
import { runsRoot, safeSegment } from './paths.js';

/** The parts of an extract's run manifest that readers rely on (unknown keys ignored). */
export const RunManifest = z.looseObject({
  runId: z.string(),
  status: z.string(),
  finishedAt: z.string(),
  streams: z.array(
    z.looseObject({
      name: z.string(),
      status: z.string(),
      groups: z.array(z.looseObject({ group: z.number().nullish(), rows: z.number().optional() })).default([]),
      failedGroups: z.array(z.number()).optional(),
      error: z.string().optional(),
    }),
  ),
});
export type RunManifest = z.infer<typeof RunManifest>;

/** Every extract run manifest of `outDir`, oldest first (a file of another kind, or unreadable, is skipped). */
export async function readRunManifests(outDir: string): Promise<RunManifest[]> {
  const dir = runsRoot(outDir);
  const names = existsSync(dir) ? (await readdir(dir)).filter((n) => n.endsWith('.json') && !n.startsWith('.')) : [];
  const manifests: RunManifest[] = [];
  for (const name of names) {
    const parsed = RunManifest.safeParse(await readFile(join(dir, name), 'utf8').then(JSON.parse, () => undefined));
    if (parsed.success) manifests.push(parsed.data);
  }
  return manifests.sort((a, b) => a.finishedAt.localeCompare(b.finishedAt));
}

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
