/** The finance monthly revenue report: HTML (inline SVG), CSV and Markdown from the warehouse. */
export {
  writeRevenueReport,
  reportFileName,
  REPORT_FORMATS,
  ALL_FORMATS,
  FORMATS_EXPECTED,
  type ReportFormat,
  type RevenueReportOptions,
  type RevenueReportResult,
  type ReportSettings,
} from './write-report.js';
export { loadReport } from './load-report.js';
export { openWarehouse, type Warehouse } from './warehouse.js';
export { lastFinalMonth, readOrdersState, closureOf, ordersStatePath, OrdersState } from './closure.js';
export { parseMonth, type ReportMonth } from './month.js';
export { ReportInputError } from './errors.js';
export { ChromiumMissingError, findChromium } from './render/pdf.js';
export type { RevenueReport, TotalsLine } from './model.js';
export { closeSummary } from './close-summary.js';
export { revenueRuleFrom, KNOWN_STATUSES, type RevenueRule } from './revenue-rule.js';
