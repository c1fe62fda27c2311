/** `perks status`: is the data fresh? Per stream and group, for people and for schedulers. */
export {
  collectStatus,
  type StatusReport,
  type StreamGroupStatus,
  type WritebackBacklog,
  type MonthsStatus,
} from './collect.js';
export {
  judge,
  FreshnessOptions,
  Duration,
  DEFAULT_WARN_AFTER,
  DEFAULT_ERROR_AFTER,
  type Freshness,
  type Level,
} from './freshness.js';
export { statusText, statusJson, statusMarkdown } from './render.js';
export { inProgress, inProgressText, type InProgress } from './in-progress.js';
