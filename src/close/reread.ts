/**
 * Before a close, the month's windows are read again (every local day of it, for the group closed, or every
 * configured group), so a refund that came weeks after the order is in the signed figures rather than in an
 * adjustment; the warehouse is then rebuilt. The re-read is weighed per group and currency, the lake before
 * against the API now (src/extract/windows/settled-guard.ts, every month it reads): a change beyond the guard's
 * allowance is not applied and the close stops (exit 2), unless it was accepted (`--accept-changes`).
 */
import type { Output } from '../output/index.js';
import type { Config } from '../config/index.js';
import { allowanceText, changeCounts, currencyLine, extract, type MonthChange } from '../extract/index.js';
import { scanSql, streamGlob, withLakeConnection } from '../lake/index.js';
import type { Reread } from '../closes/index.js';
import type { ReportMonth } from '../report/index.js';
import { ExitCode, UserFacingError } from '../shared/exit-codes.js';
import { CloseHeldError } from './errors.js';

/** The order history as the re-read's queries read it (partition values kept as text). */
const HISTORY = scanSql('$glob', { autocast: false });

/** At most this many changes are named on the terminal (the counts are always whole). */
export const REREAD_LINES = 20;

/** What the re-read found: per group, what the record keeps; for the terminal, its figures and first changes. */
export interface MonthReread {
  readonly run_id: string;
  /** API calls the re-read made. */
  readonly calls: number;
  /** Per group re-read: what its close record keeps. */
  readonly groups: ReadonlyMap<number, Reread>;
  /** The figures per group and currency, then the first changes named ("group 11 order 700042: Complete → Refunded"). */
  readonly lines: readonly string[];
}

/** The re-read of `month` for `group` (every configured group when absent), weighed; held: throws CloseHeldError. */
export async function rereadMonth(
  config: Config,
  month: ReportMonth,
  /** `output`: where the re-read lands (the command's Output), its progress reported to a store. */
  options: { output: Output; group?: number; acceptChanges?: boolean },
): Promise<MonthReread> {
  const result = await extract(config, {
    output: options.output,
    streams: ['orders'],
    startDate: month.start,
    endDate: month.next,
    ...(options.group !== undefined ? { onlyGroups: [options.group] } : {}),
    guardMonths: 'all',
    acceptChanges: options.acceptChanges === true,
  });
  if (result.status === 'error')
    throw new UserFacingError(
      `the re-read of ${month.ym} before the close failed; nothing was closed: ${result.streams.find((st) => st.error)?.error ?? 'see the run manifest'}`,
      ExitCode.failed,
    );
  const weighed = (result.streams.find((st) => st.name === 'orders')?.groups ?? []).flatMap((g) =>
    (g.months ?? []).filter((m) => m.month === month.ym).map((m) => ({ group: g.group!, m })),
  );
  const figures = weighed.flatMap(({ group, m }) => figureLines(group, m));
  const held = weighed.filter(({ m }) => m.outcome === 'held');
  if (held.length) throw heldError(month, held, figures, options.group);
  const groups = new Map(weighed.map(({ group, m }) => [group, rereadOf(result.runId, m)]));
  const named = await namedChanges(options.output.dir, result.runId, month);
  const total = weighed.reduce((n, { m }) => n + m.new + m.changed + m.removed, 0);
  const more =
    total > named.length ? [`… and ${total - named.length} more (lake order_versions, _run_id ${result.runId})`] : [];
  return { run_id: result.runId, calls: result.api.calls, groups, lines: [...figures, ...named, ...more] };
}

/** What a group's close record keeps of the re-read: counts, the figures before and after, and an acceptance. */
function rereadOf(runId: string, m: MonthChange): Reread {
  return {
    run_id: runId,
    windows: m.windows,
    new: m.new,
    changed: m.changed,
    removed: m.removed,
    currencies: m.currencies,
    ...(m.outcome === 'accepted' ? { accepted_changes: { breach: m.breach!, allowance: allowanceText() } } : {}),
  };
}

/** "group 11 (30 days re-read): 0 new, 3 changed, 1 removed", then one line per currency, before → after. */
export function figureLines(group: number, m: MonthChange): string[] {
  const outcome = m.outcome === 'accepted' ? ', beyond the guard, accepted (--accept-changes)' : '';
  return [
    `group ${group} (${m.windows} days re-read): ${changeCounts(m)}${outcome}`,
    ...m.currencies.map((c) => `  ${currencyLine(c)}`),
  ];
}

function heldError(
  month: ReportMonth,
  held: readonly { group: number; m: MonthChange }[],
  figures: readonly string[],
  group: number | undefined,
): CloseHeldError {
  const which = held.map(({ group: g, m }) => `group ${g} (${m.breach})`).join('; ');
  const retry = `perks close --month ${month.ym}${group !== undefined ? ` --group ${group}` : ''} --accept-changes`;
  return new CloseHeldError(
    `${month.ym} is not closed: its re-read would change more than the guard allows (${allowanceText()}): ${which}; ` +
      `that re-read was not applied, and the close record and the marts are unchanged. ` +
      `Check PERKS_BASE_URL and the credential; if the API is right, close with \`${retry}\` (with your other flags; the record keeps the figures accepted)`,
    figures,
  );
}

/** The first changes the re-read landed, each beside the order's previous observation in the history. */
async function namedChanges(outDir: string, runId: string, month: ReportMonth): Promise<string[]> {
  const params = { glob: streamGlob(outDir, 'order_versions'), run: runId, from: month.start, to: month.next };
  return withLakeConnection(async (c) => {
    try {
      const named = await c.runAndReadAll(
        `WITH h AS (SELECT organisation_group_id AS g, order_id, order_status AS s, CAST(group_revenue AS VARCHAR) || ' ' || coalesce(order_currency, '') AS m,
            coalesce(is_removed, false) AS gone, _run_id, _extracted_at
          FROM ${HISTORY} WHERE order_date >= $from AND order_date < $to),
        now AS (SELECT * FROM h WHERE _run_id = $run),
        before AS (SELECT h.* FROM h SEMI JOIN now USING (g, order_id) WHERE h._run_id <> $run
          QUALIFY row_number() OVER (PARTITION BY h.g, h.order_id ORDER BY h._extracted_at DESC) = 1)
        SELECT now.g, now.order_id, now.gone, before.s AS before_s, before.m AS before_m, now.s, now.m
        FROM now LEFT JOIN before USING (g, order_id) ORDER BY now.g, now.order_id LIMIT ${REREAD_LINES}`,
        params,
      );
      const rows = named.getRowObjectsJson() as (Record<'g' | 'order_id', string> & { gone: boolean } & Record<
          's' | 'm' | 'before_s' | 'before_m',
          string | null
        >)[];
      return rows.map((x) =>
        x.gone
          ? `group ${x.g} order ${x.order_id}: removed (was ${x.before_s ?? 'unknown'}, group revenue ${x.before_m ?? 'unknown'})`
          : x.before_s === null && x.before_m === null
            ? `group ${x.g} order ${x.order_id}: new (${x.s}, ${x.m})`
            : `group ${x.g} order ${x.order_id}: ${x.before_s} → ${x.s} (group revenue ${x.before_m} → ${x.m})`,
      );
    } catch (err) {
      if (/No files found/i.test((err as Error).message)) return [];
      throw err;
    }
  });
}
