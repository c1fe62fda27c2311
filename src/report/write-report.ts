/**
 * writeRevenueReport: validate the inputs, read the warehouse read-only, render the requested formats and
 * write each file atomically (a temporary file in the same folder, then a rename), so a reader never sees
 * half a report and a failure leaves the previous one in place.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { MonthState } from '../closes/index.js';
import { writeDurably } from '../shared/durable-file.js';
import { ReportInputError } from './errors.js';
import { loadReport } from './load-report.js';
import { totalsOf, type RevenueReport, type TotalsLine } from './model.js';
import { parseMonth } from './month.js';
import { renderCsv, renderCsvSections } from './render/render-csv.js';
import { renderHtml } from './render/render-html.js';
import { renderMarkdown } from './render/render-md.js';
import { openWarehouse } from './warehouse.js';
import { findChromium, printPdf } from './render/pdf.js';
import type { RevenueRule } from './revenue-rule.js';
import { fxRatesFrom } from '../closes/index.js';
import type { Config } from '../config/index.js';
import type { Output } from '../output/index.js';

/** The formats of "all"; PDF is asked for by name (it needs Chromium). */
export const REPORT_FORMATS = ['html', 'csv', 'md'] as const;
export const ALL_FORMATS = [...REPORT_FORMATS, 'pdf'] as const;
export type ReportFormat = (typeof ALL_FORMATS)[number];
export const FORMATS_EXPECTED = 'expected html, csv, md, pdf, a comma-separated list of them, or all';

const RENDERERS: Record<(typeof REPORT_FORMATS)[number], (r: RevenueReport) => string> = {
  html: renderHtml,
  csv: renderCsv,
  md: renderMarkdown,
};

/** What the report reads of the settings (PERKS_REVENUE_STATUSES, PERKS_FX_RATES, PERKS_REPORTING_CURRENCY, PERKS_CHROMIUM). */
export type ReportSettings = Pick<Config, 'revenueStatuses' | 'fxRates' | 'reportingCurrency' | 'chromium'>;

export interface RevenueReportOptions {
  /** The command's output: reads its warehouse, lake/ and state/, writes its reports/. */
  readonly output: Output;
  /** "YYYY-MM" */
  readonly month: string;
  /** One organisation_group_id; all groups when absent. */
  readonly group?: number;
  /** Default: html, csv and md; pdf only when named. */
  readonly formats?: readonly ReportFormat[];
  /** The statuses that are revenue; default: the settings' (PERKS_REVENUE_STATUSES, else Complete). */
  readonly revenueRule?: RevenueRule;
  /** The rule, the rates and the Chromium the caller read (src/config, once per command): the report reads no other. */
  readonly settings: ReportSettings;
  /** Count test groups (stg_groups.is_sandbox) in the totals; by default they are listed, flagged and left out. */
  readonly includeTestGroups?: boolean;
}

export interface RevenueReportResult {
  /** The files written, under the output's reports/, in the order html, csv, md, pdf, then the CSV sections. */
  readonly files: string[];
  readonly status: MonthState;
  /** This month's totals per group and currency, exact decimal strings. */
  readonly totals: TotalsLine[];
  /** Mart equals lake for every group, currency and column. */
  readonly reconciled: boolean;
}

export function reportFileName(month: string, group: number | undefined, format: ReportFormat): string {
  return `revenue-${month}${group === undefined ? '' : `-g${group}`}.${format}`;
}

export async function writeRevenueReport(options: RevenueReportOptions): Promise<RevenueReportResult> {
  const month = parseMonth(options.month);
  const group = checkGroup(options.group);
  const formats = [...new Set(options.formats ?? REPORT_FORMATS)];
  const unknown = formats.filter((f) => !ALL_FORMATS.includes(f));
  if (unknown.length > 0 || formats.length === 0)
    throw new ReportInputError(`--format=${unknown.join(',') || '(none)'} is invalid: ${FORMATS_EXPECTED}`);
  // Before any work: a PDF needs Chromium.
  const settings = options.settings;
  const chromium = formats.includes('pdf') ? findChromium(settings.chromium) : undefined;

  const rule = options.revenueRule ?? { statuses: settings.revenueStatuses };
  const fx = fxRatesFrom(settings);
  const { output } = options;
  const wh = await openWarehouse(output.dir);
  let report: RevenueReport;
  try {
    report = await loadReport(wh, output, month, group, rule, fx, {
      includeTestGroups: options.includeTestGroups,
    });
  } finally {
    wh.close();
  }

  const dir = output.reports;
  await mkdir(dir, { recursive: true });
  const files: string[] = [];
  for (const format of REPORT_FORMATS.filter((f) => formats.includes(f))) {
    const file = join(dir, reportFileName(month.ym, group, format));
    await writeDurably(file, RENDERERS[format](report), 0o644);
    files.push(file);
  }
  if (chromium) {
    const file = join(dir, reportFileName(month.ym, group, 'pdf'));
    await printPdf(chromium, renderHtml(report), file);
    files.push(file);
  }
  if (formats.includes('csv')) {
    // The other sections, one tidy CSV each, beside the main one (only those the report has).
    for (const { section, content } of renderCsvSections(report)) {
      const file = join(dir, 'sections', reportFileName(month.ym, group, 'csv').replace(/\.csv$/, `-${section}.csv`));
      await mkdir(join(dir, 'sections'), { recursive: true });
      await writeDurably(file, content, 0o644);
      files.push(file);
    }
  }
  return { files, status: report.status, totals: totalsOf(report), reconciled: report.reconciliation.reconciled };
}

function checkGroup(group: unknown): number | undefined {
  if (group === undefined) return undefined;
  if (typeof group !== 'number' || !Number.isSafeInteger(group) || group <= 0) {
    throw new ReportInputError(
      `--group=${JSON.stringify(group)} is invalid: expected an organisation_group_id, a whole number above 0`,
    );
  }
  return group;
}
