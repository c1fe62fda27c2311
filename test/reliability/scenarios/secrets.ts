/**
 * 9. Secrets: the pipeline's client secret and every access token it receives are unique canary
 * strings (a proxy swaps them for the sandbox's real ones), and so is the alert webhook's path. Every
 * command runs through its normal, 401, 500 and crash paths with PERKS_DEBUG=1, and error bodies echo the
 * credentials back, as careless servers do. Then stdout, stderr, every value of every file of the output
 * and every alert posted are searched: 0 hits, and no alert holds an e-mail address or a name.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { shiftDay } from '../../../src/extract/index.js';
import { CRASH_ENV } from '../../../src/shared/crash-points.js';
import { runCli, startCli, type CliResult } from '../../support/cli.js';
import { searchOutput } from '../../support/decode.js';
import { startProxy, type ProxyHooks, type ProxyRequest } from '../../support/proxy.js';
import { seeded, sleep } from '../../support/random.js';
import { orgEnv, withSandbox } from '../../support/sandbox.js';
import { withScratch } from '../../support/scratch.js';
import { row, type Row, type ScenarioOptions } from '../table.js';
import { todayUtc } from '../../../src/shared/clock.js';
import { withLakeConnection } from '../../../src/lake/index.js';
import { startReceiver } from '../../support/receiver.js';

type Mode = 'ok' | 'token401' | 'token500' | 'api401' | 'api500';

export interface SecretRun {
  args: string[];
  mode: Mode;
  /** Kill it with SIGKILL at a random moment once its run has started, then rerun it normally. */
  crash?: boolean;
  /** Let it kill itself at this named point (PERKS_CRASH_AT, src/shared/crash-points.ts), then rerun it: for a run too short to hit at random (an incremental build, a same-day run). */
  crashAt?: string;
}

const TODAY = todayUtc();
const MONTH = shiftDay(`${TODAY.slice(0, 7)}-01`, -1).slice(0, 7);

export const SECRET_RUNS: SecretRun[] = [
  { args: ['check'], mode: 'ok' },
  { args: ['check'], mode: 'token401' },
  { args: ['check'], mode: 'token500' },
  { args: ['check'], mode: 'api401' },
  { args: ['extract'], mode: 'api500' },
  { args: ['extract', '--full-refresh'], mode: 'api401' },
  { args: ['extract', '--full-refresh'], mode: 'token401' },
  // Killed at a named point, not after a random wait: at the sandbox's limit the whole extract can end first.
  { args: ['extract', '--full-refresh'], mode: 'ok', crashAt: 'after-page:12' },
  { args: ['build'], mode: 'ok' },
  { args: ['build'], mode: 'ok', crashAt: 'mid-build:5' },
  // Before any `run`, which posts the write-back rows itself: here they are still to send.
  { args: ['writeback'], mode: 'api401' },
  { args: ['writeback'], mode: 'api500' },
  { args: ['run'], mode: 'ok' },
  { args: ['run'], mode: 'api500' },
  { args: ['run'], mode: 'api401' },
  { args: ['run'], mode: 'ok', crashAt: 'after-page:2' },
  { args: ['writeback', '--verify'], mode: 'ok' },
  { args: ['report', 'revenue', '--month', MONTH], mode: 'ok' },
  { args: ['sql', 'SELECT * FROM lake_users LIMIT 5', '--format', 'json'], mode: 'ok' },
  { args: ['models'], mode: 'ok' },
  { args: ['forget', '--anonymised'], mode: 'ok' },
];

/** Days extracted: by default 40, so the month before this one is in the lake and `perks run` and the report have a month to show. */
export async function secretsScenario(o: ScenarioOptions & { runs?: SecretRun[]; days?: number }): Promise<Row[]> {
  const runs = o.runs ?? SECRET_RUNS;
  const start = shiftDay(TODAY, -(o.days ?? 40));
  const secret = `CanarySecret${randomBytes(6).toString('hex')}`;
  const tokenPrefix = `CanaryToken${randomBytes(6).toString('hex')}`;
  const hookToken = `CanaryHook${randomBytes(6).toString('hex')}`;
  const random = seeded(o.seed);
  return withSandbox({ seed: 61 }, (sandbox) =>
    withScratch('secrets', async (scratch) => {
      const out = scratch.dir('out');
      const cwd = scratch.dir('cwd');
      // The mode of the run under way, and whether it has met a 500 yet (its first API call always does).
      const current = { mode: 'ok' as Mode, failed500: false };
      const tokens = new Map<string, string>();
      const real = sandbox.credentials.organisation.client_secret;
      const proxy = await startProxy(sandbox.baseUrl, canaryHooks(current, secret, real, tokenPrefix, tokens, random));
      // Alerts go to a receiver whose URL holds a canary token, as a Slack webhook's path does.
      const hook = await startReceiver();
      const env = {
        ...orgEnv(sandbox, out, { PERKS_START_DATE: start }),
        PERKS_BASE_URL: proxy.url,
        PERKS_CLIENT_SECRET: secret,
        PERKS_DEBUG: '1',
        PERKS_ALERT_WEBHOOK: `${hook.url}/alerts/${hookToken}`,
      };
      const outputs: CliResult[] = [];
      const codes: string[] = [];
      let kills = 0;
      const problems: string[] = [];
      try {
        for (const r of runs) {
          Object.assign(current, { mode: r.mode, failed500: false });
          let killed = '';
          const seen = proxy.log.length;
          if (r.crash || r.crashAt) {
            const child = startCli(r.args, r.crashAt ? { ...env, [CRASH_ENV]: r.crashAt } : env, { cwd });
            if (!r.crashAt) {
              await child.saw('"event":"run"');
              await sleep(Math.floor(random() * 1500));
              child.child.kill('SIGKILL');
            }
            const crashed = await child.done;
            outputs.push(crashed);
            // A run that ended before the kill did not take the crash path: it is counted, and said.
            if (crashed.signal === 'SIGKILL') kills += 1;
            killed =
              crashed.signal === 'SIGKILL' ? ', killed, rerun' : `, ended ${crashed.code} before the kill, rerun`;
            current.mode = 'ok';
          }
          const result = await runCli(r.args, env, { cwd, timeoutMs: 120_000 });
          outputs.push(result);
          // A failure mode that refused nothing exercised nothing.
          const refused = proxy.log.slice(seen).filter((e) => e.intercepted).length;
          if (!refused && r.mode !== 'ok')
            problems.push(`${r.args.join(' ')} [${r.mode}] met no refusal: its ${r.mode} path was not exercised`);
          codes.push(
            `${r.args.slice(0, 2).join(' ')} [${r.mode}${killed}] → ${result.code}, ${refused} refused (${(result.ms / 1000).toFixed(1)} s)`,
          );
          o.log(
            `secrets: ${codes.at(-1)}${result.code ? `: ${(result.stderr.trim().split('\n').at(-1) ?? '').slice(0, 200)}` : ''}`,
          );
        }
      } finally {
        await proxy.close();
        await hook.close();
      }
      const needles = [secret, tokenPrefix, hookToken];
      // Alert payloads: no secret, no token, no personal value (the lake's e-mails and names).
      const alerts = hook.got.map((g) => g.body);
      if (!alerts.length) problems.push('no alert was posted: the alert path was not exercised');
      const personal = await personalValues(out);
      for (const [i, body] of alerts.entries()) {
        for (const n of [...needles, ...personal])
          if (body.toLowerCase().includes(n.toLowerCase()))
            problems.push(`alert ${i + 1} holds a canary or a personal value`);
        if (body.includes('@')) problems.push(`alert ${i + 1} holds an e-mail address`);
      }
      outputs.forEach((r, i) => {
        for (const n of needles) {
          if (r.stdout.includes(n)) problems.push(`stdout of run ${i + 1} holds a canary`);
          if (r.stderr.includes(n)) problems.push(`stderr of run ${i + 1} holds a canary`);
        }
      });
      const found = await searchOutput(out, needles);
      for (const h of found.hits) problems.push(`${h.file} (${h.where}) holds a canary`);
      const hits = problems.filter((p) => p.endsWith('holds a canary')).length;
      const strays = readdirSync(cwd);
      if (strays.length) problems.push(`written outside the output directory: ${strays.join(', ')}`);
      const crashes = runs.filter((r) => r.crash || r.crashAt).length;
      if (kills < crashes)
        problems.push(
          `${crashes - kills} of ${crashes} runs to kill ended before the kill: their crash path was not exercised`,
        );
      if (tokens.size < 2)
        problems.push(`only ${tokens.size} canary tokens were handed out: the 401 paths were not exercised`);
      const echoed = proxy.log.filter((e) => e.intercepted).length;
      return [
        row(
          'secrets: canary secret and tokens',
          outputs.length,
          problems,
          `${hits} hits in ${outputs.length} outputs (${kills} killed mid-run) and ${found.files.parquet + found.files.duckdb + found.files.text} files (${found.values} values decoded) and ${alerts.length} alerts; ${tokens.size} tokens, ${echoed} error bodies echoing them`,
        ),
      ];
    }),
  );
}

/** The proxy's part: canaries in, real credentials out, and error bodies that echo what they were sent. */
function canaryHooks(
  current: { mode: Mode; failed500: boolean },
  secret: string,
  realSecret: string,
  prefix: string,
  tokens: Map<string, string>,
  random: () => number,
): ProxyHooks {
  const isToken = (r: ProxyRequest) => r.path.startsWith('/v3/oauth/token');
  const echo = (r: ProxyRequest) =>
    JSON.stringify({
      message: `refused: ${r.headers.authorization ?? ''} ${r.body}`,
      debug: { headers: r.headers, body: r.body },
    });
  return {
    intercept(r) {
      const m = current.mode;
      if (isToken(r) && m === 'token401')
        return {
          respond: {
            status: 401,
            body: JSON.stringify({ error: 'invalid_client', message: `Client authentication failed: ${r.body}` }),
          },
        };
      if (isToken(r) && m === 'token500') return { respond: { status: 500, body: echo(r) } };
      if (!isToken(r) && m === 'api401') return { respond: { status: 401, body: echo(r) } };
      // 500s: the run's first API call, then a fifth of the calls (at random), so a short run meets one too.
      if (!isToken(r) && m === 'api500' && (!current.failed500 || random() < 0.2)) {
        current.failed500 = true;
        return { respond: { status: 500, body: echo(r) } };
      }
      return undefined;
    },
    rewriteRequest(r) {
      if (isToken(r)) return { body: r.body.split(secret).join(realSecret) };
      const given = /^Bearer (.+)$/.exec(String(r.headers.authorization ?? ''))?.[1] ?? '';
      return { authorization: `Bearer ${tokens.get(given) ?? given}` };
    },
    rewriteResponse(r, answer) {
      if (!isToken(r) || answer.status !== 200) return answer;
      const jwt = /"access_token":"([^"]+)"/.exec(answer.body)?.[1];
      if (!jwt) return answer;
      const canary = `${prefix}-${tokens.size + 1}`;
      tokens.set(canary, jwt);
      return { ...answer, body: answer.body.replace(jwt, canary) };
    },
  };
}

/** The e-mail addresses and full names the lake holds (users snapshots). */
async function personalValues(outDir: string): Promise<string[]> {
  return withLakeConnection(async (c) => {
    const r = await c
      .runAndReadAll(
        `SELECT DISTINCT email AS v FROM read_parquet($g, union_by_name = true) WHERE email IS NOT NULL
         UNION SELECT DISTINCT first_name || ' ' || last_name FROM read_parquet($g, union_by_name = true) WHERE last_name IS NOT NULL`,
        { g: `${outDir}/lake/users/**/*.parquet` },
      )
      .catch(() => undefined);
    return r ? r.getRowObjectsJS().map((x) => x.v as string) : [];
  });
}
