/** `perks close`, `perks reopen`, `perks closes`: the finance close of a month, per group, and its record. */
import type { CommandModule } from 'yargs';
import { closeMonth, CloseInputError, refreshCredit, reopenMonth, rereadMonth } from '../close/index.js';
import { DEFAULTS } from '../config/index.js';
import { ConfigError } from '../shared/exit-codes.js';
import { closesPath, forcedBecause, fxRatesFrom, readCloses, type CloseRecord, type Reread } from '../closes/index.js';
import { parseMonth, revenueRuleFrom } from '../report/index.js';
import { todayUtc } from '../shared/clock.js';
import { ExitCode, UserFacingError } from '../shared/exit-codes.js';
import { buildWarehouse } from '../transform/index.js';
import { acquireLock } from '../lake/index.js';
import { checkpoint } from '../shared/output-hooks.js';
import { crashPoint } from '../shared/crash-points.js';
import { handle } from './handle.js';
import { configFromFlags, GROUP_FILTER, OUTPUT } from './options.js';
import { parseGroup } from './report.js';

interface CloseFlags {
  month: string;
  group?: string;
  by?: string;
  note?: string;
  force?: boolean;
  reread: boolean;
  'budget-minutes'?: number;
  output?: string;
}

/** `records`: the work appends to the close record, which (with a store) is committed before it is reported. */
async function locked<T>(outDir: string, work: () => Promise<T>, records = false): Promise<T> {
  const lock = await acquireLock(outDir);
  try {
    const result = await work();
    if (records) {
      crashPoint('close-before-publish');
      await checkpoint('close record');
      crashPoint('close-after-publish');
    }
    return result;
  } finally {
    await lock.release();
  }
}

const line = (r: CloseRecord) =>
  `${String(r.seq).padStart(4)}  ${r.action.padEnd(6)}  group ${r.organisation_group_id}  ${r.month}  ${r.at}  by ${r.by}${r.forced ? `  FORCED (${forcedBecause(r)})` : ''}${r.note ? `  "${r.note}"` : ''}  ${r.hash.slice(0, 12)}`;

export const closeCommand: CommandModule<object, CloseFlags> = {
  command: 'close',
  describe:
    'Sign a month off (per group): its figures are frozen in <out>/closes/closes.jsonl; later changes become adjustments',
  builder: (y) =>
    y
      .option('month', { type: 'string', demandOption: true, describe: 'the month, YYYY-MM' })
      .option('group', GROUP_FILTER)
      .option('by', { type: 'string', describe: 'who signs it off (default: PERKS_OPERATOR, else the login name)' })
      .option('note', { type: 'string', describe: 'a note for the record' })
      .option('force', {
        type: 'boolean',
        default: false,
        describe: 'close a provisional month anyway (the record says so)',
      })
      .option('reread', {
        type: 'boolean',
        default: true,
        describe:
          'first re-read every window of the month and the credit of its holders from the API (when PERKS_BASE_URL is set) and rebuild; --no-reread skips it',
      })
      .option('budget-minutes', {
        type: 'number',
        describe: `call budget of the credit refresh before the close, in minutes at the rate limit (default ${DEFAULTS.extract.budgetMinutes})`,
      })
      .option('output', OUTPUT)
      .example(
        '$0 close --month 2026-10 --group 11 --by "A. Controller" --note "board pack"',
        'sign October off for group 11',
      ),
  handler: (argv) =>
    handle(async () => {
      const config = configFromFlags(argv);
      const group = parseGroup(argv.group);
      const rule = revenueRuleFrom(process.env);
      const fx = fxRatesFrom(process.env); // a bad rates file: one line, exit 2, before any call
      const month = parseMonth(argv.month);
      const budget = argv['budget-minutes'] ?? DEFAULTS.extract.budgetMinutes;
      if (!(budget >= 0)) throw new ConfigError('--budget-minutes must be a number of minutes, 0 or more');
      let reread: Reread | null = null;
      const notes: string[] = [];
      const request = {
        outDir: config.output,
        month: argv.month,
        group,
        by: argv.by,
        note: argv.note,
        force: argv.force,
        rule,
        fx,
      };
      if (argv.reread && config.baseUrl && month.next <= todayUtc()) {
        // the refusals first: a close that would be refused re-reads nothing
        await locked(config.output, () => closeMonth({ ...request, dryRun: true }));
        const { lines, ...found } = await rereadMonth(config, month);
        reread = found; // the record keeps the count; the terminal names the changes
        notes.push(
          `re-read ${month.ym} (${reread.windows} windows): ${reread.changed} order${reread.changed === 1 ? '' : 's'} new or changed since last extracted`,
        );
        notes.push(...lines.map((l) => `  ${l}`));
        if (reread.changed > lines.length)
          notes.push(`  … and ${reread.changed - lines.length} more (lake order_versions, _run_id ${reread.run_id})`);
        const started = Date.now();
        const credit = await refreshCredit(config, month, { group, budgetMinutes: budget });
        notes.push(
          `credit refreshed for ${credit.refreshed} of ${credit.holders} holders (a balance, or credit spent in ${month.ym})${credit.waiting ? `, ${credit.waiting} waiting: the budget (${credit.budgetCalls} calls, --budget-minutes ${budget}) is spent` : ''}: ${credit.calls} calls in ${((Date.now() - started) / 1000).toFixed(1)} s`,
        );
      } else
        notes.push(
          argv.reread
            ? `${month.ym} not re-read before the close: no API configured (PERKS_BASE_URL)`
            : `${month.ym} not re-read before the close (--no-reread)`,
        );
      const written = await locked(
        config.output,
        async () => {
          if (reread) {
            const built = await buildWarehouse({ outDir: config.output });
            if (!built.ok)
              throw new UserFacingError(
                `the build after the re-read failed; nothing was closed: ${built.error}`,
                ExitCode.failed,
              );
          }
          return closeMonth({ ...request, reread });
        },
        true,
      );
      process.stdout.write(`${notes.join('\n')}\n`);
      process.stdout.write(
        `${written.map((r) => `closed ${r.month} for group ${r.organisation_group_id}${r.forced ? ` (FORCED: ${forcedBecause(r)})` : ''}, record ${r.seq}, hash ${r.hash}`).join('\n')}\n  ${closesPath(config.output)}\n`,
      );
    }),
};

interface ReopenFlags {
  month: string;
  group: string;
  reason: string;
  by?: string;
  output?: string;
}

export const reopenCommand: CommandModule<object, ReopenFlags> = {
  command: 'reopen',
  describe: "Reopen a group's latest closed month (a mistake), recorded like a close",
  builder: (y) =>
    y
      .option('month', { type: 'string', demandOption: true, describe: 'the month, YYYY-MM' })
      .option('group', { type: 'string', demandOption: true, describe: 'the organisation_group_id' })
      .option('reason', { type: 'string', demandOption: true, describe: 'why (goes in the record)' })
      .option('by', { type: 'string', describe: 'who reopens it (default: PERKS_OPERATOR, else the login name)' })
      .option('output', OUTPUT),
  handler: (argv) =>
    handle(async () => {
      const config = configFromFlags(argv);
      const group = parseGroup(argv.group);
      if (group === undefined) throw new CloseInputError('--group is required');
      const r = await locked(
        config.output,
        () => reopenMonth({ outDir: config.output, month: argv.month, group, reason: argv.reason, by: argv.by }),
        true,
      );
      process.stdout.write(
        `reopened ${r.month} for group ${r.organisation_group_id}, record ${r.seq}, hash ${r.hash}\n`,
      );
    }),
};

export const closesCommand: CommandModule<object, { output?: string; format: string }> = {
  command: 'closes',
  describe: 'List the close record and verify its hash chain (exit 2 when it does not verify)',
  builder: (y) =>
    y.option('format', { type: 'string', choices: ['table', 'json'], default: 'table' }).option('output', OUTPUT),
  handler: (argv) =>
    handle(async () => {
      const config = configFromFlags(argv);
      const records = await readCloses(config.output);
      if (argv.format === 'json') {
        process.stdout.write(`${JSON.stringify(records.map(({ figures: _f, ...r }) => r))}\n`);
        return;
      }
      const head =
        records.length === 0
          ? 'no closes yet'
          : `${records.length} record${records.length === 1 ? '' : 's'}, hash chain verified (last ${records.at(-1)!.hash})`;
      process.stdout.write(`${[...records.map(line), head].join('\n')}\n`);
    }),
};
