/**
 * Incremental state per stream and group, as the extract reads and writes it. Stored by the lake's
 * atomic state store under <out>/state/<stream>/<group>.json, written only after the data it
 * describes is committed.
 */
import { z } from 'zod';
import { now } from '../shared/clock.js';
import { isRealDay } from '../shared/checks.js';
import { ConfigError } from '../shared/exit-codes.js';

/** When a user's per-user streams were last refreshed, and their change signals then (per-user/user-selection.ts). */
export interface Refreshed {
  /** When the user was last refreshed (ISO). */
  at: string;
  /** Fingerprint of the user's change signals then. */
  fp: string;
}

export interface StateStore {
  /** The stored value; `schema`, when given, checks its shape (a wrong one stops the run, naming the file). */
  read<T>(stream: string, key: string, schema?: z.ZodType<T>): Promise<T | undefined>;
  /** The file a state lives in (for messages). */
  fileOf?(stream: string, key: string): string;
  write(stream: string, key: string, value: unknown): Promise<void>;
}

/** Windowed streams (orders, redemption stats). Days are the group's local days. */
export interface WindowState {
  /** First local day not yet extracted (exclusive end of the extracted range). */
  watermark?: string;
  /** First local day ever extracted. */
  firstDay?: string;
  lookbackDays?: number;
  /** The upper bound of the last pass that re-read the open and previous month whole (PERKS_DEEP_REREAD_DAYS). */
  deepAt?: string;
  /**
   * The pass in progress or last finished: its frozen upper bound, the windows done in it, and whether
   * it finished. Only an unfinished pass (killed, failed) is resumed; every new run after a finished
   * one re-reads the lookback, however soon it comes.
   */
  pass?: { upper: string; done: string[]; finished?: boolean };
  updatedAt?: string;
}

/** Per-user streams (credit, interactions). */
export interface PerUserState {
  users: Record<string, Refreshed>;
  /** As WindowState.pass: users done in an unfinished pass are not asked again when it resumes. */
  pass?: { upper: string; done: number[]; finished?: boolean };
  updatedAt?: string;
}

/**
 * The shapes the state files must have when read (a wrong one is one line naming the file and the fix,
 * exit 2, never `day.split is not a function`). Unknown keys are kept: an older or newer version may add some.
 */
const stateDay = z.string().refine(isRealDay, 'expected a day YYYY-MM-DD');
export const WindowStateSchema: z.ZodType<WindowState> = z.looseObject({
  watermark: stateDay.optional(),
  firstDay: stateDay.optional(),
  lookbackDays: z.number().int().min(0).optional(),
  deepAt: stateDay.optional(),
  pass: z.looseObject({ upper: stateDay, done: z.array(stateDay), finished: z.boolean().optional() }).optional(),
  updatedAt: z.string().optional(),
});
export const PerUserStateSchema: z.ZodType<PerUserState> = z.looseObject({
  users: z.record(z.string().regex(/^\d+$/, 'expected user ids'), z.looseObject({ at: z.string(), fp: z.string() })),
  pass: z
    .looseObject({ upper: stateDay, done: z.array(z.number().int()), finished: z.boolean().optional() })
    .optional(),
  updatedAt: z.string().optional(),
});

/** A watermark beyond tomorrow: a clock set back, or a state copied from elsewhere. Refused, never "nothing to do". */
export class FutureWatermarkError extends ConfigError {
  constructor(file: string, watermark: string, today: string) {
    super(
      `state file ${file} says ${watermark} is already extracted, beyond tomorrow (today is ${today} here): ` +
        `the clock was set back or the state came from elsewhere; ` +
        `rerun with --full-refresh (re-extracts from the start date) or --start-date D, or delete the file`,
    );
  }
}

/** A pass is resumed only when it was interrupted (not finished) on the same upper bound. */
export function resumes(
  pass: { upper: string; finished?: boolean } | undefined,
  upper: string,
  fullRefresh?: boolean,
): boolean {
  return !fullRefresh && pass !== undefined && pass.upper === upper && !pass.finished;
}

/** Serialises the state writes of one stream and group: windows finish out of order. */
export class StateWriter<T> {
  private chain: Promise<void> = Promise.resolve();
  /** The next write, not started yet: later changes join it instead of writing the file again. */
  private queued?: Promise<void>;
  constructor(
    private readonly store: StateStore,
    private readonly stream: string,
    private readonly key: string,
    public value: T,
  ) {}

  /** Applies `change` now; resolves once a write holding it (and every change before it) is durable. */
  update(change: (value: T) => void): Promise<void> {
    change(this.value);
    if (!this.queued) {
      this.queued = this.chain.then(async () => {
        this.queued = undefined;
        (this.value as { updatedAt?: string }).updatedAt = now().toISOString();
        await this.store.write(this.stream, this.key, structuredClone(this.value));
      });
      this.chain = this.queued.catch(() => undefined); // a failed write fails its callers, not the next write
    }
    return this.queued;
  }
}
