/** An extract's result for a person: per stream rows, calls, quarantined records and time; the API's figures; the manifest. */
import { changeLine } from '../lake/index.js';
import type { GroupTally } from './result.js';
import type { ExtractResult } from './runner.js';
import { rankText } from './per-user/user-selection.js';
import { monthLine } from './windows/settled-guard.js';

/** Schema changes named one per line in a summary, at most. */
const SCHEMA_LINES = 10;

export function formatExtractSummary(r: ExtractResult & { manifest?: string }): string {
  const lines = [`run ${r.runId}: ${r.status}${r.shard ? ` (shard ${r.shard})` : ''}`];
  for (const s of r.streams) {
    lines.push(
      `  ${s.name.padEnd(17)} ${s.status.padEnd(8)} ${String(s.rows).padStart(9)} rows` +
        ` ${String(s.calls).padStart(7)} calls ${String(s.rejected).padStart(5)} quarantined` +
        ` ${(s.ms / 1000).toFixed(1).padStart(7)} s${s.error ? `  ${s.error}` : ''}`,
    );
    const ranked = s.groups.filter((g) => g.users);
    if (ranked.length) {
      const sum = (pick: (g: GroupTally) => Record<string, number> | undefined) => {
        const total: Record<string, number> = {};
        for (const g of ranked) for (const [k, n] of Object.entries(pick(g) ?? {})) total[k] = (total[k] ?? 0) + n;
        return total;
      };
      lines.push(
        `    users by rank, served/waiting: ${rankText(
          sum((g) => g.users),
          sum((g) => g.waiting),
        )}`,
      );
    }
    for (const g of s.groups)
      for (const n of g.notes) lines.push(`    ${g.group === undefined ? '' : `group ${g.group}: `}${n}`);
    // the final months re-read: those the re-read changed, or that the guard held
    for (const g of s.groups)
      for (const m of g.months ?? [])
        if (m.outcome !== 'applied' || m.new + m.changed + m.removed > 0)
          lines.push(`    group ${g.group}: ${monthLine(m)}`);
  }
  if (r.quarantine?.message) lines.push(`  ${r.quarantine.message}`);
  if (r.heldMessage) lines.push(`  ${r.heldMessage}`);
  const changes = r.schemaChanges ?? [];
  for (const c of changes.slice(0, SCHEMA_LINES)) lines.push(`  schema: ${changeLine(c)}`);
  if (changes.length > SCHEMA_LINES)
    lines.push(`  schema: ${changes.length - SCHEMA_LINES} more changes (perks status, or the run manifest)`);
  const a = r.api;
  lines.push(
    `  api: ${a.calls} calls, ${a.retries} retries, ${a.throttled} throttled (429), ` +
      `${a.tokenRequests} token requests, ${a.callsPerMinute} calls/min (utilisation ${r.limiterUtilisation})`,
  );
  if (r.manifest) lines.push(`  manifest: ${r.manifest}`);
  return `${lines.join('\n')}\n`;
}
