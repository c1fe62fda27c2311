/**
 * Records the schema rejects go to `<out>/quarantine/<stream>/<run_id>.jsonl`, one JSON line each:
 * when, the run, the stream, why (each zod issue: field path, the value there, the message) and
 * the raw record as received. Files 0600 in 0700 folders: records hold personal data.
 * A line passes through redact() so a registered secret can never reach the file.
 */
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { redact } from '../shared/redact.js';
import { ensureDir } from './atomic-file.js';
import { writingOutput } from './errors.js';
import { quarantineRoot, safeIdentifier, safeSegment } from './paths.js';
import { now } from '../shared/clock.js';

export interface QuarantineIssue {
  path: string;
  value?: unknown;
  message: string;
}

export type QuarantineReason = string | z.ZodError | readonly z.core.$ZodIssue[];

export interface QuarantineEntry {
  outDir: string;
  stream: string;
  runId: string;
  record: unknown;
  reason: QuarantineReason;
}

/** The file the run's rejected records of `stream` go to. */
export function quarantineFile(outDir: string, stream: string, runId: string): string {
  return join(quarantineRoot(outDir), safeIdentifier('stream name', stream), `${safeSegment('run id', runId)}.jsonl`);
}

export async function quarantineRecord(entry: QuarantineEntry): Promise<void> {
  const file = quarantineFile(entry.outDir, entry.stream, entry.runId);
  const line = {
    at: now().toISOString(),
    run_id: entry.runId,
    stream: entry.stream,
    issues: issuesOf(entry.reason, entry.record),
    record: entry.record,
  };
  await ensureDir(quarantineRoot(entry.outDir), 0o700);
  await ensureDir(join(quarantineRoot(entry.outDir), entry.stream), 0o700);
  await writingOutput('the quarantine', file, () =>
    appendFile(file, `${redact(JSON.stringify(line))}\n`, { mode: 0o600 }),
  );
}

/** Zod issues as path, the offending value and message; a plain reason as a single issue. */
export function issuesOf(reason: QuarantineReason, record: unknown): QuarantineIssue[] {
  if (typeof reason === 'string') return [{ path: '', message: reason }];
  const issues = reason instanceof z.ZodError ? reason.issues : reason;
  return issues.map((issue) => ({
    path: issue.path.map(String).join('.'),
    value: valueAt(record, issue.path),
    message: issue.message,
  }));
}

function valueAt(record: unknown, path: readonly PropertyKey[]): unknown {
  let current = record;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}
