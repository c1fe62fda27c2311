/** `perks compact`: closed months of the lake rewritten into one checked file per group and month. */
import type { CommandModule } from 'yargs';
import { DEFAULTS } from '../config/index.js';
import { compactLake, type CompactResult } from '../compact/index.js';
import { handle } from './handle.js';
import { configFromFlags, outputOf, type OutputFlags } from './options.js';
import { compactDatasets, Lineage } from '../lineage/index.js';

type CompactFlags = OutputFlags;

export const compactCommand: CommandModule<object, CompactFlags> = {
  command: 'compact',
  describe:
    'Rewrite the months of <out>/lake past the lookback (no run re-reads them) into one file per group and month (perks extract and perks run do it too)',
  builder: (y) =>
    y.example(
      '$0 compact',
      `months older than PERKS_LOOKBACK_DAYS (default ${DEFAULTS.lookbackDays}) become one file each`,
    ),
  handler: (argv) =>
    handle(async () => {
      const config = configFromFlags(argv);
      const output = outputOf(argv);
      const lineage = Lineage.of(config, output);
      await lineage.around('compact', async (run) => {
        const result = await compactLake(output, { lookbackDays: config.lookbackDays });
        run.ending = { io: () => compactDatasets(lineage.place, result) };
        process.stdout.write(formatCompaction(result));
      });
    }),
};

export function formatCompaction(r: CompactResult): string {
  const lines = r.streams.map(
    (s) =>
      `${s.stream}: ${s.months} month(s) compacted, ${s.days} day(s) moved to month folders, ${s.rows} rows checked; ` +
      `files ${s.filesBefore} -> ${s.filesAfter} (${(s.ms / 1000).toFixed(1)} s)`,
  );
  for (const s of r.snapshots) {
    if (s.dropped || s.heldForPersonalData)
      lines.push(
        `${s.stream}: ${s.dropped} old snapshot(s) removed` +
          (s.heldForPersonalData ? `, ${s.heldForPersonalData} kept for personal values no later snapshot holds` : '') +
          `; files ${s.filesBefore} -> ${s.filesAfter}`,
      );
  }
  if (r.recovered) lines.push('finished the switch a killed compaction had left');
  return `${lines.join('\n')}\n`;
}
