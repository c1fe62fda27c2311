#!/usr/bin/env node
// Runs before the test suite (`npm test`): brings the system programs some tests need, chromium (the
// report in a real browser), redis-server (the shared rate limit) and Ceph's ceph-mon, ceph-osd and radosgw (a
// real S3 server that enforces conditional writes: test/support/rgw.ts). When one is missing it installs it
// with apt-get if it can (root on Debian/Ubuntu, as .ci/run did), otherwise it says in one line what to
// install; the suite runs either way, and the tests that need the program fail with the same advice.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

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
