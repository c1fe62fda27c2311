/** A sandbox for a scenario, and the configuration and environment that reach it with the organisation credential. */
import { loadConfig, type Config } from '../../src/config/index.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';
import { orgEnv } from '../extract/helpers.js';

export { orgEnv };

/** A tiny sandbox on loopback, port 0, without the API's own limit unless asked. */
export function testSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  return startSandbox({ port: 0, scale: 'tiny', seed: 7, rateLimit: 1_000_000, tokenRateLimit: 1000, ...options });
}

export async function withSandbox<T>(options: SandboxOptions, work: (sandbox: Sandbox) => Promise<T>): Promise<T> {
  const sandbox = await testSandbox(options);
  try {
    return await work(sandbox);
  } finally {
    await sandbox.close();
  }
}

export function orgConfig(sandbox: Sandbox, outDir: string, extra: Record<string, string> = {}): Config {
  return loadConfig(orgEnv(sandbox, outDir, extra));
}
