/**
 * Where the events go, and what a collector that fails costs: one warning line per command, no retry, the
 * events given up on within the timeout; a file transport appends one JSON per line; unset, nothing is sent.
 */
import { describe, expect, test } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/index.js';
import { Lineage } from '../../src/lineage/index.js';
import { outputAt } from '../../src/output/index.js';
import { ConfigError } from '../../src/shared/exit-codes.js';
import { startReceiver } from '../support/receiver.js';
import { tempOut } from '../support/scratch.js';
import { openLineageValidator } from './schemas.js';

/** A command's lineage with `env`'s settings; its warnings collected. */
function lineageWith(env: Record<string, string>) {
  const warnings: string[] = [];
  const lineage = Lineage.of(loadConfig(env), outputAt(tempOut('lineage-t-')), (l) => warnings.push(l));
  return { lineage, warnings };
}

/** A command of three jobs (as `perks run` and its steps): each START and COMPLETE, six events. */
async function threeJobs(lineage: Lineage): Promise<void> {
  await lineage.around('a', async (run) => {
    for (const name of ['b', 'c']) {
      const step = lineage.job(name, { jobType: 'TASK', parent: run.asParent() });
      step.begin();
      await step.end(0);
    }
    return 0;
  });
}

describe('the transports', () => {
  test('a collector that answers 5xx costs one warning line, and is not tried again', async () => {
    const rx = await startReceiver('fail');
    try {
      const { lineage, warnings } = lineageWith({ OPENLINEAGE_URL: rx.url });
      await threeJobs(lineage);
      expect(rx.got).toHaveLength(1);
      expect(warnings).toEqual([
        `perks: warning: lineage: 6 of 6 OpenLineage events not sent to ${rx.url}/api/v1/lineage: HTTP 500 (the work itself is unaffected)`,
      ]);
    } finally {
      await rx.close();
    }
  });

  test('a collector that does not answer is given up on after the timeout', async () => {
    const rx = await startReceiver('hang');
    try {
      const { lineage, warnings } = lineageWith({ OPENLINEAGE_URL: rx.url, OPENLINEAGE__TRANSPORT__TIMEOUT: '0.3' });
      const started = performance.now();
      await threeJobs(lineage);
      expect(performance.now() - started).toBeLessThan(3_000);
      expect(rx.got).toHaveLength(1);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/not sent .*: no answer within 0\.3 s \(OPENLINEAGE__TRANSPORT__TIMEOUT\)/);
    } finally {
      await rx.close();
    }
  });

  test('the API key goes as a bearer to the endpoint named, and never into a warning', async () => {
    const rx = await startReceiver('ok');
    try {
      const key = 'ol-key-5f2e9c1d7a';
      const { lineage, warnings } = lineageWith({
        OPENLINEAGE_URL: `${rx.url}/`,
        OPENLINEAGE_ENDPOINT: '/openapi/openlineage/api/v1/lineage',
        OPENLINEAGE_API_KEY: key,
        OPENLINEAGE_NAMESPACE: 'finance-etl',
      });
      await threeJobs(lineage);
      expect(warnings).toEqual([]);
      expect(rx.got.map((g) => [g.path, g.headers.authorization])).toEqual(
        Array(6).fill(['/openapi/openlineage/api/v1/lineage', `Bearer ${key}`]),
      );
      expect(rx.json().map((e) => (e.job as { namespace: string }).namespace)).toEqual(Array(6).fill('finance-etl'));
    } finally {
      await rx.close();
    }
  });

  test('the file transport appends one valid event per line', async () => {
    const file = join(tempOut('lineage-file-'), 'ci', 'events.jsonl');
    const { lineage, warnings } = lineageWith({
      OPENLINEAGE__TRANSPORT__TYPE: 'file',
      OPENLINEAGE__TRANSPORT__LOG_FILE_PATH: file,
    });
    await threeJobs(lineage);
    await lineage.around('failing', () => Promise.reject(new Error('it broke'))).catch(() => undefined);
    expect(warnings).toEqual([]);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    const events = lines.map((l) => JSON.parse(l) as { eventType: string; job: { name: string } });
    expect(events.map((e) => `${e.job.name} ${e.eventType}`)).toEqual([
      'a START',
      'b START',
      'b COMPLETE',
      'c START',
      'c COMPLETE',
      'a COMPLETE',
      'failing START',
      'failing FAIL',
    ]);
    const valid = openLineageValidator();
    for (const e of events) expect(valid(e).errors).toEqual([]);
  });

  test('unset, or disabled, nothing is sent and nothing is written', async () => {
    const rx = await startReceiver('ok');
    try {
      const envs: Record<string, string>[] = [{}, { OPENLINEAGE_URL: rx.url, OPENLINEAGE_DISABLED: 'true' }];
      for (const env of envs) {
        const { lineage, warnings } = lineageWith(env);
        expect(lineage.enabled).toBe(false);
        await threeJobs(lineage);
        expect(warnings).toEqual([]);
      }
      expect(rx.got).toEqual([]);
    } finally {
      await rx.close();
    }
  });

  test('a setting that cannot work is one line naming the variable', () => {
    const refused = (env: Record<string, string>) => {
      try {
        lineageWith(env);
        return 'accepted';
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
    };
    expect(refused({ OPENLINEAGE__TRANSPORT__TYPE: 'file' })).toBe(
      'OPENLINEAGE__TRANSPORT__TYPE=file needs OPENLINEAGE__TRANSPORT__LOG_FILE_PATH: the file the events are appended to, one JSON per line',
    );
    expect(refused({ OPENLINEAGE_URL: 'localhost:5000' })).toBe(
      'OPENLINEAGE_URL="localhost:5000" is invalid: expected an http(s) URL, e.g. http://localhost:5000',
    );
    expect(refused({ OPENLINEAGE_URL: 'http://user:pw@host:5000' })).toMatch(
      /^OPENLINEAGE_URL="http:\/\/\(hidden\)@host:5000" is invalid/,
    );
    expect(refused({ OPENLINEAGE_URL: 'http://h:5000', OPENLINEAGE__TRANSPORT__TIMEOUT: '0' })).toBe(
      'OPENLINEAGE__TRANSPORT__TIMEOUT="0" is invalid: expected a number of seconds above 0, at most 60 (default 5)',
    );
    expect(refused({ OPENLINEAGE_API_KEY: '' })).toBe('accepted'); // empty: unset
  });
});
