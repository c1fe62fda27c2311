import { describe, expect, it } from 'vitest';
import { CredentialLimiter } from '../../src/api/index.js';

/** Runs `calls` no-op jobs through the limiter, 8 at a time; resolves with their start times (ms). */
async function starts(limiter: CredentialLimiter, calls: number): Promise<number[]> {
  const at: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next++ < calls) await limiter.schedule(() => Promise.resolve(void at.push(performance.now())));
    }),
  );
  return at.sort((a, b) => a - b);
}

describe('the credential limiter above 59,400 calls a minute (spacing below one millisecond)', () => {
  it('is not the bottleneck: thousands of calls a second, where Bottleneck alone starts about 400', async () => {
    const limiter = new CredentialLimiter({ callsPerMinute: 10_000_000 });
    const at = await starts(limiter, 3_000);
    const perSecond = 3_000 / ((at.at(-1)! - at[0]) / 1000);
    expect(perSecond).toBeGreaterThan(2_000);
    await limiter.stop();
  });

  it('never has more than 8 calls in flight, however many callers wait', async () => {
    const limiter = new CredentialLimiter({ callsPerMinute: 10_000_000 });
    let inFlight = 0;
    let most = 0;
    let done = 0;
    await Promise.all(
      Array.from({ length: 40 }, async () => {
        for (let i = 0; i < 25; i++) {
          await limiter.schedule(async () => {
            most = Math.max(most, ++inFlight);
            await new Promise((r) => setTimeout(r, i % 3));
            inFlight -= 1;
            done += 1;
          });
        }
      }),
    );
    expect(done).toBe(1_000);
    expect(most).toBe(8);
    await limiter.stop();
  });

  it('still never starts more calls than the limit allows', async () => {
    const limiter = new CredentialLimiter({ callsPerMinute: 600_000 }); // 10 a millisecond
    const at = await starts(limiter, 2_000);
    // 2,000 calls at 10/ms (less the 1% headroom) need at least 198 ms; a millisecond of slots may run ahead.
    expect(at.at(-1)! - at[0]).toBeGreaterThanOrEqual((2_000 / 10) * 1.01 - 2);
    // and no 50 ms holds more than its slots (495 at 0.101 ms), plus the millisecond the slots may run ahead,
    // plus a millisecond either side by which a timer fires early or the event loop records late (about
    // 10 slots each), plus the 8 in flight that a pause of the event loop can release together. Twice the
    // rate would put about 1,000 calls in a window.
    const windowMs = 50;
    const slotsPerMs = 1 / ((60_000 / 600_000) * 1.01);
    const bound = Math.ceil((windowMs + 3) * slotsPerMs) + 8;
    let most = 0;
    for (let i = 0, j = 0; i < at.length; i++) {
      while (at[i] - at[j] >= windowMs) j++;
      most = Math.max(most, i - j + 1);
    }
    expect(most).toBeLessThanOrEqual(bound);
    await limiter.stop();
  });
});
