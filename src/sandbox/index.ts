/** The embedded Perks API v3 sandbox: startSandbox(options) and the types tests and the CLI use. */
export { startSandbox, type Sandbox, type SandboxCredentials, type SandboxStartLine } from './server.js';
export { SCALES, SCALE_PRESETS, NO_FAULTS, type Faults, type SandboxOptions, type Scale } from './options.js';
export { maxCallsInWindow, type Handler, type SandboxStats } from './http/index.js';
export {
  World,
  type AdvanceReport,
  type ChurnReport,
  type CreditRecord,
  type GroupRecord,
  type InteractionRecord,
  type OfferRecord,
  type OrderRecord,
  type UserRecord,
} from './world/index.js';
export * as choices from './choices.js';
