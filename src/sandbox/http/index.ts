/** The sandbox's HTTP layer: the fetch-shaped handler, its parts, and the node:http adapter. */
export { createServe, type Engine } from './handler.js';
export { fetchHandler, type Handler, type Reply, type SandboxRequest, type Serve } from './exchange.js';
export { listen } from './node-adapter.js';
export { makeSecret, TokenService, type Credential } from './auth.js';
export { FaultInjector, type FaultCounts } from './faults.js';
export { SlidingWindow } from './rate-limit.js';
export { Router } from './router.js';
export { StatsRecorder, maxCallsInWindow, type SandboxStats } from './stats.js';
