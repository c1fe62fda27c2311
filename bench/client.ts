/**
 * Client throughput at the limit: a sandbox with a sliding-window limit pages a large listing for at
 * least `seconds`; prints achieved calls/min ÷ limit, 429s and token requests; then again with 2% 5xx.
 *   node bin/run-ts.mjs bench/client.ts [limit=600] [seconds=30]
 */
import { PerksClient } from '../src/api/index.js';
import { maxCallsInWindow, startSandbox } from '../src/sandbox/index.js';

const LIMIT = Number(process.argv[2] ?? 600);
const SECONDS = Number(process.argv[3] ?? 30);

async function measure(errorRate: number) {
  const sandbox = await startSandbox({ port: 0, scale: 'small', rateLimit: LIMIT, seed: 3 });
  sandbox.setFaults({ errorRate });
  const cred = sandbox.credentials.group[0];
  const client = new PerksClient({
    baseUrl: sandbox.baseUrl,
    clientId: cred.client_id,
    clientSecret: cred.client_secret,
    rateLimit: LIMIT,
    minRetryDelayMs: 50,
  });
  const deadline = Date.now() + SECONDS * 1000;
  let rows = 0;
  const started = Date.now();
  outer: while (Date.now() < deadline) {
    // per_page 5 makes a long listing out of the small scale's orders.
    for await (const page of client.paginate(
      'listOrders',
      { body: { order_created_from: '2020-01-01 00:00:00', order_created_to: '2030-01-01 00:00:00' } },
      { perPage: 5 },
    )) {
      rows += page.records.length;
      if (Date.now() >= deadline) break outer;
    }
  }
  const c = client.counters.snapshot();
  const minutes = (Date.now() - started) / 60_000;
  const stats = sandbox.stats();
  await client.close();
  await sandbox.close();
  return {
    errorRate,
    calls: c.calls,
    perMinute: c.calls / minutes,
    ratio: c.calls / minutes / LIMIT,
    throttled: c.throttled,
    tokenRequests: c.tokenRequests,
    retries: c.retries,
    rows,
    serverMaxInWindow: maxCallsInWindow(stats.callTimes[String(cred.client_id)] ?? []),
  };
}

for (const errorRate of [0, 0.02]) {
  const r = await measure(errorRate);
  console.log(
    `client  limit ${LIMIT}/min  5xx ${(errorRate * 100).toFixed(0)}%  calls ${r.calls}  ${r.perMinute.toFixed(1)} calls/min  ratio ${r.ratio.toFixed(3)} (goal >= 0.97)  429s ${r.throttled}  token requests ${r.tokenRequests}  retries ${r.retries}  server max calls in any 60 s ${r.serverMaxInWindow}`,
  );
}
