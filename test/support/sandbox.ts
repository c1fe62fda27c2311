/**
 * A sandbox for a test or scenario, and the PERKS_* environment and configuration that reach it with the
 * organisation credential (for the program in-process, or a \`perks\` child process: test/support/cli.ts).
 */
import { PerksClient, type ClientOptions } from '../../src/api/index.js';
import { DEFAULTS } from '../../src/config/defaults.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import { TOKEN_RATE_LIMIT_PER_MINUTE } from '../../src/sandbox/choices.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';

/**
 * The sandbox's own seed and limits, which testSandbox replaces: for a test that runs against them
 * (`testSandbox({ ...SANDBOX_DEFAULTS, today })`), or against one of them (`tokenRateLimit: SANDBOX_DEFAULTS.tokenRateLimit`).
 */
export const SANDBOX_DEFAULTS = {
  seed: DEFAULTS.sandbox.seed,
  rateLimit: DEFAULTS.sandbox.rateLimit,
  tokenRateLimit: TOKEN_RATE_LIMIT_PER_MINUTE,
} as const;

/**
 * A tiny sandbox on loopback, port 0, seed 7, without the API's own limit unless asked; `options` over
 * these (test/support/sandbox-hooks.ts: one for a test file, or one for each of its tests).
 */
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

/**
 * A client of the sandbox's first group credential, paced at 100,000 calls a minute and retrying after 5 ms;
 * `options` over these (a proxy's baseUrl, onWire, …).
 */
export function sandboxClient(sandbox: Sandbox, options: Partial<ClientOptions> = {}): PerksClient {
  const cred = sandbox.credentials.group[0];
  return new PerksClient({
    baseUrl: sandbox.baseUrl,
    clientId: cred.client_id,
    clientSecret: cred.client_secret,
    rateLimit: 100_000,
    minRetryDelayMs: 5,
    ...options,
  });
}

/** The PERKS_* variables that reach \`sandbox\` with its organisation credential and write to \`outDir\`. */
export function sandboxEnv(sandbox: Sandbox, outDir: string, rateLimit = 100_000): Record<string, string> {
  const org = sandbox.credentials.organisation;
  return {
    PERKS_BASE_URL: sandbox.baseUrl,
    PERKS_CLIENT_ID: String(org.client_id),
    PERKS_CLIENT_SECRET: org.client_secret,
    PERKS_GROUP_IDS: org.organisation_group_ids.join(','),
    PERKS_RATE_LIMIT: String(rateLimit),
    PERKS_OUTPUT: outDir,
  };
}

/** sandboxEnv on the sandbox's day, and \`extra\` over it. */
export function orgEnv(sandbox: Sandbox, outDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...sandboxEnv(sandbox, outDir),
    // A command runs on the sandbox's day (noon UTC: the same local day in every group's zone).
    PERKS_NOW: `${sandbox.world.today}T12:00:00Z`,
    ...extra,
  };
}

/** The configuration orgEnv gives the program. */
export function orgConfig(sandbox: Sandbox, outDir: string, extra: Record<string, string> = {}): Config {
  return loadConfig(orgEnv(sandbox, outDir, extra));
}
