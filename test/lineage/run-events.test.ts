/**
 * A real `perks run` against the sandbox, its OpenLineage events received by a loopback collector: every job one
 * START and one end with the same run id, every event valid against the official schemas, the build's outputs
 * naming every mart with the warehouse's columns and its data tests as assertions; a run failed on purpose sends
 * FAIL with a message and no secret; a collector down costs one warning line and nothing else.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cpSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { orgEnv, testSandbox } from '../support/sandbox.js';
import { startCli, ROOT, type CliResult } from '../support/cli.js';
import { tempOut } from '../support/scratch.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { openLineageValidator } from './schemas.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- events as received

let sandbox: Sandbox;
let collector: Receiver;
let first: { dir: string; result: CliResult; events: Json[] };

beforeAll(async () => {
  sandbox = await testSandbox();
  collector = await startReceiver('ok');
  const dir = tempOut('lineage-run-');
  const result = await startCli(['run', '--quiet'], orgEnv(sandbox, dir, { OPENLINEAGE_URL: collector.url })).done;
  first = { dir, result, events: collector.json() };
});

afterAll(async () => {
  await collector?.close();
  await sandbox?.close();
});

const byJob = (events: Json[]) => {
  const jobs = new Map<string, Json[]>();
  for (const e of events) jobs.set(e.job.name as string, [...(jobs.get(e.job.name as string) ?? []), e]);
  return jobs;
};

/** The models of the SQL project, by layer, read from its folders. */
const modelsOf = (layer: string) =>
  readdirSync(join(ROOT, 'sql', layer))
    .filter((f) => f.endsWith('.sql'))
    .map((f) => f.slice(0, -4));

async function query<T extends Json>(
  sql: string,
  params: Record<string, string> = {},
  file = ':memory:',
): Promise<T[]> {
  const db = await DuckDBInstance.create(file, file === ':memory:' ? {} : { access_mode: 'READ_ONLY' });
  const c = await db.connect();
  try {
    return (await c.runAndReadAll(sql, params)).getRowObjectsJson() as T[];
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

describe('OpenLineage events of a real perks run', () => {
  test('every job of the run sends one START and one COMPLETE with the same run id, each event valid', () => {
    expect(first.result.code, first.result.stderr).toBe(0);
    const valid = openLineageValidator();
    for (const e of first.events) expect(valid(e).errors, `${e.job.name} ${e.eventType}`).toEqual([]);
    expect(collector.got.every((g) => g.path === '/api/v1/lineage')).toBe(true);
    const jobs = byJob(first.events);
    const steps = ['extract', 'forget', 'compact', 'build', 'writeback', 'report'].map((s) => `run.${s}`);
    const models = ['staging', 'intermediate', 'marts', 'writeback'].flatMap(modelsOf);
    for (const name of ['run', ...steps, ...models.map((m) => `run.build.${m}`)]) {
      const events = jobs.get(name) ?? [];
      expect(
        events.map((e) => e.eventType),
        name,
      ).toEqual(['START', 'COMPLETE']);
      expect(events[0].run.runId, name).toBe(events[1].run.runId);
    }
    expect(new Set(first.events.map((e) => e.run.runId)).size).toBe(jobs.size); // no two jobs share a run
    // the steps name the run as their parent; the models name the build
    const runId = jobs.get('run')![0].run.runId;
    for (const s of steps) expect(jobs.get(s)![1].run.facets.parent.run.runId, s).toBe(runId);
    const buildId = jobs.get('run.build')![0].run.runId;
    for (const m of models) expect(jobs.get(`run.build.${m}`)![1].run.facets.parent.run.runId, m).toBe(buildId);
    // event times are the program's clock (pinned to the sandbox's day), not the machine's
    for (const e of first.events) expect(e.eventTime.slice(0, 10)).toBe(sandbox.world.today);
  });

  test("the extract's run id is its manifest's, and its UUID carries the run's second", () => {
    const [manifest] = readdirSync(join(first.dir, 'runs')).filter((f) => f.endsWith('.json'));
    const id = manifest.replace(/\.json$/, '');
    const [start, end] = byJob(first.events).get('run.extract')!;
    expect(start.run.facets.perks_run.runId).toBe(id);
    expect(end.run.facets.perks_run.runId).toBe(id);
    // UUIDv7: the first 48 bits are the Unix time in ms, here the run id's second
    const uuid = start.run.runId as string;
    expect(uuid[14]).toBe('7');
    const ms = parseInt(uuid.replace(/-/g, '').slice(0, 12), 16);
    const second = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z/.exec(id)!;
    expect(new Date(ms).toISOString()).toBe(
      `${second[1]}-${second[2]}-${second[3]}T${second[4]}:${second[5]}:${second[6]}.000Z`,
    );
  });

  test("the build's outputs name every mart with the warehouse's columns, and its data tests as assertions", async () => {
    const complete = byJob(first.events).get('run.build')![1];
    const outputs = complete.outputs as Json[];
    const columns = await query<{ table_name: string; column_name: string; data_type: string }>(
      `SELECT table_name, column_name, data_type FROM information_schema.columns
       WHERE table_schema = 'main' ORDER BY table_name, ordinal_position`,
      {},
      join(first.dir, 'warehouse.duckdb'),
    );
    for (const mart of modelsOf('marts')) {
      const table = outputs.find((o) => o.name === `warehouse.main.${mart}`);
      expect(table, mart).toBeDefined();
      const expected = columns
        .filter((c) => c.table_name === mart)
        .map((c) => ({ name: c.column_name, type: c.data_type }));
      expect(expected.length, mart).toBeGreaterThan(0);
      expect(table!.facets.schema.fields, mart).toEqual(expected);
      const file = outputs.find((o) => o.name === join(first.dir, 'marts', `${mart}.parquet`));
      expect(file, `${mart}.parquet`).toBeDefined();
      const parquet = await query<{ column_name: string }>(`DESCRIBE SELECT * FROM read_parquet($f)`, {
        f: join(first.dir, 'marts', `${mart}.parquet`),
      });
      expect(file!.facets.schema.fields.map((f: Json) => f.name)).toEqual(parquet.map((c) => c.column_name));
      const rows = await query<{ n: number }>(`SELECT count(*)::INTEGER AS n FROM read_parquet($f)`, {
        f: join(first.dir, 'marts', `${mart}.parquet`),
      });
      expect(file!.outputFacets.outputStatistics.rowCount, mart).toBe(rows[0].n);
    }
    // the data tests: as many assertions, all passed, as the run's summary says passed
    const passed = Number(/(\d+) data tests passed/.exec(first.result.stdout)![1]);
    const assertions = outputs.flatMap((o) => (o.facets?.dataQualityAssertions?.assertions ?? []) as Json[]);
    expect(assertions.length).toBe(passed);
    expect(assertions.every((a) => a.success === true)).toBe(true);
    expect(assertions.map((a) => a.assertion)).toContain(
      'unique(organisation_group_id, month, order_currency, order_status)',
    );
  });

  test('a run that fails sends FAIL with its message, and no secret in any event', async () => {
    // an API that answers the token call with 400, echoing what it was sent (the client secret with it)
    const echo: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: `refused: ${body}` }));
      });
    });
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
    const rx = await startReceiver('ok');
    const secret = sandbox.credentials.organisation.client_secret;
    try {
      const env = orgEnv(sandbox, tempOut('lineage-fail-'), {
        PERKS_BASE_URL: `http://127.0.0.1:${(echo.address() as AddressInfo).port}`,
        OPENLINEAGE_URL: rx.url,
      });
      const r = await startCli(['run', '--quiet', '--no-writeback'], env).done;
      expect(r.code).not.toBe(0);
      const jobs = byJob(rx.json());
      expect([...jobs.keys()].sort()).toEqual(['run', 'run.extract']); // the steps after it never ran
      for (const name of ['run', 'run.extract']) {
        const [start, end] = jobs.get(name)!;
        expect([start.eventType, end.eventType], name).toEqual(['START', 'FAIL']);
        expect(end.run.runId).toBe(start.run.runId);
        expect(end.run.facets.errorMessage.message, name).toMatch(/HTTP 400/);
      }
      const valid = openLineageValidator();
      for (const e of rx.json()) expect(valid(e).errors).toEqual([]);
      expect(rx.got.map((g) => g.body).join('\n')).not.toContain(secret);
    } finally {
      await rx.close();
      await new Promise((r) => echo.close(r));
    }
  });

  test('perks extract and perks build on their own: their events in a file, the extract named by its manifest', async () => {
    const dir = tempOut('lineage-alone-');
    cpSync(first.dir, dir, { recursive: true });
    const file = join(tempOut('lineage-events-'), 'events.jsonl');
    const env = orgEnv(sandbox, dir, {
      OPENLINEAGE__TRANSPORT__TYPE: 'file',
      OPENLINEAGE__TRANSPORT__LOG_FILE_PATH: file,
    });
    const before = new Set(readdirSync(join(dir, 'runs')));
    for (const command of ['extract', 'build']) {
      const r = await startCli([command, '--quiet'], env).done;
      expect(r.code, `${command}: ${r.stderr}`).toBe(0);
    }
    const events = readFileSync(file, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Json);
    const valid = openLineageValidator();
    for (const e of events) expect(valid(e).errors, `${e.job.name} ${e.eventType}`).toEqual([]);
    const jobs = byJob(events);
    for (const name of ['extract', 'build', ...modelsOf('marts').map((m) => `build.${m}`)])
      expect(
        (jobs.get(name) ?? []).map((e) => e.eventType),
        name,
      ).toEqual(['START', 'COMPLETE']);
    const manifest = readdirSync(join(dir, 'runs')).find((f) => f.endsWith('.json') && !before.has(f))!;
    expect(jobs.get('extract')![0].run.facets.perks_run.runId).toBe(manifest.replace(/\.json$/, ''));
    // the extract wrote the lake streams the build read
    const landed = (jobs.get('extract')![1].outputs as Json[]).map((o) => o.name as string);
    const read = (jobs.get('build')![1].inputs as Json[]).map((o) => o.name as string);
    expect(landed.length).toBeGreaterThan(0);
    for (const name of landed) expect(read, name).toContain(name);
  });

  test('with the collector down, a run says and does what it does without lineage, plus one warning line', async () => {
    const unlike = (dir: string) => (text: string) =>
      text
        .replaceAll(dir, '<out>')
        .replace(/\d+\.\d s/g, '<s>')
        .replace(/[\d.]+ calls\/min \(utilisation [\d.]+\)/g, '<rate>')
        .replace(/\d{8}T\d{6}Z-[0-9a-f]{6}/g, '<run>');
    const down = await startReceiver('ok');
    const closed = down.url;
    await down.close(); // nothing listens there any more: connections are refused
    const [plain, lost] = [tempOut('lineage-plain-'), tempOut('lineage-down-')];
    cpSync(first.dir, plain, { recursive: true });
    cpSync(first.dir, lost, { recursive: true });
    const args = ['run', '--quiet', '--no-writeback'];
    const a = await startCli(args, orgEnv(sandbox, plain)).done;
    const b = await startCli(args, orgEnv(sandbox, lost, { OPENLINEAGE_URL: closed })).done;
    expect(b.code).toBe(a.code);
    expect(unlike(lost)(b.stdout)).toBe(unlike(plain)(a.stdout));
    const extra = b.stderr.split('\n').filter((l) => !a.stderr.split('\n').includes(l));
    expect(extra).toHaveLength(1);
    expect(extra[0]).toMatch(
      /^perks: warning: lineage: \d+ of \d+ OpenLineage events not sent to .*: unreachable \(ECONNREFUSED\)/,
    );
  });
});
