/**
 * A perks process in another PID namespace of this host, as a container sharing the host's name runs: there
 * the holder of a lock or lease is not judged by its pid (src/shared/process-identity.ts). `unshare --pid`
 * needs root (or user namespaces); where it is not permitted the process runs plainly, and `isolated` says so.
 */
import { spawn, spawnSync } from 'node:child_process';
import { baseEnv, PERKS, ROOT, type CliResult } from './cli.js';

/** Whether this machine lets us start a process in a new PID namespace (root, unshare present). */
export const unsharePermitted = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;

/** `perks args` with a clean environment and `env`, in a new PID namespace where permitted; killed after `timeoutMs`. */
export function perksInOtherPidNamespace(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 120_000,
): Promise<CliResult & { isolated: boolean }> {
  const started = performance.now();
  const argv = [process.execPath, PERKS, ...args];
  const child = unsharePermitted
    ? spawn('unshare', ['--pid', '--fork', '--mount-proc', ...argv], { cwd: ROOT, env: baseEnv(env) })
    : spawn(argv[0], argv.slice(1), { cwd: ROOT, env: baseEnv(env) });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  child.stderr.on('data', (d) => (stderr += String(d)));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((done) =>
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      done({ code, signal, stdout, stderr, ms: performance.now() - started, isolated: unsharePermitted });
    }),
  );
}
