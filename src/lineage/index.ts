/** OpenLineage: every command that reads or writes data tells a catalog what ran, what it read and wrote. */
export { Lineage, CommandRun, RunLineage } from './lineage.js';
export { JobRun, type Ending, type JobOptions, type ParentRun } from './job-run.js';
export { lineageRunId } from './run-id.js';
export { placeOf } from './datasets.js';
export {
  closeDatasets,
  compactDatasets,
  extractDatasets,
  forgetDatasets,
  reportDatasets,
  writebackDatasets,
} from './stage-datasets.js';
export { REPORT_TABLES, REPORT_STREAMS } from './reads.js';
export type { RunEvent, DatasetIo } from './events.js';
export type { Place } from './datasets.js';
export { lineageSvg, writeLineagePicture } from './picture.js';
