/**
 * Run manifests: `<out>/runs/<run_id>.json`, written atomically (temp, fsync, rename, fsync dir), so
 * a manifest is either whole or absent. The extract defines the content; this places it safely and reads
 * back the parts that status and the build record rely on.
 *
 * Keys are snake_case at every depth (`run_id`, `finished_at`, `failed_groups`; docs/reference/operations.md,
 * "JSON keys"); the code's objects stay camelCase and cross here. A manifest an older release wrote in
 * camelCase is read the same (`readRunManifestFile`).
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { camelKeys, snakeKeys, type KeyRules } from '../shared/json-keys.js';
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
    const parsed = RunManifest.safeParse(await readRunManifestFile(join(dir, name)));
    if (parsed.success) manifests.push(parsed.data);
  }
  return manifests.sort((a, b) => a.finishedAt.localeCompare(b.finishedAt));
}

export function runManifestPath(outDir: string, runId: string): string {
  return join(runsRoot(outDir), `${safeSegment('run id', runId)}.json`);
}

/**
 * A manifest's keys that are data, kept as they are: names of streams, fields, JSON types, operations and scopes
 * (`schema.streams`, `unknown_fields`, `api.calls_by_operation`, `api.by_scope`).
 */
export const MANIFEST_KEYS: KeyRules = {
  dataKeys: [
    'schema.streams',
    'schema.streams.*.fields',
    'schema.streams.*.fields.*.types',
    'unknownFields',
    'unknownFields.*',
    'api.callsByOperation',
    'api.byScope',
  ],
};

/**
 * A manifest file as the code's object (camelCase keys), whichever spelling it was written in (snake_case since
 * issue 43, camelCase before); undefined when it cannot be read or is not JSON.
 */
export async function readRunManifestFile(path: string): Promise<unknown> {
  const text = await readFile(path, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    return camelKeys(JSON.parse(text), MANIFEST_KEYS);
  } catch {
    return undefined;
  }
}

/** Writes the manifest of run `manifest.runId` (its keys in snake_case) and returns its path. */
export async function writeRunManifest(
  outDir: string,
  manifest: { runId: string } & Record<string, unknown>,
  options: { mode?: number } = {},
): Promise<string> {
  const path = runManifestPath(outDir, manifest.runId);
  await writeJsonAtomic(path, snakeKeys(manifest, MANIFEST_KEYS), { mode: options.mode ?? 0o644 });
  return path;
}
