/** `perks report revenue`: the finance monthly revenue report (HTML, CSV, Markdown) in <out>/reports/. */
import type { CommandModule } from 'yargs';
import {
  ALL_FORMATS,
  FORMATS_EXPECTED,
  REPORT_FORMATS,
  ReportInputError,
  writeRevenueReport,
  type ReportFormat,
} from '../report/index.js';
import { monthStateWord } from '../closes/index.js';
import { handle } from './handle.js';
import { configFromFlags, GROUP_FILTER, outputOf, type OutputFlags } from './options.js';
import { Lineage, reportDatasets } from '../lineage/index.js';

interface ReportFlags extends OutputFlags {
  report: string;
  month: string;
  group?: string;
  format: string;
  'include-test-groups': boolean;
}

export function parseFormats(value: string): ReportFormat[] {
  const names = value
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  if (names.includes('all')) return [...REPORT_FORMATS];
  for (const n of names) {
    if (!(ALL_FORMATS as readonly string[]).includes(n))
      throw new ReportInputError(`--format=${JSON.stringify(value)} is invalid: ${FORMATS_EXPECTED}`);
  }
  if (names.length === 0) throw new ReportInputError(`--format is empty: ${FORMATS_EXPECTED}`);
  return names as ReportFormat[];
}

export function parseGroup(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\s*\d+\s*$/.test(value) || Number(value) <= 0)
    throw new ReportInputError(
      `--group=${JSON.stringify(value)} is invalid: expected an organisation_group_id, a whole number above 0`,
    );
  return Number(value);
}

export const reportCommand: CommandModule<object, ReportFlags> = {
  command: 'report <report>',
  describe: 'Write a report to <out>/reports/ (revenue: the finance monthly revenue report)',
  builder: (y) =>
    y
      .positional('report', { type: 'string', choices: ['revenue'], describe: 'which report' })
      .option('month', { type: 'string', demandOption: true, describe: 'the month, YYYY-MM (group-local days)' })
      .option('group', GROUP_FILTER)
      .option('format', {
        type: 'string',
        default: 'all',
        describe:
          'html, csv, md, pdf (printed with the system Chromium; PERKS_CHROMIUM to name one), a comma-separated list, or all (html, csv and md)',
      })
      .option('include-test-groups', {
        type: 'boolean',
        default: false,
        describe:
          'count test groups (is_sandbox) in the headline and consolidated totals; by default they are flagged and left out',
      })
      .example('$0 report revenue --month 2026-03', 'every group, all three formats')
      .example('$0 report revenue --month 2026-03 --group 11 --format md', 'one group, Markdown only')
      .example('$0 report revenue --month 2026-03 --format html,pdf', 'the HTML and its PDF (A4)') as never,
  handler: (argv) =>
    handle(async () => {
      const config = configFromFlags(argv);
      const output = outputOf(argv);
      const lineage = Lineage.of(config, output);
      const result = await lineage.around('report', async (run) => {
        const r = await writeRevenueReport({
          output,
          month: argv.month,
          group: parseGroup(argv.group),
          formats: parseFormats(argv.format),
          includeTestGroups: argv['include-test-groups'],
          settings: config,
        });
        run.ending = { io: () => reportDatasets(lineage.place, r.files) };
        return r;
      });
      const lines = [
        `revenue ${argv.month}: ${monthStateWord(result.status)}, ` +
          (result.reconciled ? 'reconciled with the lake' : 'NOT reconciled with the lake (see the report)'),
        ...result.files.map((f) => `  ${f}`),
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
    }),
};
