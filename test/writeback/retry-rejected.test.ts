import { describe, expect, test } from 'vitest';
import { runWriteback, type WritebackOptions } from '../../src/writeback/index.js';
import { startGateway } from './gateway.js';
import { clientFor, prepare, sandboxPerTest, storedTimes, writePendingJournal } from './fixtures.js';

const sandbox = sandboxPerTest();

describe('--retry-rejected', () => {
  test('rows rejected for a wrong interaction type are sent once after the mapping is fixed, and a second retry sends nothing', async () => {
    const { outDir, config, marts } = await prepare(sandbox());
    // The platform has no type named segment_change configured: it refuses those posts with a 422.
    const gateway = await startGateway(sandbox().baseUrl, (req) =>
      req.path.startsWith('/v3/Interactions/') && !req.path.startsWith('/v3/Interactions/list/') && req.body.interaction_type === 'segment_change'
        ? { status: 422, body: { message: 'The selected interaction type is invalid.', errors: { interaction_type: ['The selected interaction type is invalid.'] } } }
        : undefined,
    );
    const viaGateway = { ...config, baseUrl: gateway.baseUrl };
    const client = clientFor(viaGateway);
    const run = (extra: Partial<WritebackOptions> = {}) => runWriteback({ outDir, client, config: viaGateway, pendingGraceMs: 0, minRetryDelayMs: 5, ...extra });
    const fixed = { segment_change: 'engagement_segment' };
    const milestones = marts.savings.length / 2;
    try {
      const first = await run();
      expect(first).toMatchObject({ status: 'partial', rejected: marts.users.length, sent: milestones });
      expect(first.rejections[0]).toMatchObject({ http_status: 422, message: expect.stringContaining('interaction type is invalid') });
      const rejectedIds = first.rejections.map((r) => r.interaction_id);

      // Fixing the mapping alone sends nothing: the ids do not include the type, the ledger says rejected.
      expect(await run({ types: fixed })).toMatchObject({ sent: 0, skipped_rejected: marts.users.length, calls: 0 });

      // A retry that crashed after announcing its first row, which the server stored: found, not posted again.
      const preview = (await run({ dryRun: true, types: fixed, retryRejected: true, previewRows: 1 })).preview;
      expect(preview[0]).toMatchObject({ interaction_id: rejectedIds[0], interaction_type: 'engagement_segment' });
      const [crashed] = preview;
      await client.call('createInteraction', {
        path: { identifier: crashed.identifier, identifier_value: crashed.identifier_value },
        body: { interaction_id: crashed.interaction_id, interaction_type: crashed.interaction_type, interaction_at: crashed.interaction_at, interaction_details: crashed.interaction_details },
        group: crashed.organisation_group_id,
      });
      writePendingJournal(outDir, [crashed]);

      const retried = await run({ types: fixed, retryRejected: true });
      expect(retried).toMatchObject({ status: 'success', recovered_pending: 1, retried_rejected: marts.users.length - 1, sent: marts.users.length - 1, rejected: 0 });
      const times = storedTimes(sandbox());
      expect(rejectedIds.filter((id) => times.get(String(id)) !== 1)).toEqual([]);

      expect(await run({ types: fixed, retryRejected: true })).toMatchObject({ sent: 0, retried_rejected: 0, skipped_rejected: 0, calls: 0 });
    } finally {
      await client.close();
    }
  });
});
