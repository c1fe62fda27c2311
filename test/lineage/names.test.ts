/** Dataset names as the OpenLineage naming spec says, for a local output and for a store's. */
import { describe, expect, test } from 'vitest';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { extractDatasets, Lineage, placeOf } from '../../src/lineage/index.js';
import { loadConfig } from '../../src/config/index.js';
import type { ExtractResult } from '../../src/extract/index.js';
import { outputAt } from '../../src/output/index.js';
import { LOCAL_OUTPUT_HOOKS } from '../../src/shared/output-hooks.js';

const landed = (streams: string[]) =>
  ({
    streams: streams.map((name) => ({ name, status: 'success', rows: 3, groups: [{ bytes: 100, files: 2 }] })),
  }) as unknown as ExtractResult;

describe('dataset names', () => {
  test("a store's files are s3://<bucket> and their keys; the API its base URL, one dataset per stream", () => {
    const place = placeOf(
      '/home/u/.cache/perks/stores/b/copy',
      's3://reports-bucket/perks/prod',
      'https://api.example.com/',
    );
    const io = extractDatasets(place, landed(['orders']));
    expect(io.inputs).toEqual([{ namespace: 'https://api.example.com', name: 'orders' }]);
    expect(io.outputs.map((o) => [o.namespace, o.name])).toEqual([['s3://reports-bucket', 'perks/prod/lake/orders']]);
    expect(io.outputs[0].outputFacets?.outputStatistics).toMatchObject({ rowCount: 3, size: 100, fileCount: 2 });
    expect(place.warehouse).toBe('duckdb://reports-bucket/perks/prod/warehouse.duckdb');
    // at the bucket's root, the keys have no leading slash
    expect(extractDatasets(placeOf('/c', 's3://b', undefined), landed(['users'])).outputs[0].name).toBe('lake/users');
  });

  test("a command's lineage names the store by the URL it is given, else the folder it works in", () => {
    const config = loadConfig({});
    const copy = outputAt('/home/u/copy', { url: 's3://reports-bucket/perks/prod', hooks: LOCAL_OUTPUT_HOOKS });
    expect(Lineage.of(config, copy).place).toMatchObject({
      dir: '/home/u/copy',
      files: 's3://reports-bucket',
      root: 'perks/prod',
    });
    expect(Lineage.of(config, outputAt('/home/u/copy')).place).toMatchObject({
      dir: '/home/u/copy',
      files: `file://${hostname()}`,
    });
  });

  test("a local output's files are file://<host> and their absolute paths; no API, no API dataset", () => {
    const place = placeOf('out', 'out');
    const io = extractDatasets(place, landed(['users']));
    expect(io.inputs).toEqual([]);
    expect(io.outputs.map((o) => [o.namespace, o.name])).toEqual([
      [`file://${hostname()}`, join(process.cwd(), 'out', 'lake', 'users')],
    ]);
    expect(place.warehouse).toBe(`duckdb://${hostname()}${join(process.cwd(), 'out', 'warehouse.duckdb')}`);
  });
});
