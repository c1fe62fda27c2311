import { describe, expect, test } from 'vitest';
import { runWriteback, type WritebackOptions } from '../../src/writeback/index.js';
import { startGateway } from './gateway.js';
import { clientFor, prepare, sandboxPerTest, storedTimes, writePendingJournal } from './fixtures.js';
import { outputAt } from '../../src/output/index.js';

const sandbox = sandboxPerTest();

describe('--retry-rejected', () => {
  test('rows rejected for a wrong interaction type are sent once after the mapping is fixed, a crashed retry included, and a second run sends nothing', async () => {
    const { outDir, config, marts } = await prepare(sandbox());
    // The platform has no type named segment_change configured: it refuses those posts with a 422.
    const gateway = await startGateway(sandbox().baseUrl, (req) =>
      req.path.startsWith('/v3/Interactions/') &&
      !req.path.startsWith('/v3/Interactions/list/') &&
      req.body.interaction_type === 'segment_change'
        ? {
            status: 422,
            body: {
              message: 'The selected interaction type is invalid.',
              errors: { interaction_type: ['The selected interaction type is invalid.'] },
            },
          }
        : undefined,
    );
    const viaGateway = { ...config, baseUrl: gateway.baseUrl };
    const client = clientFor(viaGateway);
    const output = outputAt(outDir);
    const run = (extra: Partial<WritebackOptions> = {}) =>
      runWriteback({ output, client, config: viaGateway, pendingGraceMs: 0, minRetryDelayMs: 5, ...extra });
    const fixed = { segment_change: 'engagement_segment' };
    const milestones = marts.savings.length / 2;
    try {
      const first = await run();
      const segments = first.by_type.find((t) => t.kind === 'segment_change')!.rows;
      // A few rejections in a row for one reason hold the kind: the rest of its rows are not posted.
      expect(first).toMatchObject({
        status: 'partial',
        sent: milestones,
        held: [{ kind: 'segment_change', rows: segments - first.rejected }],
      });
      expect(first.rejections[0]).toMatchObject({
        http_status: 422,
        message: expect.stringContaining('interaction type is invalid'),
      });
      const rejectedIds = first.rejections.map((r) => r.interaction_id);

      // A retry with the fixed mapping that crashed after announcing its first row, which the server stored: found, not posted again.
      const preview = (await run({ dryRun: true, types: fixed, previewRows: 1 })).preview;
      expect(preview[0]).toMatchObject({ interaction_id: rejectedIds[0], interaction_type: 'engagement_segment' });
      const [crashed] = preview;
      await client.call('createInteraction', {
        path: { identifier: crashed.identifier, identifier_value: crashed.identifier_value },
        body: {
          interaction_id: crashed.interaction_id,
          interaction_type: crashed.interaction_type,
          interaction_at: crashed.interaction_at,
          interaction_details: crashed.interaction_details,
        },
        group: crashed.organisation_group_id,
      });
      writePendingJournal(outDir, [crashed]);

      // The fixed mapping alone resends what was rejected as the old type (a 4xx stored nothing) and posts the held rows.
      const retried = await run({ types: fixed });
      expect(retried).toMatchObject({
        status: 'success',
        recovered_pending: 1,
        retried_rejected: first.rejected - 1,
        sent: segments - 1,
        rejected: 0,
        held: [],
      });
      const times = storedTimes(sandbox());
      expect(rejectedIds.filter((id) => times.get(String(id)) !== 1)).toEqual([]);

      expect(await run({ types: fixed, retryRejected: true })).toMatchObject({
        sent: 0,
        retried_rejected: 0,
        skipped_rejected: 0,
        calls: 0,
      });
    } finally {
      await client.close();
    }
  });
});
