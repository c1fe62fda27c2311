/** What `perks run` returns, as data: each step's outcome, the extract's and the build's results, the files. */
import type { ExtractResult } from '../extract/index.js';
import type { BuildResult } from '../transform/index.js';
import type { RunChanges } from './changes.js';
import type { MonthState } from '../closes/index.js';

export interface StepResult {
  name: 'extract' | 'forget' | 'compact' | 'build' | 'writeback' | 'report';
  status: 'success' | 'error' | 'skipped';
  ms: number;
  detail: string;
  exitCode: number;
}

export interface RunSummary {
  outDir: string;
  steps: StepResult[];
  extract?: ExtractResult & { manifest: string };
  build?: BuildResult;
  files: { warehouse: string; marts: string; reports: string[] };
  /** The month the report step wrote, and its state over the groups (absent: no report written). */
  report?: { month: string; status: MonthState };
  /** What the run changed in business terms: orders, users, recognised revenue (changes.ts). */
  changes?: RunChanges;
  exitCode: number;
  /** Lines about the alerts posted after the run (set by `perks run`; never changes exitCode). */
  alertLines?: string[];
}
