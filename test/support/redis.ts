/**
 * A throwaway Redis for the scale tests and the bench: `redis-server` on loopback, on a free port, no
 * persistence, with a password (so the tests also prove it never leaks). Fails with a clear message
 * when the binary is missing.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

export interface TestRedis {
  url: string;
  password: string;
  port: number;
  stop(): Promise<void>;
}

export const REDIS_PASSWORD = 'scale-test-redis-pw';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Redis runs without libfaketime when the suite runs under `faketime` (issue 54: the suite on any day): the
 * library deadlocks redis-server's allocator at start (it hangs before printing its version), and the shared
 * limit's clock is Redis's own anyway (Bottleneck reads the server's TIME), as it is for workers in production.
 */
function withoutFaketime(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const preload = (env.LD_PRELOAD ?? '')
    .split(/[:\s]+/)
    .filter((lib) => lib && !lib.includes('faketime'))
    .join(':');
  const rest = Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('FAKETIME')));
  return { ...rest, LD_PRELOAD: preload || undefined };
}

export async function startRedis(): Promise<TestRedis> {
  const env = withoutFaketime(process.env);
  const probe = spawnSync('redis-server', ['--version'], { env, timeout: 10_000, encoding: 'utf8' });
  if (probe.error && 'code' in probe.error && probe.error.code === 'ENOENT') {
    throw new Error(
      'redis-server is not installed: the scale tests need it (apt-get install redis-server; .ci/run installs it)',
    );
  }
  if (probe.error || probe.status !== 0) {
    // Installed but hung (killed at the timeout) or failed: say so, with what it printed, not "not installed".
    const said = `${probe.stdout}${probe.stderr}`.trim().slice(-300);
    const how = probe.signal
      ? `did not answer within 10 s (killed by ${probe.signal})`
      : `failed (${probe.error?.message ?? `exit ${probe.status}`})`;
    throw new Error(
      `redis-server --version ${how}${said ? `: ${said}` : ''}; check the redis-server package and LD_PRELOAD`,
    );
  }
  const port = await freePort();
  const child: ChildProcess = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--requirepass',
      REDIS_PASSWORD,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`redis-server did not start on port ${port}: ${output.slice(-500)}`)),
      10_000,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code}: ${output.slice(-500)}`));
    });
  });
  child.stdout?.removeAllListeners('data');
  child.stderr?.removeAllListeners('data');
  child.removeAllListeners('exit');
  return {
    url: `redis://:${REDIS_PASSWORD}@127.0.0.1:${port}`,
    password: REDIS_PASSWORD,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
