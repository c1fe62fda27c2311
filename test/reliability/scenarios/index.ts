/** The suite's scenarios in the order (1–12, then readers during extracts and compactions), each with its default and --long counts. */
import { EXTRACT_CRASH_POINTS } from '../../../src/shared/crash-points.js';
import type { Scenario } from '../table.js';
import { badInputScenario } from './bad-input.js';
import { lockScenario, sharedLimiterScenario } from './concurrency.js';
import { crashScenario } from './crash.js';
import { buildCrashScenario, writebackCrashScenario } from './crash-downstream.js';
import { driftScenario } from './drift.js';
import { faultStorms, notRetried, sharedRetryAfter, STORMS } from './faults.js';
import { filesScenario } from './files.js';
import { hostilePathsScenario } from './hostile-paths.js';
import { sandboxMemoryScenario } from './hostile-sandbox.js';
import { secretFormsScenario } from './secret-forms.js';
import { incrementalScenario } from './incremental.js';
import { personalDataScenario } from './personal-data.js';
import { readersScenario } from './readers.js';
import { rightTwiceScenario } from './right-twice.js';
import { sandboxScenario } from './sandbox-choices.js';
import { scheduleScenario } from './schedule.js';
import { schemaDriftScenario } from './schema-drift.js';
import { secretsScenario } from './secrets.js';
import { windowsScenario } from './windows.js';
import { storeCheckpointScenario, storeCommandsScenario, storeCrashScenario, storeReaderScenario } from './store.js';
import { storeRgwScenario } from './store-rgw.js';

export const SCENARIOS: Record<string, Scenario> = {
  crash: (o) => crashScenario({ ...o, kills: o.long ? 50 : 30, points: EXTRACT_CRASH_POINTS }),
  readers: (o) => readersScenario({ ...o, reads: o.long ? 30_000 : 10_000, maxMs: (o.long ? 60 : 25) * 60_000 }),
  'crash-build': (o) => buildCrashScenario({ ...o, kills: o.long ? 15 : 6 }),
  'crash-writeback': (o) => writebackCrashScenario({ ...o, kills: o.long ? 8 : 3 }),
  incremental: (o) => incrementalScenario({ ...o, restarts: o.long ? 12 : 5 }),
  windows: (o) => windowsScenario({ ...o, splits: o.long ? 5000 : 1000 }),
  faults: async (o) => [
    ...(await faultStorms({
      ...o,
      storms: Object.keys(STORMS).filter((k) => k !== 'lowerLimit'),
      days: o.long ? 60 : 30,
    })),
    await notRetried(),
    await sharedRetryAfter({ ...o, days: o.long ? 60 : 30 }),
  ],
  'lower-limit': (o) => faultStorms({ ...o, storms: ['lowerLimit'], days: o.long ? 60 : 30 }),
  drift: (o) => driftScenario({ ...o, rates: o.long ? [0.02, 0.1, 0.3] : [0.05, 0.2] }),
  'schema-drift': (o) => schemaDriftScenario(o),
  'bad-input': (o) => badInputScenario(o),
  concurrency: (o) => lockScenario(o),
  'shared-limit': (o) => sharedLimiterScenario({ ...o, limit: o.long ? 120 : 60, days: o.long ? 30 : 8 }),
  secrets: (o) => secretsScenario(o),
  'personal-data': (o) => personalDataScenario(o),
  'right-twice': (o) => rightTwiceScenario(o),
  files: (o) => filesScenario({ ...o, strings: o.long ? 50_000 : 10_000 }),
  sandbox: (o) => sandboxScenario(o),
  'hostile-paths': (o) => hostilePathsScenario({ ...o, paths: o.long ? 100 : 25 }),
  'secret-forms': (o) => secretFormsScenario(o),
  'hostile-sandbox': (o) => sandboxMemoryScenario({ ...o, requests: o.long ? 300_000 : 100_000 }),
  schedule: (o) => scheduleScenario({ ...o, days: o.long ? 45 : 22 }),
  'store-crash': (o) => storeCrashScenario(o),
  'store-readers': (o) => storeReaderScenario({ ...o, rounds: o.long ? 6 : 3 }),
  'store-commands': (o) => storeCommandsScenario(o),
  'store-checkpoints': (o) => storeCheckpointScenario(o),
  'store-rgw': (o) => storeRgwScenario(o),
};

/**
 * Scenarios that spend most of their time waiting for a server's 60 s rate window (over a minute each
 * by nature): the suite runs them beside the others instead of after them.
 */
export const WAIT_BOUND: ReadonlySet<string> = new Set(['lower-limit', 'shared-limit']);
