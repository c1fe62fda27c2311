/**
 * The write-ahead journal: one JSON line per ledger entry, appended to a segment file of the run
 * (`<out>/state/writeback/journal-<run_id>.jsonl`) and fsync'd before the call it announces. It is the
 * crash-safe half of the ledger; compaction (ledger.ts) turns closed segments into the Parquet table.
 * A crash can leave at most a torn last line, which readers skip.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fsyncPathSync } from '../shared/durable-file.js';
import type { LedgerEntry } from './rows.js';

const SEGMENT = /^journal-(.+)\.jsonl$/;

export class Journal {
  private fd: number;

  private constructor(readonly path: string) {
    this.fd = fs.openSync(path, 'a', 0o600);
  }

  /** Opens (creates) this run's segment and makes its directory entry durable. */
  static open(dir: string, runId: string): Journal {
    // Under <out>/state, like the extract's state: 0700 folder, 0600 files (a looser folder is tightened).
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    fs.chmodSync(dir, 0o700);
    const journal = new Journal(path.join(dir, `journal-${runId}.jsonl`));
    fsyncPathSync(dir, { folder: true });
    return journal;
  }

  /** Appends entries in one write and waits until they are on disk. */
  append(entries: LedgerEntry[]): void {
    if (entries.length === 0) return;
    const text = entries.map((e) => `${JSON.stringify(e)}\n`).join('');
    fs.writeSync(this.fd, text);
    fs.fsyncSync(this.fd);
  }

  close(): void {
    if (this.fd >= 0) fs.closeSync(this.fd);
    this.fd = -1;
  }
}

/** The journal segments in a directory, oldest run first (run ids sort by time). */
export function journalSegments(dir: string): { path: string; runId: string }[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .flatMap((name) => {
      const m = SEGMENT.exec(name);
      return m ? [{ path: path.join(dir, name), runId: m[1] }] : [];
    })
    .sort((a, b) => a.runId.localeCompare(b.runId));
}
