#!/usr/bin/env node
// Runs before the test suite (`npm test`): brings the system programs some tests need, chromium (the
// report in a real browser), redis-server (the shared rate limit) and Ceph's ceph-mon, ceph-osd and radosgw (a
// real S3 server that enforces conditional writes: test/support/rgw.ts). When one is missing it installs it
// with apt-get if it can (root on Debian/Ubuntu, as .ci/run did), otherwise it says in one line what to
// install; the suite runs either way, and the tests that need the program fail with the same advice.
// Then chdb, ClickHouse's engine (test/store/clickhouse.test.ts), from npm into the user's cache (below).
import { spawnSync } from 'node:child_process';
import { accessSync, constants, copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';

/** Where test/report/browser.ts and test/support/redis.ts look for them. */
const NEEDS = [
  {
    pkg: 'chromium',
    found: () =>
      [process.env.PERKS_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser', onPath('chromium')].some(
        executable,
      ),
  },
  { pkg: 'redis-server', found: () => executable(onPath('redis-server')) },
  // about 16 s and 130 MB with --no-install-recommends; the store tests start one cluster for the suite
  ...['ceph-mon', 'ceph-osd', 'radosgw'].map((pkg) => ({ pkg, found: () => executable(onPath(pkg)) })),
];

function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && executable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

function executable(path) {
  if (!path) return false;
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

const missing = () => NEEDS.filter((n) => !n.found()).map((n) => n.pkg);

function aptInstall(pkgs) {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  console.error(
    `perks test: installing ${pkgs.join(', ')} with apt-get (the browser, scale and store tests need them)`,
  );
  const update = spawnSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'], env });
  if (update.status !== 0) return false;
  const install = spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...pkgs], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env,
  });
  return install.status === 0;
}

let lacking = missing();
if (lacking.length > 0 && process.env.PERKS_TEST_NO_INSTALL === undefined) {
  const canApt = process.platform === 'linux' && process.getuid?.() === 0 && executable(onPath('apt-get'));
  if (canApt && aptInstall(lacking)) lacking = missing();
}
if (lacking.length > 0) {
  const how = executable(onPath('apt-get')) ? `sudo apt-get install -y ${lacking.join(' ')}` : 'your package manager';
  console.error(
    `perks test: ${lacking.join(', ')} missing: install with ${how}${lacking.includes('chromium') ? ' (or set PERKS_CHROMIUM to a chromium)' : ''}, else the browser, scale and store tests fail`,
  );
}

// chdb: its native library is about 540 MB, so it is no dependency of the project (the newcomer's npm ci stays
// small): `npm ci` of scripts/chdb/ (chdb pinned, its lock) into the user's cache, one folder per version, which
// the project's own npm ci leaves alone and test/support/chdb.ts loads from. chdb 3.x ships the library inside
// the npm package @chdb/lib-<platform> (no install script runs: --ignore-scripts); about 15 s and 550 MB, once.
const CHDB_SPEC = join(import.meta.dirname, 'chdb');
const CHDB_VERSION = JSON.parse(readFileSync(join(CHDB_SPEC, 'package.json'), 'utf8')).dependencies.chdb;
const CHDB_DIR = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'perks-test', `chdb-${CHDB_VERSION}`);
const chdbInstalled = () => existsSync(join(CHDB_DIR, 'node_modules', 'chdb', 'package.json'));

/** Installs into a folder of its own, then renames it into place: a run stopped half-way leaves no half install. */
function installChdb() {
  console.error(`perks test: installing chdb ${CHDB_VERSION} (ClickHouse's engine, about 550 MB) into ${CHDB_DIR}`);
  const started = Date.now();
  const partial = `${CHDB_DIR}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(CHDB_SPEC, f), join(partial, f));
  // npm run's own npm_* variables (its prefix among them) would point the inner npm at this project
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_')));
  const npm = spawnSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: partial,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (npm.status === 0) {
    mkdirSync(dirname(CHDB_DIR), { recursive: true });
    try {
      renameSync(partial, CHDB_DIR);
    } catch {
      // another test run installed it meanwhile
    }
  }
  rmSync(partial, { recursive: true, force: true });
  if (chdbInstalled()) console.error(`perks test: chdb installed in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

if (!chdbInstalled() && process.env.PERKS_TEST_NO_INSTALL === undefined) installChdb();
if (!chdbInstalled()) {
  console.error(
    `perks test: chdb ${CHDB_VERSION} missing in ${CHDB_DIR}: run node scripts/test-prereqs.mjs (without PERKS_TEST_NO_INSTALL; it needs the npm registry), else the ClickHouse reader test fails`,
  );
}
