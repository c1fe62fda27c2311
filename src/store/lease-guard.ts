/**
 * A writing command's hold on the store: its lease (lease.ts; none for a reader), taken after the service's
 * conditional writes are known, and what a lease found lost does: it stops the command at once (onLeaseLost).
 */
import type { StoreClient } from './client.js';
import { StoreLockedError } from './errors.js';
import type { LocalIndex } from './indexes.js';
import { acquireLease, type Lease } from './lease.js';
import { probeConditionalWrites, type ConditionalWrites } from './probe.js';

export class LeaseGuard {
  private lease: Lease | undefined;

  /** `onLeaseLost`: called once when the lease is found taken; nothing more may be committed. */
  constructor(private readonly onLeaseLost: (message: string) => void = () => undefined) {}

  /** Takes the store's lease for `command` (the conditional writes probed first: conditionalWrites()). */
  async acquire(
    client: StoreClient,
    local: LocalIndex,
    command: string,
    options: { redisUrl?: string; ttlMs?: number; onLost?: (message: string) => void },
  ): Promise<void> {
    const found = await conditionalWrites(client, local);
    this.lease = await acquireLease(client, command, {
      redisUrl: options.redisUrl,
      ttlMs: options.ttlMs,
      onLost: options.onLost,
      conditionalWrites: () => Promise.resolve(found),
    });
  }

  /** The lease's token (none: a reader, or released). */
  get token(): string | undefined {
    return this.lease?.token;
  }

  /** Throws when the heartbeat found the lease lost. */
  assertHeld(): void {
    this.lease?.assertHeld();
  }

  /** As assertHeld(), and a lease found lost stops the command (onLeaseLost). */
  stopIfLost(): void {
    try {
      this.lease?.assertHeld();
    } catch (err) {
      this.lost(err);
    }
  }

  /** The lease read afresh just before a commit (the fence): lost, it stops the command (onLeaseLost). */
  async verify(): Promise<void> {
    await this.lease?.verify().catch((err: unknown) => this.lost(err));
  }

  async release(): Promise<void> {
    try {
      await this.lease?.release();
    } finally {
      this.lease = undefined;
    }
  }

  /** A lease found lost (by the heartbeat, or the fence's fresh read) stops the command at once (onLeaseLost). */
  private lost(err: unknown): never {
    if (err instanceof StoreLockedError) this.onLeaseLost(err.message);
    throw err;
  }
}

/**
 * What the service does with conditional writes, probed once per working copy (probe.ts), and the form in
 * which this command's If-Match is sent: the one the service takes; none where it refuses even the current
 * ETag (with Redis only: acquireLease refuses a store lease there, and the HEAD before a commit stands in).
 */
async function conditionalWrites(client: StoreClient, local: LocalIndex): Promise<ConditionalWrites> {
  local.probe ??= await probeConditionalWrites(client);
  const { ifMatch } = local.probe;
  client.ifMatchForm = ifMatch === 'refused' ? 'off' : ifMatch === 'ignored' ? 'quoted' : ifMatch;
  return local.probe;
}
