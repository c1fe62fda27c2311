/**
 * The sandbox holds bounded memory whatever it receives (issue 16, item 2), and answers malformed
 * requests at the HTTP level with 4xx (item 8). The sandbox runs as `perks sandbox` in its own process
 * (its resident memory read from /proc), and is sent hostile requests over real HTTP: token requests
 * with new client ids (some of 900 kB), unknown paths of 2-4 kB, known routes with long made-up ids,
 * made-up bearer tokens, and malformed Host headers. Its memory must grow by at most 50 MB over all of
 * them, and stay flat over a second round as large as the first.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { startCli } from '../../support/cli.js';
import { row, type Row, type ScenarioOptions } from '../table.js';

const MB = 1024 * 1024;

/** Resident memory of a process, in bytes. */
export function rss(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'))!;
  return Number(/(\d+)/.exec(line)![1]) * 1024;
}

interface Answer {
  status: number;
}

function send(agent: Agent, base: URL, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ agent, host: base.hostname, port: base.port, method, path, headers: { ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }), ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const text = (n: number) => randomBytes(Math.ceil(n / 2)).toString('hex').slice(0, n);

/** The i-th hostile request: a mix of what an unauthenticated stranger can send. */
function hostile(i: number): { method: string; path: string; headers: Record<string, string>; body?: string; kind: string } {
  switch (i % 6) {
    case 0: // a token request with a new client id; every 1000th one 900 kB long
      return { kind: 'token, new client id', method: 'POST', path: '/v3/oauth/token', headers: {}, body: JSON.stringify({ grant_type: 'client_credentials', client_id: i % 1000 === 0 ? text(900_000) : `${i}${text(12)}`, client_secret: text(16), scope: '*' }) };
    case 1: // a path no route serves, 2-4 kB
      return { kind: 'unknown long path', method: 'GET', path: `/v3/${text(2000 + (i % 2000))}`, headers: {} };
    case 2: // a known route with a long made-up id, no token
      return { kind: 'known route, made-up id', method: 'POST', path: `/v3/user/get/id/${text(300 + (i % 200))}`, headers: {}, body: '{}' };
    case 3: // a made-up bearer token
      return { kind: 'made-up bearer token', method: 'POST', path: '/v3/orders', headers: { authorization: `Bearer ${text(40)}.${text(200)}.${text(43)}` }, body: '{}' };
    case 4: // a malformed Host header
      return { kind: 'malformed Host', method: 'GET', path: '/v3/group', headers: { host: `bad host ${text(8)}:x` } };
    default: // a token request with a numeric id no credential has
      return { kind: 'token, unknown numeric id', method: 'POST', path: '/v3/oauth/token', headers: {}, body: JSON.stringify({ grant_type: 'client_credentials', client_id: 1_000_000 + i, client_secret: 'x', scope: '*' }) };
  }
}

async function round(agent: Agent, base: URL, from: number, count: number, statuses: Map<string, Map<number, number>>): Promise<void> {
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

export async function sandboxMemoryScenario(o: ScenarioOptions & { requests: number; maxGrowthMb?: number; maxSecondRoundMb?: number }): Promise<Row[]> {
  const running = startCli(['sandbox', '--port', '0', '--today', '2026-11-22'], {});
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  try {
    if (!(await running.saw('base_url'))) throw new Error(`the sandbox did not start: ${running.text().stderr}`);
    const base = new URL(JSON.parse(running.text().stdout.split('\n')[0]).base_url);
    const pid = running.child.pid!;
    const statuses = new Map<string, Map<number, number>>();
    // warm up (code paths compiled, buffers sized), then measure
    await round(agent, base, 0, 600, statuses);
    const before = rss(pid);
    const half = Math.floor(o.requests / 2);
    await round(agent, base, 600, half, statuses);
    const middle = rss(pid);
    await round(agent, base, 600 + half, o.requests - half, statuses);
    const after = rss(pid);
    const growth = (after - before) / MB;
    const second = (after - middle) / MB;
    const problems: string[] = [];
    const maxGrowth = o.maxGrowthMb ?? 50;
    const maxSecond = o.maxSecondRoundMb ?? 15;
    if (growth > maxGrowth) problems.push(`resident memory grew by ${growth.toFixed(1)} MB over ${o.requests} hostile requests (at most ${maxGrowth})`);
    if (second > maxSecond) problems.push(`resident memory grew by ${second.toFixed(1)} MB over the second round of ${o.requests - half} (at most ${maxSecond}: not flat)`);
    for (const [kind, byStatus] of statuses) {
      for (const [status, n] of byStatus) if (status < 400 || status >= 500) problems.push(`${kind}: ${n} answered ${status}, expected a 4xx`);
    }
    const kinds = [...statuses.keys()].length;
    o.log(`sandbox memory: ${(before / MB).toFixed(0)} MB → ${(middle / MB).toFixed(0)} MB → ${(after / MB).toFixed(0)} MB over ${o.requests} requests`);
    return [
      row('sandbox memory under hostile requests', o.requests, problems, `${o.requests} hostile requests of ${kinds} kinds (over ${Math.floor(o.requests / 6000)} of 900 kB ids), all 4xx: RSS ${(before / MB).toFixed(0)} → ${(after / MB).toFixed(0)} MB (${growth >= 0 ? '+' : ''}${growth.toFixed(1)} MB; second half ${second >= 0 ? '+' : ''}${second.toFixed(1)} MB)`),
    ];
  } finally {
    agent.destroy();
    running.child.kill('SIGTERM');
    await running.done;
  }
}
