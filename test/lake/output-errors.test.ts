import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import {
  acquireLock,
  asOutputError,
  lakeColumns,
  openPartitionWrite,
  StateStore,
  withLakeConnection,
  writeRunManifest,
} from '../../src/lake/index.js';
import { Order } from '../../src/resources/index.js';
import { ExitCode, UserFacingError } from '../../src/shared/exit-codes.js';
import { filesUnder } from '../support/files.js';
import { tempOut } from '../support/scratch.js';
import { ROOT } from './helpers.js';
import { now } from '../../src/shared/clock.js';

const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as UserFacingError,
  );
const fileInTheWay = async () => {
  const out = join(tempOut(), 'output');
  await writeFile(out, 'not a directory');
  return out;
};

/**
 * Root ignores file modes. As root, the attempt runs as root still, but without the two capabilities that
 * override them (setpriv, util-linux): it is bound by the modes like any user, yet reads the checkout as
 * its owner wherever it sits (a 0700 home or temporary folder), which another uid could not.
 */
function bound(command: string[]): string[] {
  if (process.getuid?.() !== 0) return command;
  const caps = '-dac_override,-dac_read_search';
  return ['setpriv', `--inh-caps=${caps}`, `--bounding-set=${caps}`, '--', ...command];
}

describe('output directory problems stop the run with one clear line', () => {
  test('an output path that is a file: every writer says so, exit code 2', async () => {
    const out = await fileInTheWay();
    const attempts = [
      acquireLock(out),
      new StateStore(out).write('orders', '11', {}),
      writeRunManifest(out, { runId: 'r1' }),
      openPartitionWrite({
        outDir: out,
        stream: 'orders',
        partition: { d: '1' },
        columns: lakeColumns(Order),
        runId: 'r',
        extractedAt: now(),
      }),
    ];
    for (const error of await Promise.all(attempts.map(failure))) {
      expect(error).toBeInstanceOf(UserFacingError);
      expect(error!.exitCode).toBe(ExitCode.config);
      expect(error!.message).toMatch(
        /^cannot write .* \(.*output.*\): a part of the path is a file, not a directory; choose another output directory with PERKS_OUTPUT$/,
      );
    }
  });

  test('an unwritable output directory: one line, exit code 2, nothing written', async () => {
    const base = tempOut();
    const out = join(base, 'readonly');
    await mkdir(out);
    await chmod(out, 0o555);
    for (const action of ['lock', 'state', 'lake']) {
      const [command, ...args] = bound([
        process.execPath,
        join(ROOT, 'bin/run-ts.mjs'),
        join(ROOT, 'test/lake/fixtures/try-output.ts'),
        out,
        action,
      ]);
      const run = spawnSync(command, args, { cwd: ROOT, encoding: 'utf8' });
      expect(run.status, run.stderr).toBe(0);
      const outcome = JSON.parse(run.stdout);
      expect(outcome.exitCode).toBe(ExitCode.config);
      expect(outcome.message).toMatch(
        /^cannot write .*readonly.*: permission denied or read-only; make the output directory writable or choose another with PERKS_OUTPUT$/,
      );
    }
    expect(filesUnder(out)).toEqual([]);
  });

  test('a full disk, as node:fs and as DuckDB report it, becomes one line with exit code 1', async () => {
    const fromFs = (() => {
      try {
        writeFileSync('/dev/full', 'x');
      } catch (err) {
        return err;
      }
    })();
    const fromDuckDB = await withLakeConnection((c) =>
      c.run(`COPY (SELECT 1 AS x) TO '/dev/full' (FORMAT parquet)`),
    ).catch((e: unknown) => e);
    for (const cause of [fromFs, fromDuckDB]) {
      const error = asOutputError(cause, 'a lake file', '/out/lake/orders/part-0.parquet') as UserFacingError;
      expect(error).toBeInstanceOf(UserFacingError);
      expect(error.exitCode).toBe(ExitCode.failed);
      expect(error.message).toBe(
        'disk full while writing a lake file (/out/lake/orders/part-0.parquet): free some space and rerun; committed data is unchanged',
      );
    }
  });

  test('a failure that is not about the output is passed on unchanged', () => {
    const other = new Error('Conversion Error: Could not convert string to BIGINT');
    expect(asOutputError(other, 'a lake file', '/x')).toBe(other);
  });
});
