import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { readSchemaHistory, schemaHistoryPath, writeSchemaHistory } from '../../src/lake/index.js';
import { camelCase, camelKeys, snakeCase, snakeJson, snakeKeys } from '../../src/shared/json-keys.js';
import { tempOut } from '../support/scratch.js';

test('our names turn snake_case and back; keys that are not identifiers stay as they are', () => {
  expect(['finishedAt', 'limiterWaitMs', 'p95Ms', 'rows', 'EUR', '11', '_run_id', 'type.voucher_code']).toEqual(
    ['finishedAt', 'limiterWaitMs', 'p95Ms', 'rows', 'EUR', '11', '_run_id', 'type.voucher_code'].map((k) =>
      camelCase(snakeCase(k)),
    ),
  );
  expect(snakeCase('finishedAt')).toBe('finished_at');
  expect(snakeCase('EUR')).toBe('EUR');
  expect(camelCase('failed_groups')).toBe('failedGroups');
  expect(camelCase('_extra')).toBe('_extra');
});

test('snake_case at every depth, through arrays; a Date is left to JSON', () => {
  const at = new Date('2026-11-22T12:00:00Z');
  expect(snakeJson({ runId: 'r', streams: [{ failedGroups: [1], lastRun: { finishedAt: at } }] })).toBe(
    '{"run_id":"r","streams":[{"failed_groups":[1],"last_run":{"finished_at":"2026-11-22T12:00:00.000Z"}}]}',
  );
});

test('either spelling is read as the code spells it, so a file of the previous release reads the same', () => {
  const code = { lastAttempt: { asOf: '2026-11-21', lakeAt: null }, lastSuccess: null };
  expect(camelKeys(snakeKeys(code))).toEqual(code);
  expect(camelKeys(code)).toEqual(code);
});

test('keys that are data are kept, and the rules go on below them', () => {
  const rules = { dataKeys: ['streams', 'streams.*.fields'], asIs: ['meta'] };
  const value = {
    streams: { order_versions: { recordCount: 2, fields: { promoCode: { firstSeen: 'd' } } } },
    meta: { favouriteColour: { hexValue: '#fff' } },
  };
  const snake = snakeKeys(value, rules);
  expect(snake).toEqual({
    streams: { order_versions: { record_count: 2, fields: { promoCode: { first_seen: 'd' } } } },
    meta: { favouriteColour: { hexValue: '#fff' } },
  });
  expect(camelKeys(snake, rules)).toEqual(value);
});

test('the schema history is written in snake_case and a camelCase one (the previous release) is read the same', async () => {
  const out = tempOut();
  const mark = { run: 'r1', at: '2026-11-22T12:00:00.000Z', day: '2026-11-22' };
  const counted = { ...mark, count: 3 };
  const history = {
    version: 1 as const,
    runs: ['r1'],
    streams: {
      orders: {
        first: mark,
        last: counted,
        fields: {
          offer_excerpt: {
            declared: true,
            first: counted,
            last: counted,
            types: { string: { first: counted, last: counted } },
            absentSince: mark,
          },
        },
      },
    },
  };
  await writeSchemaHistory(out, history);
  const text = readFileSync(schemaHistoryPath(out), 'utf8');
  expect(text).toContain('"absent_since"');
  expect(text).toContain('"offer_excerpt"');
  expect(await readSchemaHistory(out)).toEqual(history);
  mkdirSync(join(out, 'lake'), { recursive: true });
  writeFileSync(schemaHistoryPath(out), JSON.stringify(history));
  expect(await readSchemaHistory(out)).toEqual(history);
});
