/**
 * Once per day: which condition each webhook was last told of, and on which day (the program's clock, UTC),
 * in `<out>/state/alerts.json`. A condition told today is not told again today; a failed post is not
 * recorded, so the next run tries again. Entries older than KEEP_DAYS are dropped.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { stateRoot, writeJsonAtomic } from '../lake/index.js';

const KEEP_DAYS = 35;

const AlertState = z.object({ sent: z.record(z.string(), z.string()) });
type AlertState = z.infer<typeof AlertState>;

export const alertStatePath = (outDir: string) => join(stateRoot(outDir), 'alerts.json');
const keyOf = (endpointId: string, condition: string) => `${endpointId} ${condition}`;

export class SentToday {
  private constructor(
    private readonly outDir: string,
    private readonly state: AlertState,
    private readonly day: string,
  ) {}

  /** The state as written (an unreadable one counts as empty: at worst an alert is sent twice). */
  static async read(outDir: string, day: string): Promise<SentToday> {
    const text = await readFile(alertStatePath(outDir), 'utf8').catch(() => undefined);
    let parsed: AlertState | undefined;
    try {
      parsed = text === undefined ? undefined : AlertState.parse(JSON.parse(text));
    } catch {
      parsed = undefined;
    }
    return new SentToday(outDir, parsed ?? { sent: {} }, day);
  }

  has(endpointId: string, condition: string): boolean {
    return this.state.sent[keyOf(endpointId, condition)] === this.day;
  }

  mark(endpointId: string, condition: string): void {
    this.state.sent[keyOf(endpointId, condition)] = this.day;
  }

  async save(): Promise<void> {
    const oldest = new Date(Date.parse(`${this.day}T00:00:00Z`) - KEEP_DAYS * 86_400_000).toISOString().slice(0, 10);
    const sent = Object.fromEntries(Object.entries(this.state.sent).filter(([, day]) => day >= oldest));
    await writeJsonAtomic(alertStatePath(this.outDir), { sent }, { dirMode: 0o700 });
  }
}
