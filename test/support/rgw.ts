/**
 * A real S3 server that enforces conditional writes, for the store's tests: Ceph's RADOS Gateway (Debian's
 * `radosgw` 16.2, the server behind many on-premises and hosted S3 services) on a one-node cluster on
 * loopback: one monitor, one OSD on `memstore` (objects in memory, nothing on disk but logs), radosgw with the
 * `beast` frontend, auth `none`. scripts/test-prereqs.mjs installs `ceph-mon ceph-osd radosgw`.
 *
 * One cluster for the whole suite: the first test file that asks starts it in `$PERKS_TEST_RGW_DIR` (set by
 * the suite's global setup, test/support/run-temp-dir.ts, which stops it at the end) and the others reuse it;
 * outside the suite (the reliability suite, the bench) each caller starts its own and `stop()` ends it. Each
 * caller gets a bucket of its own.
 *
 * What it takes to start (learned the hard way): without `ms mon client mode = crc secure` and `ms client
 * mode = crc secure` radosgw waits 300 s on auth; the OSD's data folder must exist before `--mkfs`; a pool of
 * one replica needs `osd pool default size = 1` and `mon allow pool size one = true`, and one host
 * `osd crush chooseleaf type = 0`; every daemon forks, so they are stopped by the pid files they write.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { freePort } from './redis.js';
import { tempOut } from './scratch.js';
import type { TestS3 } from './s3.js';

export const RGW_KEY_ID = 'PERKSRGWTESTKEY';
export const RGW_SECRET = 'perks-rgw-test-secret-0123456789';

const DAEMONS = ['mon.a', 'osd.0', 'client.rgw'] as const;
/** How long the cluster may take to answer S3 (about 10 s here; 30 s on a busy machine). */
const START_TIMEOUT_MS = 120_000;

interface Cluster {
  endpoint: string;
  dir: string;
}

const missing = () => ['ceph-mon', 'ceph-osd', 'radosgw', 'monmaptool', 'radosgw-admin'].filter(notInstalled);

function notInstalled(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`]).status !== 0;
}

function config(dir: string, monPort: number, rgwPort: number): string {
  return `[global]
fsid = ${randomUUID()}
mon host = v2:127.0.0.1:${monPort}
mon initial members = a
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc secure
ms client mode = crc secure
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
mon allow pool size one = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
osd crush chooseleaf type = 0
osd objectstore = memstore
memstore device bytes = 4294967296
run dir = ${dir}/run
log file = ${dir}/log/$name.log
admin socket = ${dir}/run/$name.asok
pid file = ${dir}/run/$name.pid
mon data = ${dir}/mon/$name
osd data = ${dir}/osd/$name
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:${rgwPort}
rgw data = ${dir}/rgw
`;
}

function run(dir: string, cmd: string, args: string[]): string {
  try {
    // bounded: a daemon that never finishes starting (ceph-osd under libfaketime waits on the monitor for ever)
    // fails the suite with its logs instead of hanging it
    return execFileSync(cmd, ['-c', join(dir, 'ceph.conf'), ...args], {
      encoding: 'utf8',
      stdio: 'pipe',
      timeout: START_TIMEOUT_MS,
    });
  } catch (err) {
    const e = err as { stderr?: string; message: string; code?: string };
    if (e.code === 'ETIMEDOUT')
      throw new Error(`${cmd} ${args.join(' ')} did not finish in ${START_TIMEOUT_MS / 1000} s${logTail(dir)}`, {
        cause: err,
      });
    throw new Error(`${cmd} ${args.join(' ')} failed: ${e.stderr?.slice(-800) ?? e.message}${logTail(dir)}`, {
      cause: err,
    });
  }
}

function logTail(dir: string): string {
  return DAEMONS.map((d) => {
    const file = join(dir, 'log', `${d}.log`);
    return existsSync(file) ? `\n--- ${d}.log\n${readFileSync(file, 'utf8').split('\n').slice(-15).join('\n')}` : '';
  }).join('');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function answers(endpoint: string): Promise<boolean> {
  try {
    const r = await fetch(endpoint, { signal: AbortSignal.timeout(2000) });
    return r.status === 200;
  } catch {
    return false;
  }
}

/**
 * Starts mon, OSD and radosgw in `dir` and the test user; resolves when S3 answers. Its ports are free when
 * chosen, but another process may take one before a daemon binds it: then it starts again on others.
 */
async function startCluster(dir: string): Promise<Cluster> {
  const lacking = missing();
  if (lacking.length)
    throw new Error(
      `Ceph is not installed (${lacking.join(', ')} missing): the store tests on a real S3 server need it: apt-get install --no-install-recommends ceph-mon ceph-osd radosgw (npm test does it as root: scripts/test-prereqs.mjs)`,
    );
  for (let attempt = 1; ; attempt++) {
    const at = join(dir, `attempt-${attempt}`);
    try {
      return await startClusterIn(at);
    } catch (err) {
      stopCluster(at);
      const taken = /Address already in use|failed to bind/.test(logTail(at));
      if (!taken || attempt >= 3) throw err;
    }
  }
}

async function startClusterIn(dir: string): Promise<Cluster> {
  for (const sub of ['run', 'log', 'mon/mon.a', 'osd/osd.0', 'rgw']) mkdirSync(join(dir, sub), { recursive: true });
  const monPort = await freePort();
  const rgwPort = await freePort();
  const conf = config(dir, monPort, rgwPort);
  writeFileSync(join(dir, 'ceph.conf'), conf);
  const fsid = /fsid = (\S+)/.exec(conf)![1];
  execFileSync('monmaptool', [
    '--create',
    '--addv',
    'a',
    `[v2:127.0.0.1:${monPort}]`,
    '--fsid',
    fsid,
    join(dir, 'monmap'),
  ]);
  run(dir, 'ceph-mon', ['-i', 'a', '--mkfs', '--monmap', join(dir, 'monmap')]);
  run(dir, 'ceph-mon', ['-i', 'a']);
  run(dir, 'ceph', ['osd', 'create']);
  run(dir, 'ceph-osd', ['-i', '0', '--mkfs']);
  run(dir, 'ceph-osd', ['-i', '0']);
  run(dir, 'radosgw', ['-n', 'client.rgw']);
  const endpoint = `http://127.0.0.1:${rgwPort}`;
  const deadline = performance.now() + START_TIMEOUT_MS;
  while (!(await answers(endpoint))) {
    if (performance.now() > deadline || /failed to bind/.test(logTail(dir))) {
      throw new Error(`radosgw did not answer on ${endpoint} within ${START_TIMEOUT_MS / 1000} s${logTail(dir)}`);
    }
    await sleep(250);
  }
  run(dir, 'radosgw-admin', [
    '-n',
    'client.rgw',
    'user',
    'create',
    '--uid=perks-test',
    '--display-name=perks tests',
    `--access-key=${RGW_KEY_ID}`,
    `--secret=${RGW_SECRET}`,
  ]);
  return { endpoint, dir };
}

/** Stops every daemon of the cluster in `dir` (each attempt's) by its pid file (they fork), SIGTERM then SIGKILL. */
export function stopCluster(dir: string): void {
  const runs = existsSync(join(dir, 'run'))
    ? [join(dir, 'run')]
    : existsSync(dir)
      ? readdirSync(dir).map((a) => join(dir, a, 'run'))
      : [];
  const pids = runs
    .flatMap((run) => DAEMONS.map((d) => join(run, `${d}.pid`)))
    .filter(existsSync)
    .map((f) => Number(readFileSync(f, 'utf8').trim()))
    .filter((p) => Number.isInteger(p) && p > 0);
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGTERM');
  const deadline = performance.now() + 10_000;
  while (pids.some(alive) && performance.now() < deadline) spawnSync('sleep', ['0.1']);
  for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
}

/**
 * The suite's one cluster: started by the first caller (a folder made with mkdir is the lock between the
 * test workers, which are processes), the others wait for its `cluster.json`.
 */
async function sharedCluster(root: string): Promise<Cluster> {
  const ready = join(root, 'cluster.json');
  const lock = join(root, 'starting');
  mkdirSync(root, { recursive: true });
  const deadline = performance.now() + START_TIMEOUT_MS + 30_000;
  for (;;) {
    if (existsSync(ready)) return JSON.parse(readFileSync(ready, 'utf8')) as Cluster;
    if (existsSync(join(root, 'failed'))) throw new Error(readFileSync(join(root, 'failed'), 'utf8'));
    try {
      mkdirSync(lock);
    } catch {
      if (performance.now() > deadline) throw new Error(`the suite's Ceph cluster in ${root} did not start in time`);
      await sleep(250);
      continue;
    }
    try {
      const cluster = await startCluster(join(root, 'cluster'));
      writeFileSync(`${ready}.tmp`, JSON.stringify(cluster));
      renameSync(`${ready}.tmp`, ready);
      return cluster;
    } catch (err) {
      writeFileSync(join(root, 'failed'), (err as Error).message);
      throw err;
    } finally {
      rmdirSync(lock);
    }
  }
}

/** An SDK client on the cluster's radosgw (path-style, the test user's keys). */
export function rgwClient(endpoint: string): S3Client {
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: RGW_KEY_ID, secretAccessKey: RGW_SECRET },
  });
}

/**
 * A bucket of its own on Ceph RGW: the suite's shared cluster under vitest, else a cluster of this caller's,
 * stopped by `stop()`.
 */
export async function startRgw(bucket = `perks-${randomBytes(4).toString('hex')}`): Promise<TestS3> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const shared = process.env.PERKS_TEST_RGW_DIR;
  const own = shared ? undefined : tempOut('perks-rgw-');
  const cluster = shared ? await sharedCluster(shared) : await startCluster(own!);
  const client = rgwClient(cluster.endpoint);
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } finally {
    client.destroy();
  }
  return {
    endpoint: cluster.endpoint,
    bucket,
    dir: cluster.dir,
    env: {
      AWS_ENDPOINT_URL_S3: cluster.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: RGW_KEY_ID,
      AWS_SECRET_ACCESS_KEY: RGW_SECRET,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    stop: () => {
      if (own) stopCluster(own);
      return Promise.resolve();
    },
  };
}

/** The global setup's end: the shared cluster's daemons stopped, if one was started. */
export function stopSharedRgw(root: string | undefined): void {
  if (root && existsSync(join(root, 'cluster'))) stopCluster(join(root, 'cluster'));
}
