/**
 * What `perks demo` (npm start) ends with: what to open and what to run next, on the output it just wrote. The
 * commands are the README's, with the report's month and file filled in, and `PERKS_OUTPUT=…` in front when the
 * demo wrote somewhere the next command would not look by itself (--output).
 */
import { parseMonth } from '../report/index.js';
import type { RunSummary } from './result.js';

/** A word the shell reads as itself: left bare when it can be, else in single quotes. */
const shellWord = (s: string): string => (/^[\w./:@%+=,-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`);

/**
 * The lines after the summary; `output` is the --output the demo was given (undefined: the environment's or the
 * default, which the next command finds by itself).
 */
export function nextSteps(summary: RunSummary, output: string | undefined): string[] {
  const perks = `${output === undefined ? '' : `PERKS_OUTPUT=${shellWord(output)} `}npx perks`;
  const html = summary.files.reports.find((f) => f.endsWith('.html'));
  const report = summary.report;
  const lines: [string, string][] = [];
  if (report && html) {
    lines.push(
      [
        `the finance report of ${parseMonth(report.month).label} (${report.status.replace('_', ' ')}), in any browser`,
        html,
      ],
      ['the same as an A4 PDF (needs chromium)', `${perks} report revenue --month ${report.month} --format pdf`],
    );
  }
  if (summary.build?.ok) {
    lines.push(
      ['the tables, their grain and columns', `${perks} models`],
      [
        'recognised revenue per group and month',
        `${perks} sql "SELECT month, organisation_group_id, order_currency, ` +
          `sum(group_revenue) AS recognised FROM revenue_monthly WHERE is_recognised GROUP BY ALL ORDER BY ALL"`,
      ],
    );
  }
  lines.push(["how fresh each stream is, and each month's state", `${perks} status`]);
  if (report)
    lines.push([
      `sign ${report.month} off as finance would`,
      `${perks} close --month ${report.month} --by "your name"`,
    ]);
  // a folder of its own: the sandbox's groups and a real organisation's never share a lake
  lines.push([
    'the same job against your API, in a folder of its own (README, "A real API")',
    'export PERKS_OUTPUT=perks-data PERKS_BASE_URL=… PERKS_CLIENT_ID=… PERKS_CLIENT_SECRET=…; npx perks check && npx perks run',
  ]);
  return ['next:', ...lines.flatMap(([what, how]) => [`  ${what}:`, `    ${how}`])];
}
