/**
 * Every stream, in dependency order: the extract's input (src/extract runs whatever list it is given; its
 * session gives it this one). Data only: each definition is checked by the schema in define.ts when it is loaded.
 */
import groups from './groups.js';
import users from './users.js';
import offers from './offers.js';
import orders from './orders.js';
import redemptionStats from './redemption-stats.js';
import credit from './credit.js';
import interactions from './interactions.js';
import { streamList } from './define.js';

export const streams = streamList([groups, users, offers, orders, redemptionStats, credit, interactions]);
export type StreamName = (typeof streams)[number]['name'];
/** The names, as `--streams` takes them. */
export const STREAM_NAMES: readonly StreamName[] = streams.map((s) => s.name);

export {
  defineStream,
  StreamDefinition,
  type SnapshotStream,
  type WindowedStream,
  type PerUserStream,
} from './define.js';
