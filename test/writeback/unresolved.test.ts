import { describe, expect, test } from 'vitest';
import { runWriteback, type WritebackOptions } from '../../src/writeback/index.js';
import { startGateway } from './gateway.js';
import { clientFor, martsFromSandbox, prepare, sandboxPerTest, storedTimes, writePendingJournal } from './fixtures.js';
import { outputAt } from '../../src/output/index.js';

const sandbox = sandboxPerTest();

/** Marts with a user the platform does not know (987654321), and every row the models produce. */
async function withUnknownUser() {
  const marts = martsFromSandbox(sandbox());
  marts.users.push({ organisation_group_id: 11, user_id: 987_654_321, segment: 'active' });
  const prepared = await prepare(sandbox(), marts);
  const rows = (await prepared.run({ dryRun: true, previewRows: 100_000 })).preview;
  return { ...prepared, rows, unknown: rows.find((r) => r.identifier_value === '987654321')! };
}

describe('pending rows whose storage cannot be learned', () => {
  test('a pending row of a user unknown upstream stays pending and is named; every other row is sent and the run is partial', async () => {
    const { run, rows, unknown, outDir } = await withUnknownUser();
    writePendingJournal(outDir, [unknown]);
    const first = await run();
    expect(first).toMatchObject({
      status: 'partial',
      sent: rows.length - 1,
      rejected: 0,
      recovered_pending: 0,
      reposted_pending: 0,
    });
    expect(first.unresolved_pending).toEqual([
      {
        interaction_id: unknown.interaction_id,
        kind: 'segment_change',
        identifier_value: '987654321',
        reason: expect.stringMatching(/cannot tell whether it was stored: .*HTTP 404/),
      },
    ]);
    expect(storedTimes(sandbox()).get(String(unknown.interaction_id))).toBeUndefined();

    // Never a guess: the next run looks it up again (one call), sends nothing else, stays partial.
    const second = await run();
    expect(second).toMatchObject({ status: 'partial', sent: 0, calls: 1 });
    expect(second.unresolved_pending.map((u) => u.interaction_id)).toEqual([unknown.interaction_id]);
  });

  test('the operator settles an unresolvable pending row as rejected: never looked up or posted again, not even by --retry-rejected', async () => {
    const { run, unknown, outDir } = await withUnknownUser();
    writePendingJournal(outDir, [unknown]);
    await run();
    await expect(run({ settlePending: [unknown.interaction_id, 42] })).rejects.toThrow(
      '--settle-pending-as-rejected: interaction 42 is not pending (the ledger does not know it); nothing was settled',
    );
    const settled = await run({ settlePending: [unknown.interaction_id] });
    expect(settled).toMatchObject({ status: 'success', settled_pending: 1, unresolved_pending: [], sent: 0, calls: 0 });
    const retried = await run({ retryRejected: true });
    expect(retried).toMatchObject({ status: 'success', sent: 0, skipped_rejected: 1, retried_rejected: 0, calls: 0 });
    await expect(run({ settlePending: [unknown.interaction_id] })).rejects.toThrow(/is not pending \(it is rejected\)/);
  });

  test('a post whose answer is lost, for a user whose listing is then refused, stays pending; the others are sent and the next run posts it once', async () => {
    const { outDir, config, rows } = await (async () => {
      const p = await prepare(sandbox());
      return { ...p, rows: (await p.run({ dryRun: true, previewRows: 100_000 })).preview };
    })();
    const user = rows[0].identifier_value;
    let failing = true;
    const gateway = await startGateway(sandbox().baseUrl, (req) => {
      if (!failing || !req.path.endsWith(`/${user}`)) return undefined;
      if (req.path.startsWith('/v3/Interactions/list/')) return { status: 404, body: { message: 'User not found.' } };
      if (req.path.startsWith('/v3/Interactions/')) return { status: 503, body: { message: 'Service Unavailable' } };
      return undefined;
    });
    const viaGateway = { ...config, baseUrl: gateway.baseUrl };
    const client = clientFor(viaGateway);
    const output = outputAt(outDir);
    const run = (extra: Partial<WritebackOptions> = {}) =>
      runWriteback({ output, client, config: viaGateway, pendingGraceMs: 0, minRetryDelayMs: 5, ...extra });
    try {
      const mine = rows.filter((r) => r.identifier_value === user);
      const first = await run();
      expect(first).toMatchObject({ status: 'partial', sent: rows.length - mine.length, rejected: 0 });
      expect(first.unresolved_pending.map((u) => u.interaction_id).sort()).toEqual(
        mine.map((r) => r.interaction_id).sort(),
      );
      expect(first.unresolved_pending[0].reason).toMatch(/HTTP 404/);

      failing = false;
      const second = await run();
      expect(second).toMatchObject({
        status: 'success',
        reposted_pending: mine.length,
        sent: mine.length,
        unresolved_pending: [],
      });
      const times = storedTimes(sandbox());
      expect(rows.filter((r) => times.get(String(r.interaction_id)) !== 1)).toEqual([]);
    } finally {
      await client.close();
    }
  });
});
