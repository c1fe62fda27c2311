/**
 * `perks build`: one build (build-once.ts), `--verify-incremental`'s full build compared with it
 * (verify-incremental.ts), and every build recorded with, for a failure, what it concerns.
 */
import { checkBuildOptions, type BuildOptions } from './build-options.js';
import { buildOnce, placeIn, type BuildResult } from './build-once.js';
import { verifyIncremental } from './verify-incremental.js';
import { firstLine } from '../errors.js';
import type { StepResult } from '../runner/run-models.js';
import { newestExtractAt, readBuildRecord, recordBuild, type BuildOutcome } from './build-record.js';
import { closeKey, closesInForce, readCloses, type CloseRecord } from '../../closes/index.js';
import { now } from '../../shared/clock.js';
import type { Output } from '../../output/index.js';

export type { BuildResult } from './build-once.js';

/**
 * `onStep` hears of each step as it ends (progress for the CLI). Every build, failed or not, is recorded in
 * `<out>/state/build.json` (build-record.ts); a failure says which signed-off months its rows concern and since
 * when the marts are left as they were.
 */
export async function buildWarehouse(
  input: BuildOptions,
  hooks: { onStep?: (step: StepResult) => void } = {},
): Promise<BuildResult> {
  const options = checkBuildOptions(input); // a bad option is no build: refused before anything is recorded
  const { output } = options;
  const lakeAt = await newestExtractAt(output).catch(() => null);
  const record = (outcome: Omit<BuildOutcome, 'at' | 'lakeAt'>) =>
    recordBuild(output, { ...outcome, at: now().toISOString(), lakeAt }).catch(() => undefined);
  try {
    const evaluatedAt = now().toISOString();
    const result = await buildOnce(options, hooks, evaluatedAt, placeIn(output));
    if (result.ok && options.verifyIncremental) await verifyIncremental(options, result, evaluatedAt);
    if (!result.ok) result.impact = await impactOf(output, result);
    await record({
      asOf: result.asOf,
      ok: result.ok,
      warnings: result.warnings.length,
      ...(result.error ? { error: `${result.error}${result.impact ?? ''}` } : {}),
    });
    return result;
  } catch (err) {
    await record({ asOf: options.asOf, ok: false, warnings: 0, error: firstLine(err) });
    throw err;
  }
}

/**
 * What follows a failure's line: the signed-off months its offending rows concern (a rule that breaks only
 * after a close must be seen for what it is) and since when the marts are as they were.
 */
async function impactOf(output: Output, result: BuildResult): Promise<string> {
  const failed = result.steps.find((s) => s.status === 'error');
  const inForce = await readCloses(output)
    .then((records) => closesInForce(records))
    .catch(() => new Map<string, CloseRecord>());
  const closed = new Map<string, CloseRecord>();
  for (const row of failed?.examples ?? []) {
    const group = Number(row.organisation_group_id);
    const month = typeof row.month === 'string' ? row.month.slice(0, 7) : '';
    const close = inForce.get(closeKey(group, month));
    if (close) closed.set(`${group}/${month}`, close);
  }
  const months = [...closed.values()].map(
    (c) => `${c.month} of group ${c.organisation_group_id} (signed off ${c.at.slice(0, 10)})`,
  );
  const concerns = months.length ? `; it concerns the signed-off ${months.join(', ')}` : '';
  const since = (await readBuildRecord(output))?.lastSuccess?.at;
  const kept = since
    ? `; the marts, reports and BI files stay as built at ${since} until a build succeeds (\`perks status\` shows their age)`
    : '';
  return `${concerns}${kept}`;
}
