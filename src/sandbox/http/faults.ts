/**
 * Fault injection for reliability tests: added latency, 5xx answers, requests never answered,
 * bodies cut mid-way, records that drift. Draws come from a seeded stream, so a run with the same calls
 * sees the same faults (drift depends on the record itself: see drift.ts).
 */
import { NO_FAULTS, FaultsSchema, type Faults } from '../options.js';
import { SandboxError, HungRequest } from '../errors.js';
import { createRng, type Rng } from '../prng.js';
import { driftData, emptyDriftCounts, type DriftCounts } from './drift.js';
import { schemaDriftData } from './schema-drift.js';
import { JsonList, type Json } from '../json/written-json.js';

export interface FaultCounts {
  errors: number;
  hangs: number;
  truncations: number;
  /** Distinct tokens revoked by revokeTokenEvery. */
  revocations: number;
  /** Records drifted, per kind. */
  drift: DriftCounts;
}

const ERROR_STATUSES = [500, 502, 503] as const;
const ERROR_MESSAGES: Record<number, string> = { 500: 'Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable' };

export class FaultInjector {
  current: Faults;
  readonly counts: FaultCounts = { errors: 0, hangs: 0, truncations: 0, revocations: 0, drift: emptyDriftCounts() };
  private readonly rng: Rng;

  constructor(
    private readonly seed: number,
    initial: Partial<Faults>,
  ) {
    this.rng = createRng(seed, 'faults');
    this.current = { ...NO_FAULTS, ...FaultsSchema.parse(initial) };
  }

  set(change: Partial<Faults>): void {
    this.current = { ...this.current, ...FaultsSchema.parse(change) };
  }

  /** Runs before an API call is served: waits, hangs until the client gives up (or the sandbox closes), or fails with a 5xx. */
  async before(client: AbortSignal, shutdown: AbortSignal): Promise<void> {
    const f = this.current;
    if (f.latencyMs > 0 || f.hangRate > 0) await this.delay(AbortSignal.any([client, shutdown]));
    if (client.aborted || shutdown.aborted) throw new HungRequest();
    if (f.errorRate > 0 && this.rng.next() < f.errorRate) {
      this.counts.errors++;
      const status = ERROR_STATUSES[Math.floor(this.rng.next() * ERROR_STATUSES.length)];
      throw new SandboxError('injected_fault', status, ERROR_MESSAGES[status]);
    }
  }

  private async delay(signal: AbortSignal): Promise<void> {
    const f = this.current;
    if (f.latencyMs > 0) await sleep(f.latencyMs, signal);
    if (f.hangRate > 0 && this.rng.next() < f.hangRate) {
      this.counts.hangs++;
      await new Promise<void>((resolve) =>
        signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
      );
      throw new HungRequest();
    }
  }

  /** A listing's data with some records drifted (driftRate, schemaDrift); records written as JSON text become objects first. */
  drift(operation: string, data: unknown): unknown {
    if (this.current.driftRate <= 0 && !this.current.schemaDrift.length) return data;
    const records = data instanceof JsonList ? data.values() : data;
    driftData(this.seed, operation, records, this.current.driftRate, this.counts.drift);
    schemaDriftData(operation, records, this.current.schemaDrift);
    return records;
  }

  /** A successful body, or the first half of its text when the draw says to cut it. */
  maybeTruncate(json: Json): Json {
    if (this.current.truncateRate > 0 && this.rng.next() < this.current.truncateRate) {
      this.counts.truncations++;
      const text = typeof json === 'string' ? json : Buffer.from(json).toString('utf8');
      return text.slice(0, Math.max(1, Math.floor(text.length / 2)));
    }
    return json;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}
