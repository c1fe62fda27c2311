/**
 * The ledger's clock: every entry's `attempted_at`. It is the program's clock (src/shared/clock.ts), the one
 * the extract stamps `_extracted_at` with, because `perks writeback --verify` compares the two; and it only
 * moves forward across the output directory's runs and writers (lake/run-stamps.ts): a stamp comes after the
 * ledger's latest entry (an outcome sorts after its pending entry, and a rerun's entries after the crashed
 * run's even under a PERKS_NOW that restarts every process at one instant) and after every stamp the
 * directory records, read again before each batch's outcomes (an extract that began during the posts stamps
 * before them: the lake does not decide for them). The run records its latest stamp as it ends, so an
 * extract that starts afterwards stamps after its posts.
 */
import { latestStamp, recordRunStamp, WRITEBACK_STAMPS } from '../lake/index.js';
import { now } from '../shared/clock.js';
import type { EntryStamp } from './rows.js';

export class LedgerClock implements EntryStamp {
  private stamped = false;
  private last = Number.NEGATIVE_INFINITY;

  constructor(
    readonly runId: string,
    private readonly outDir: string,
  ) {}

  /** Starts after the ledger's latest entry (`ledgerLatest`, ms) and the directory's stamps, before any stamp. */
  async startAfter(ledgerLatest: number): Promise<void> {
    this.last = Math.max(this.last, ledgerLatest);
    await this.follow();
  }

  /** The program's clock, or 1 ms after the latest stamp known when the clock is not past it. */
  stamp(): string {
    this.last = Math.max(now().getTime(), this.last + 1);
    this.stamped = true;
    return new Date(this.last).toISOString();
  }

  /** Follows the stamps the directory's writers recorded (since: an extract that began meanwhile). */
  async follow(): Promise<void> {
    this.last = Math.max(this.last, await latestStamp(this.outDir));
  }

  /** Records the run's latest stamp for the directory's next writers (nothing when it stamped nothing). */
  async record(): Promise<void> {
    if (this.stamped) await recordRunStamp(this.outDir, WRITEBACK_STAMPS, new Date(this.last));
  }
}
