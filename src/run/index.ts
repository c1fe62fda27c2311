/** The whole job: extract, build, write back, report. */
export { runPipeline } from './pipeline.js';
export type { RunSummary, StepResult } from './result.js';
export type { RunChanges, RevenueMove } from './changes.js';
export type { RunOptions } from './steps.js';
export { formatRunSummary, markdownSummary, appendStepSummary } from './summary.js';
export { nextSteps } from './next-steps.js';
