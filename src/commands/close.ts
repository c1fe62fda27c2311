/** `perks close`, `perks reopen`, `perks closes`: the finance close of a month, per group, and its record. */
import type { CommandModule } from 'yargs';
import {
  CloseHeldError,
  CloseInputError,
  runClose,
  runReopen,
  type CloseOutcome,
  type CloseRequest,
} from '../close/index.js';
import { allowanceText } from '../extract/index.js';
import { closesPath, forcedBecause, fxRatesFrom, readCloses, type CloseRecord } from '../closes/index.js';
import { DEFAULTS } from '../config/index.js';
import { parseMonth } from '../report/index.js';
import { ConfigError } from '../shared/exit-codes.js';
import { handle } from './handle.js';
import { configFromFlags, GROUP_FILTER, outputOf, type OutputFlags } from './options.js';
import { closeDatasets, Lineage } from '../lineage/index.js';
import { parseGroup } from './report.js';

interface CloseFlags extends OutputFlags {
  month: string;
  group?: string;
  by?: string;
  note?: string;
  force?: boolean;
  reread: boolean;
  'accept-changes': boolean;
  'budget-minutes'?: number;
}

const line = (r: CloseRecord) =>
  `${String(r.seq).padStart(4)}  ${r.action.padEnd(6)}  group ${r.organisation_group_id}  ${r.month}  ${r.at}  ` +
  `by ${r.by}${r.forced ? `  FORCED (${forcedBecause(r)})` : ''}${r.note ? `  "${r.note}"` : ''}  ${r.hash.slice(0, 12)}`;

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
        describe: 'sign off a partial or provisional month anyway (the record says so)',
      })
      .option('reread', {
        type: 'boolean',
        default: true,
        describe:
          'first re-read every window of the month and the credit of its holders from the API (when PERKS_BASE_URL is set) and rebuild; --no-reread skips it',
      })
      .option('accept-changes', {
        type: 'boolean',
        default: false,
        describe: `close although the re-read changes more than the guard allows (${allowanceText()}); the record keeps the figures accepted`,
      })
      .option('budget-minutes', {
        type: 'number',
        describe: `call budget of the credit refresh before the close, in minutes at the rate limit (default ${DEFAULTS.extract.budgetMinutes})`,
      })
      .example(
        '$0 close --month 2026-10 --group 11 --by "A. Controller" --note "board pack"',
        'sign October off for group 11',
      ),
  handler: (argv) =>
    handle(async () => {
      const request = closeRequestFrom(argv);
      const lineage = Lineage.of(request.config, request.output);
      const outcome = await lineage.around('close', async (run) => {
        const o = await runClose(request).catch((err: unknown) => {
          // held by the guard: the figures it weighed, then the one line saying why and how to go on
          if (err instanceof CloseHeldError)
            process.stdout.write(
              `re-read ${request.month.ym}: HELD, not applied; the lake before → the API now:\n${err.figures.map((l) => `  ${l}\n`).join('')}`,
            );
          throw err;
        });
        run.ending = { io: () => closeDatasets(lineage.place, o.reports, typeof o.reread !== 'string') };
        return o;
      });
      process.stdout.write(`${rereadNotes(request, outcome.reread).join('\n')}\n`);
      process.stdout.write(`${outcome.written.map(closedLine).join('\n')}\n  ${closesPath(request.output.dir)}\n`);
      process.stdout.write(reportLines(outcome.reports));
    }),
};

/** The flags checked once, in this order (a bad rates file: one line, exit 2, before any call). */
function closeRequestFrom(argv: CloseFlags): CloseRequest {
  const config = configFromFlags(argv);
  const group = parseGroup(argv.group);
  const rule = { statuses: config.revenueStatuses };
  const fx = fxRatesFrom(config);
  const month = parseMonth(argv.month);
  const budgetMinutes = argv['budget-minutes'] ?? DEFAULTS.extract.budgetMinutes;
  if (!(budgetMinutes >= 0)) throw new ConfigError('--budget-minutes must be a number of minutes, 0 or more');
  const { note, force, reread } = argv;
  const by = argv.by ?? config.operator;
  const output = outputOf(argv);
  const acceptChanges = argv['accept-changes'];
  return { config, output, month, group, by, note, force, rule, fx, reread, budgetMinutes, acceptChanges };
}

/** What the re-read before the close found (its first changes named) and refreshed, or why there was none. */
function rereadNotes({ month, budgetMinutes }: CloseRequest, reread: CloseOutcome['reread']): string[] {
  if (reread === 'no-api') return [`${month.ym} not re-read before the close: no API configured (PERKS_BASE_URL)`];
  if (reread === 'not-asked') return [`${month.ym} not re-read before the close (--no-reread)`];
  const { found, lines, credit, creditMs } = reread;
  const windows = [...found.groups.values()].reduce((n, g) => n + g.windows, 0);
  return [
    `re-read ${month.ym} for ${groupsText([...found.groups.keys()])} (${windows} windows, ${found.calls} calls), the lake before → the API now:`,
    ...lines.map((l) => `  ${l}`),
    `credit refreshed for ${credit.refreshed} of ${credit.holders} holders (a balance, or credit spent in ${month.ym})` +
      (credit.waiting
        ? `, ${credit.waiting} waiting: the budget (${credit.budgetCalls} calls, --budget-minutes ${budgetMinutes}) is spent`
        : '') +
      `: ${credit.calls} calls in ${(creditMs / 1000).toFixed(1)} s`,
  ];
}

const groupsText = (groups: readonly number[]) =>
  groups.length === 1 ? `group ${groups[0]}` : `groups ${groups.join(', ') || 'none'}`;

/** The month's reports the close or reopen wrote again (the marts were rebuilt before them). */
const reportLines = (reports: readonly string[]) => reports.map((f) => `report ${f}\n`).join('');

const closedLine = (r: CloseRecord) =>
  `closed ${r.month} for group ${r.organisation_group_id}${r.forced ? ` (FORCED: ${forcedBecause(r)})` : ''}, record ${r.seq}, hash ${r.hash}`;

interface ReopenFlags extends OutputFlags {
  month: string;
  group: string;
  reason: string;
  by?: string;
}

export const reopenCommand: CommandModule<object, ReopenFlags> = {
  command: 'reopen',
  describe: "Reopen a group's latest month signed off (a mistake), recorded like a close",
  builder: (y) =>
    y
      .option('month', { type: 'string', demandOption: true, describe: 'the month, YYYY-MM' })
      .option('group', { type: 'string', demandOption: true, describe: 'the organisation_group_id' })
      .option('reason', { type: 'string', demandOption: true, describe: 'why (goes in the record)' })
      .option('by', { type: 'string', describe: 'who reopens it (default: PERKS_OPERATOR, else the login name)' }),
  handler: (argv) =>
    handle(async () => {
      const config = configFromFlags(argv);
      const group = parseGroup(argv.group);
      if (group === undefined) throw new CloseInputError('--group is required');
      const output = outputOf(argv);
      const lineage = Lineage.of(config, output);
      const { record: r, reports } = await lineage.around('reopen', async (run) => {
        const o = await runReopen({
          output,
          month: argv.month,
          group,
          reason: argv.reason,
          by: argv.by ?? config.operator,
          settings: config,
        });
        run.ending = { io: () => closeDatasets(lineage.place, o.reports, false) };
        return o;
      });
      process.stdout.write(
        `reopened ${r.month} for group ${r.organisation_group_id}, record ${r.seq}, hash ${r.hash}\n`,
      );
      process.stdout.write(reportLines(reports));
    }),
};

export const closesCommand: CommandModule<object, OutputFlags & { format: string }> = {
  command: 'closes',
  describe: 'List the close record and verify its hash chain (exit 2 when it does not verify)',
  builder: (y) => y.option('format', { type: 'string', choices: ['table', 'json'], default: 'table' }),
  handler: (argv) =>
    handle(async () => {
      configFromFlags(argv); // the settings checked, as every command checks them (a bad one: exit 2)
      const records = await readCloses(outputOf(argv));
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
