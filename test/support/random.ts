/** A small seeded generator (mulberry32) for the suite's random moments: a printed seed replays a run. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs a fast-check assertion; its counterexample as one line, or undefined when the property held. */
export function propertyFailure(run: () => void): string | undefined {
  try {
    run();
    return undefined;
  } catch (err) {
    return (err as Error).message.split('\n').slice(0, 3).join(' ');
  }
}

/** Runs `work` again and again, `everyMs` apart, until stopped; stop() waits for the turn under way. */
export function repeat(everyMs: number, work: () => Promise<void>): { stop(): Promise<void> } {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await work();
      await sleep(everyMs);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
