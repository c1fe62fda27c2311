/**
 * After a close or a reopen, what readers see is made true at once: the warehouse rebuilt (the marts' is_closed
 * and *_as_closed come from the close record) and the month's report written again (its sign-off comes from
 * it too). Runs under the close's lock, before the store's checkpoint, so a store publishes the record, the
 * marts and the report in one commit.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { reportFileName, writeRevenueReport, type ReportSettings, type RevenueRule } from '../report/index.js';
import { ExitCode, UserFacingError } from '../shared/exit-codes.js';
import { buildSettingsOf, buildWarehouse, readBuildRecord, type BuildSettings } from '../transform/index.js';
import type { Output } from '../output/index.js';

export interface Refreshed {
  /** The month's HTML reports written again: the whole month's, and each group's one that was there. */
  readonly reports: readonly string[];
  /** Why the marts or the report could not be made true (the record is written all the same). */
  readonly failed?: string;
}

/**
 * Rebuilds at the as-of day of the last build (what the close did not change stays as it was), then writes the
 * month's report in every format, both under the `settings` the command read. A failure is returned, not
 * thrown: the record it follows is already written and must still be checkpointed.
 */
export async function refreshAfterClose(
  output: Output,
  ym: string,
  groups: readonly number[],
  settings: BuildSettings & ReportSettings,
  rule?: RevenueRule,
): Promise<Refreshed> {
  const asOf = (await readBuildRecord(output))?.lastSuccess?.asOf;
  try {
    const built = await buildWarehouse({ output, ...(asOf ? { asOf } : {}), ...buildSettingsOf(settings) });
    if (!built.ok) return { reports: [], failed: `the build failed: ${built.error ?? 'no reason given'}` };
  } catch (err) {
    return { reports: [], failed: `the build failed: ${messageOf(err)}` }; // a lake it cannot read, say
  }
  const reports: string[] = [];
  try {
    // the whole month's report, and the report of each group closed when one was written before
    const scopes = [
      undefined,
      ...groups.filter((g) => existsSync(join(output.reports, reportFileName(ym, g, 'html')))),
    ];
    for (const group of scopes) {
      const r = await writeRevenueReport({
        output,
        month: ym,
        group,
        settings,
        ...(rule ? { revenueRule: rule } : {}),
      });
      reports.push(...r.files.filter((f) => f.endsWith('.html')));
    }
  } catch (err) {
    return { reports, failed: `the report failed: ${messageOf(err)}` };
  }
  return { reports };
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** A refresh that failed after the record was written: one line, what was done and what to run. */
export function refreshFailure(done: string, ym: string, failed: string): UserFacingError {
  return new UserFacingError(
    `${done}, but the marts and the report still show the month as before: ${failed}; ` +
      `run \`perks build\` then \`perks report revenue --month ${ym}\` once it is fixed`,
    ExitCode.failed,
  );
}
