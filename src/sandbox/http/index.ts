/** The sandbox's HTTP layer: the fetch-shaped handler, its parts, and the node:http adapter. */
export { createHandler, type Engine, type Handler } from './handler.js';
export { listen } from './node-adapter.js';
export { makeSecret, TokenService, type Credential, type Principal } from './auth.js';
export { FaultInjector, type FaultCounts } from './faults.js';
export { SlidingWindow } from './rate-limit.js';
export { Router } from './router.js';
export { StatsRecorder, maxCallsInWindow, type SandboxStats } from './stats.js';
