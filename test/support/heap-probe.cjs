// Preloaded (NODE_OPTIONS=--expose-gc --require) into a process whose memory a test measures: on SIGUSR2
// it runs a full garbage collection and writes the live heap and external memory to PERKS_TEST_HEAP_FILE.
// Resident memory alone says little about a leak: the collector frees when it likes, so RSS rises and
// falls with load; what is still live after a full collection is what a leak would keep.
const { writeFileSync, renameSync } = require('node:fs');

const file = process.env.PERKS_TEST_HEAP_FILE;
if (file && typeof global.gc === 'function') {
  let n = 0;
  process.on('SIGUSR2', () => {
    global.gc();
    global.gc();
    const m = process.memoryUsage();
    writeFileSync(`${file}.tmp`, JSON.stringify({ n: ++n, heapUsed: m.heapUsed, external: m.external, rss: m.rss }));
    renameSync(`${file}.tmp`, file);
  });
}
