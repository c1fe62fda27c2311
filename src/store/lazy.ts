/**
 * The command line's hooks, loading the store's code (and the AWS SDK) only for an output that is a
 * store URL: a local output starts as fast as before and makes no store request.
 */
import { isStoreUrl } from './url.js';

let loaded: typeof import('./entry.js') | undefined;

export async function resolveOutputLazily(argv: { _: (string | number)[]; output?: unknown }): Promise<void> {
  const value = typeof argv.output === 'string' ? argv.output : process.env.PERKS_OUTPUT;
  if (!isStoreUrl(value)) return;
  loaded = await import('./entry.js');
  await loaded.resolveOutput(argv as Parameters<typeof loaded.resolveOutput>[0]);
}

export async function finishOutputLazily(): Promise<void> {
  await loaded?.finishOutput();
}
