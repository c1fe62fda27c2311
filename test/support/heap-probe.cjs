// Preloaded (NODE_OPTIONS=--expose-gc --require) into a process whose memory a test measures: on SIGUSR2
// it runs a full garbage collection and writes the live heap and external memory to PERKS_TEST_HEAP_FILE.
// Resident memory alone says little about a leak: the collector frees when it likes, so RSS rises and
// falls with load; what is still live after a full collection is what a leak would keep.
// Resident memory is also given back late: V8 and the allocator return freed pages on their own timers
// (stop 57's CI read 198 MB right after a collection where three local runs read 138-142 MB, the same
// runs reading 158 MB mid-way). So the probe also watches RSS for 3 s after the collection, collecting again
// each second, and reports the lowest it saw (`rss`) beside the first reading (`rssAtOnce`): memory a leak
// keeps never comes back.
const { writeFileSync, renameSync } = require('node:fs');

const file = process.env.PERKS_TEST_HEAP_FILE;
const SETTLE_MS = 3000;
const STEP_MS = 100;
if (file && typeof global.gc === 'function') {
  let n = 0;
  process.on('SIGUSR2', () => {
    global.gc();
    global.gc();
    const m = process.memoryUsage();
    const first = m.rss;
    let lowest = first;
    let waited = 0;
    const timer = setInterval(() => {
      waited += STEP_MS;
      if (waited % 1000 === 0) global.gc();
      lowest = Math.min(lowest, process.memoryUsage.rss());
      if (waited < SETTLE_MS) return;
      clearInterval(timer);
      const out = { n: ++n, heapUsed: m.heapUsed, external: m.external, rss: lowest, rssAtOnce: first };
      writeFileSync(`${file}.tmp`, JSON.stringify(out));
      renameSync(`${file}.tmp`, file);
    }, STEP_MS);
  });
}
