/**
 * The sandbox holds bounded memory whatever it receives (issue 16, item 2), and answers malformed
 * requests at the HTTP level with 4xx (item 8). The sandbox runs as `perks sandbox` in its own process
 * and is sent hostile requests over real HTTP: token requests with new client ids (every 100th of
 * 900 kB), unknown paths of 2-4 kB, known routes with long made-up ids, made-up bearer tokens, and
 * malformed Host headers. What it keeps is measured after a full garbage collection (heap and external
 * memory, through test/support/heap-probe.cjs), not as resident memory, which rises and falls with when
 * the collector runs (a first version of this test failed CI with +24 MB RSS over a round that kept
 * nothing). A sandbox that kept what strangers send (the leak this guards against) would keep about
 * 9 MB of ids and 1.5 MB of paths per round of 3,000. It may keep what its bounded per-path counters
 * hold (at most 10 MB in all; the normal suite's 6,000 requests at most 3 MB) and at most 2 MB more over
 * a second round as large as the first. Resident memory may grow by at most 50 MB (the issue's figure): the lowest
 * reading over 3 s after the same collection, as V8 and the allocator give pages back on their own timers (stop
 * 57's CI failed on one reading of +64 MB taken at once, while live memory had grown 4.5 MB).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'node:http';
import { ROOT, startCli } from '../../support/cli.js';
import { row, type Row, type ScenarioOptions } from '../table.js';

const MB = 1024 * 1024;

interface Answer {
  status: number;
}

function send(
  agent: Agent,
  base: URL,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: base.hostname,
        port: base.port,
        method,
        path,
        headers: {
          ...(body === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }),
          ...headers,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const text = (n: number) =>
  randomBytes(Math.ceil(n / 2))
    .toString('hex')
    .slice(0, n);

/** The i-th hostile request: a mix of what an unauthenticated stranger can send. */
function hostile(i: number): {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  kind: string;
} {
  switch (i % 6) {
    case 0: // a token request with a new client id; every 100th one 900 kB long
      return {
        kind: 'token, new client id',
        method: 'POST',
        path: '/v3/oauth/token',
        headers: {},
        body: JSON.stringify({
          grant_type: 'client_credentials',
          client_id: i % 100 === 0 ? text(900_000) : `${i}${text(12)}`,
          client_secret: text(16),
          scope: '*',
        }),
      };
    case 1: // a path no route serves, 2-4 kB
      return { kind: 'unknown long path', method: 'GET', path: `/v3/${text(2000 + (i % 2000))}`, headers: {} };
    case 2: // a known route with a long made-up id, no token
      return {
        kind: 'known route, made-up id',
        method: 'POST',
        path: `/v3/user/get/id/${text(300 + (i % 200))}`,
        headers: {},
        body: '{}',
      };
    case 3: // a made-up bearer token
      return {
        kind: 'made-up bearer token',
        method: 'POST',
        path: '/v3/orders',
        headers: { authorization: `Bearer ${text(40)}.${text(200)}.${text(43)}` },
        body: '{}',
      };
    case 4: // a malformed Host header
      return { kind: 'malformed Host', method: 'GET', path: '/v3/group', headers: { host: `bad host ${text(8)}:x` } };
    default: // a token request with a numeric id no credential has
      return {
        kind: 'token, unknown numeric id',
        method: 'POST',
        path: '/v3/oauth/token',
        headers: {},
        body: JSON.stringify({
          grant_type: 'client_credentials',
          client_id: 1_000_000 + i,
          client_secret: 'x',
          scope: '*',
        }),
      };
  }
}

async function round(
  agent: Agent,
  base: URL,
  from: number,
  count: number,
  statuses: Map<string, Map<number, number>>,
): Promise<void> {
  const CONCURRENCY = 16;
  let next = from;
  const worker = async () => {
    while (next < from + count) {
      const h = hostile(next++);
      const a = await send(agent, base, h.method, h.path, h.headers, h.body);
      const byKind = statuses.get(h.kind) ?? new Map<number, number>();
      byKind.set(a.status, (byKind.get(a.status) ?? 0) + 1);
      statuses.set(h.kind, byKind);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

interface Live {
  heapUsed: number;
  external: number;
  /** the lowest resident memory over 3 s after the collection */
  rss: number;
  /** resident memory right after the collection */
  rssAtOnce: number;
}

/** What the process keeps alive after a full collection (see heap-probe.cjs), and its resident memory. */
async function live(pid: number, file: string, n: number): Promise<Live> {
  process.kill(pid, 'SIGUSR2');
  for (let waited = 0; waited < 30_000; waited += 20) {
    if (existsSync(file)) {
      const m = JSON.parse(readFileSync(file, 'utf8')) as Live & { n: number };
      if (m.n === n) return m;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the sandbox did not answer the heap probe within 30 s');
}

const kept = (m: Live) => (m.heapUsed + m.external) / MB;
const mbs = (...bytes: number[]) => `${bytes.map((b) => (b / MB).toFixed(0)).join(' → ')} MB`;
const signed = (mb: number) => `${mb >= 0 ? '+' : ''}${mb.toFixed(1)} MB`;

export async function sandboxMemoryScenario(
  o: ScenarioOptions & { requests: number; maxKeptMb?: number; maxSecondRoundMb?: number; maxRssGrowthMb?: number },
): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'perks-heap-'));
  const heapFile = join(dir, 'heap.json');
  const probe = join(ROOT, 'test', 'support', 'heap-probe.cjs');
  const running = startCli(['sandbox', '--port', '0', '--today', '2026-11-22'], {
    NODE_OPTIONS: `--expose-gc --require ${JSON.stringify(probe)}`,
    PERKS_TEST_HEAP_FILE: heapFile,
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  try {
    if (!(await running.saw('base_url'))) throw new Error(`the sandbox did not start: ${running.text().stderr}`);
    const base = new URL(JSON.parse(running.text().stdout.split('\n')[0]).base_url);
    const pid = running.child.pid!;
    const statuses = new Map<string, Map<number, number>>();
    // warm up (code paths compiled, buffers sized), then measure
    await round(agent, base, 0, 600, statuses);
    const before = await live(pid, heapFile, 1);
    const half = Math.floor(o.requests / 2);
    await round(agent, base, 600, half, statuses);
    const middle = await live(pid, heapFile, 2);
    await round(agent, base, 600 + half, o.requests - half, statuses);
    const after = await live(pid, heapFile, 3);
    const growth = kept(after) - kept(before);
    const second = kept(after) - kept(middle);
    const problems: string[] = [];
    // the sandbox's one bounded structure that strangers fill: per-path counts of routed paths, at most
    // 10,000 paths of at most 512 characters (about 5 MB with the map's own overhead)
    const maxKept = o.maxKeptMb ?? 10;
    const maxSecond = o.maxSecondRoundMb ?? 2;
    if (growth > maxKept)
      problems.push(
        `live memory after a full collection grew by ${growth.toFixed(1)} MB over ${o.requests} hostile requests (at most ${maxKept})`,
      );
    const rssGrowth = (after.rss - before.rss) / MB;
    const maxRss = o.maxRssGrowthMb ?? 50;
    if (rssGrowth > maxRss)
      problems.push(
        `resident memory grew by ${rssGrowth.toFixed(1)} MB over ${o.requests} hostile requests (at most ${maxRss}; ` +
          `settled ${mbs(before.rss, middle.rss, after.rss)}, at once ${mbs(before.rssAtOnce, middle.rssAtOnce, after.rssAtOnce)})`,
      );
    if (second > maxSecond)
      problems.push(
        `live memory after a full collection grew by ${second.toFixed(1)} MB over the second round of ${o.requests - half} (at most ${maxSecond}: not flat)`,
      );
    for (const [kind, byStatus] of statuses) {
      for (const [status, n] of byStatus)
        if (status < 400 || status >= 500) problems.push(`${kind}: ${n} answered ${status}, expected a 4xx`);
    }
    const kinds = [...statuses.keys()].length;
    const big = Math.floor((o.requests + 600) / 300);
    o.log(
      `sandbox live memory: ${kept(before).toFixed(1)} → ${kept(middle).toFixed(1)} → ${kept(after).toFixed(1)} MB; RSS settled ${mbs(before.rss, middle.rss, after.rss)} (at once ${mbs(before.rssAtOnce, middle.rssAtOnce, after.rssAtOnce)})`,
    );
    return [
      row(
        'sandbox memory under hostile requests',
        o.requests,
        problems,
        `${o.requests} hostile requests of ${kinds} kinds (${big} of them 900 kB ids), all 4xx: live memory ${kept(before).toFixed(1)} → ${kept(after).toFixed(1)} MB (${signed(growth)}; second half ${signed(second)}), RSS ${(before.rss / MB).toFixed(0)} → ${(after.rss / MB).toFixed(0)} MB (${signed(rssGrowth)})`,
      ),
    ];
  } finally {
    agent.destroy();
    running.child.kill('SIGTERM');
    await running.done;
    rmSync(dir, { recursive: true, force: true });
  }
}
