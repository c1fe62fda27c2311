/**
 * `perks-pipeline/sandbox`: the embedded, spec-faithful Perks API v3, to start in another program's
 * tests (`startSandbox({ port: 0, scale: 'tiny' })`), with its credentials and controls.
 */
export {
  startSandbox,
  type Sandbox,
  type SandboxCredentials,
  type SandboxOptions,
  type Scale,
  type Faults,
  type SandboxStats,
} from '../sandbox/index.js';
