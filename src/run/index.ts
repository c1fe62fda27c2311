/** The whole job: extract, build, write back, report. */
export { runPipeline, type RunSummary, type StepResult } from './pipeline.js';
export { formatRunSummary, markdownSummary, appendStepSummary } from './summary.js';
