/**
 * What the report and the close read that no model header says: the warehouse's tables the revenue report's
 * queries name (src/report) and the lake stream it reconciles with. A test checks the list against the report's
 * sources, so that a table the report starts reading is named here too.
 */
export const REPORT_TABLES = [
  'revenue_monthly',
  'revenue_adjustments',
  'credit_adjustments',
  'credit_liability_monthly',
  'reconciliation_platform',
  'stg_groups',
  'stg_orders',
] as const;

/** The lake stream the report reconciles its revenue with. */
export const REPORT_STREAMS = ['orders'] as const;

/** Where the models' sources that are not lake views come from: the close record, and the extracts' manifests. */
export const SOURCE_FILES: Record<string, string> = {
  close_records: 'closes/closes.jsonl',
  close_figures: 'closes/closes.jsonl',
  close_credit: 'closes/closes.jsonl',
  month_states: 'closes/closes.jsonl',
  extract_runs: 'runs',
};
