/** scripts/test-prereqs.mjs, the step `npm test` runs first: silent when all is there, one line when it cannot install. */
import { spawnSync } from 'node:child_process';
import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { CHDB_VERSION } from '../support/chdb.js';
import { tempOut } from '../support/scratch.js';

const SCRIPT = join(import.meta.dirname, '..', '..', 'scripts', 'test-prereqs.mjs');

test('with nothing on PATH but node and no way to install, it names what to install, one line for the system programs and one for chdb, and lets the suite run', async () => {
  const bin = tempOut('perks-prereqs-');
  await symlink(process.execPath, join(bin, 'node'));
  const cache = tempOut('perks-prereqs-cache-');
  const run = spawnSync(join(bin, 'node'), [SCRIPT], {
    encoding: 'utf8',
    env: { PATH: bin, PERKS_TEST_NO_INSTALL: '1', PERKS_CHROMIUM: '/nowhere/chromium', XDG_CACHE_HOME: cache },
  });
  expect(run.status).toBe(0);
  const lines = run.stderr.trim().split('\n');
  expect(lines).toHaveLength(2);
  // chromium may still be found at /usr/bin; redis-server and Ceph's daemons, looked up on PATH only, cannot be
  expect(lines[0]).toMatch(
    /^perks test: (chromium, )?redis-server, ceph-mon, ceph-osd, radosgw missing: install with your package manager.*, else the browser, scale and store tests fail$/,
  );
  expect(lines[1]).toBe(
    `perks test: chdb ${CHDB_VERSION} missing in ${join(cache, 'perks-test', `chdb-${CHDB_VERSION}`)}: run node scripts/test-prereqs.mjs (without PERKS_TEST_NO_INSTALL; it needs the npm registry), else the ClickHouse reader test fails`,
  );
});

test('where chromium, redis-server, Ceph and chdb are installed it says nothing', () => {
  const run = spawnSync(process.execPath, [SCRIPT], {
    encoding: 'utf8',
    env: { ...process.env, PERKS_TEST_NO_INSTALL: '1' },
  });
  expect(run.status).toBe(0);
  expect(run.stderr).toBe('');
});
