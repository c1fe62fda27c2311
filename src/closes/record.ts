/**
 * The close record: `<out>/closes/closes.jsonl`, one JSON object per line, append-only. Each record's
 * `hash` is the sha256 of its canonical JSON (keys sorted, no `hash` field) which includes the previous
 * record's hash (`prev_hash`, "" for the first): changing, removing or reordering any line breaks the chain
 * from that line on. Appends are fsync'd (the file, and the folder when the file is new).
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { fsyncPath } from '../shared/durable-file.js';
import { CloseRecordError } from './errors.js';
import { outputAt, type Output } from '../output/index.js';

export const CloseRecord = z.object({
  seq: z.int().min(1),
  action: z.enum(['close', 'reopen']),
  organisation_group_id: z.int().positive(),
  /** "YYYY-MM" */
  month: z.string().regex(/^\d{4}-\d{2}$/),
  /** UTC instant, ISO 8601 */
  at: z.string(),
  by: z.string(),
  /** close: the note; reopen: the reason. */
  note: z.string(),
  /** close only: closed although the month was provisional (--force). */
  forced: z.boolean(),
  /** close only: the frozen figures (the report's group section, reconciliation, revenue rule). */
  figures: z.unknown(),
  prev_hash: z.string(),
  hash: z.string().regex(/^[0-9a-f]{64}$/),
});
export type CloseRecord = z.infer<typeof CloseRecord>;

export const closesPath = (outDir: string): string => join(outputAt(outDir).closes, 'closes.jsonl');

/** JSON with object keys sorted at every level: the same value always gives the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function hashOf(record: Omit<CloseRecord, 'hash'>): string {
  return createHash('sha256').update(canonicalJson(record)).digest('hex');
}

/**
 * Every record, verified: each line parses, seq counts 1, 2, 3…, prev_hash is the hash before and hash is
 * the record's own. Missing file: no records. Any break is a CloseRecordError naming the line.
 */
export async function readCloses(output: Output): Promise<CloseRecord[]> {
  const file = join(output.closes, 'closes.jsonl');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const records: CloseRecord[] = [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  let prev = '';
  for (const [i, line] of lines.entries()) {
    const where = `${file} line ${i + 1}`;
    const broken = (why: string) =>
      new CloseRecordError(
        `the close record does not verify: ${where} ${why}; the record was changed outside perks: restore it from a backup (nothing was written)`,
      );
    let parsed: ReturnType<typeof CloseRecord.safeParse>;
    try {
      parsed = CloseRecord.safeParse(JSON.parse(line));
    } catch {
      throw broken('is not JSON');
    }
    if (!parsed.success) throw broken(`is not a close record (${parsed.error.issues[0]?.path.join('.') || 'root'})`);
    const r = parsed.data;
    if (r.seq !== i + 1) throw broken(`has seq ${r.seq}, expected ${i + 1}`);
    if (r.prev_hash !== prev) throw broken(`does not follow the line before (prev_hash differs)`);
    const { hash, ...rest } = r;
    if (hashOf(rest) !== hash) throw broken(`has a hash that does not match its content`);
    records.push(r);
    prev = hash;
  }
  return records;
}

/** Appends one record after the verified `existing` ones; the line is on disk when this returns. */
export async function appendClose(
  outDir: string,
  existing: readonly CloseRecord[],
  entry: Omit<CloseRecord, 'seq' | 'prev_hash' | 'hash'>,
): Promise<CloseRecord> {
  const body = { ...entry, seq: existing.length + 1, prev_hash: existing.at(-1)?.hash ?? '' };
  const record: CloseRecord = { ...body, hash: hashOf(body) };
  const file = closesPath(outDir);
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const created = existing.length === 0;
  const handle = await open(file, 'a', 0o600);
  try {
    await handle.write(`${canonicalJson(record)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  if (created) await fsyncPath(dirname(file));
  return record;
}

/** Per group and month, the record in force: the latest close, unless a reopen came after it. */
export function closesInForce(records: readonly CloseRecord[]): Map<string, CloseRecord> {
  const latest = new Map<string, CloseRecord>();
  for (const r of records) latest.set(closeKey(r.organisation_group_id, r.month), r);
  for (const [k, r] of latest) if (r.action !== 'close') latest.delete(k);
  return latest;
}

export const closeKey = (group: number, month: string): string => `${group}/${month}`;
