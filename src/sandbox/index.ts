/** The embedded Perks API v3 sandbox: startSandbox(options) and the types tests and the CLI use. */
export { startSandbox, type Sandbox, type SandboxCredentials } from './server.js';
export { SCALES, SCALE_PRESETS, NO_FAULTS, type Faults, type SandboxOptions, type Scale } from './options.js';
export { maxCallsInWindow, type SandboxStats } from './http/stats.js';
export type { Handler } from './http/handler.js';
export type { AdvanceReport } from './world/advance.js';
export { World } from './world/world.js';
export type { OrderRecord } from './world/order-store.js';
export type { UserRecord } from './world/users.js';
export type { GroupRecord } from './world/groups.js';
export * as choices from './choices.js';
