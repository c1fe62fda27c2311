/**
 * The README's test command, met as a newcomer meets it: the checkout in a folder only its owner can read
 * (a 0700 temporary folder, like a clone in /root), `npm test` run from there, as the current user and,
 * when that is root, as a normal user too. The representative file is the one that once ran a step as
 * another uid and so depended on the permissions of the checkout's parent folders.
 */
import { spawnSync } from 'node:child_process';
import { chown, cp, lchown, link, lstat, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const FILE = 'test/lake/output-errors.test.ts';
/** What a clone does not carry (the .gitignore's entries) and the test runner's own caches. */
const NOT_IN_A_CLONE = new Set(['node_modules', '.git', 'output', 'coverage', '.tmp', 'test-artifacts']);
const NOBODY = 65534;
/** The system's temporary folder, not the run's (run-temp-dir.ts): a fresh shell's, and one another user can enter. */
const SYSTEM_TMPDIR = process.env.PERKS_TEST_SYSTEM_TMPDIR ?? tmpdir();

let clone: string;

/** node_modules as `npm ci` would leave it, without the minute it takes: hard links (a copy across devices). */
async function linkTree(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const entry of await readdir(from, { withFileTypes: true })) {
    if (entry.name === '.vite' || entry.name === '.cache') continue;
    const [src, dst] = [join(from, entry.name), join(to, entry.name)];
    if (entry.isDirectory()) await linkTree(src, dst);
    else if (entry.isSymbolicLink()) await cp(src, dst, { verbatimSymlinks: true });
    else
      await link(src, dst).catch(async (err: NodeJS.ErrnoException) => {
        if (err.code !== 'EXDEV') throw err;
        await cp(src, dst);
      });
  }
}

/** Hands the clone to another user: its folders and the files the copy made (hard-linked files stay shared, read-only). */
async function giveTo(dir: string, uid: number): Promise<void> {
  await chown(dir, uid, uid);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await giveTo(path, uid);
    // the link itself, never its target (a .bin link points at a hard-linked file of the real checkout)
    else if (entry.isSymbolicLink()) await lchown(path, uid, uid);
    else if ((await lstat(path)).nlink === 1) await chown(path, uid, uid);
  }
}

/** `npm test -- FILE` from the clone, with the environment of a fresh shell (no outer test runner's, no npm's). */
function npmTest(opts: { uid?: number } = {}) {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(VITEST|npm_)/i.test(k) && k !== 'TEST'),
  );
  return spawnSync('npm', ['test', '--', FILE], {
    cwd: clone,
    encoding: 'utf8',
    env: { ...env, HOME: clone, TMPDIR: SYSTEM_TMPDIR, PERKS_TEST_NO_INSTALL: '1' },
    timeout: 300_000,
    ...(opts.uid === undefined ? {} : { uid: opts.uid, gid: opts.uid }),
  });
}

beforeAll(async () => {
  clone = await mkdtemp(join(SYSTEM_TMPDIR, 'perks-fresh-'));
  await cp(ROOT, clone, {
    recursive: true,
    filter: (src) => !NOT_IN_A_CLONE.has(relative(ROOT, src).split('/')[0]) && !src.endsWith('.log'),
  });
  await linkTree(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
}, 300_000);
afterAll(async () => {
  if (clone) await rm(clone, { recursive: true, force: true });
});

describe('npm test from a checkout in a folder only its owner can read', () => {
  test('the folder is one only its owner can read', async () => {
    expect((await stat(clone)).mode & 0o777).toBe(0o700);
  });

  test('passes as the current user, and, when that is root, as a normal user too', async () => {
    const asIs = npmTest();
    expect(asIs.status, asIs.stdout + asIs.stderr).toBe(0);
    expect(asIs.stdout).toMatch(/Tests\s+.*4 passed/);
    if (process.getuid?.() !== 0) return; // a normal user already: the run above is that case
    await giveTo(clone, NOBODY);
    const asNobody = npmTest({ uid: NOBODY });
    expect(asNobody.status, asNobody.stdout + asNobody.stderr).toBe(0);
    expect(asNobody.stdout).toMatch(/Tests\s+.*4 passed/);
  }, 600_000);
});
