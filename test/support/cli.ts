/**
 * The `perks` command line as a child process: a clean environment (PATH, HOME, TMPDIR and what the
 * caller gives, never the developer's own PERKS_* values), its output, exit code or signal, and time.
 */
import { spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { resolve } from 'node:path';
import { compiledCli } from './compiled-cli.js';

export const ROOT = resolve(import.meta.dirname, '..', '..');
/** The CLI the tests start: the sources compiled once (compiled-cli.ts); bin/perks.mjs runs them through tsx. */
export const PERKS = compiledCli(ROOT);

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

export interface RunningCli {
  child: ChildProcess;
  /** Resolves when the process has exited (killed or not). */
  done: Promise<CliResult>;
  /** Resolves when stderr or stdout has shown `text` (e.g. a progress event), or the process ended. */
  saw(text: string): Promise<boolean>;
  /** What it has written so far. */
  text(): { stdout: string; stderr: string };
}

export function baseEnv(extra: Record<string, string> = {}): Record<string, string> {
  // libfaketime's variables too: a suite run under `faketime` (README) moves the machine's clock, which its
  // commands share, as they do on a machine whose date is that day
  const faked = Object.keys(process.env).filter((k) => k.startsWith('FAKETIME'));
  const keep = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'PERKS_NOW', 'LD_PRELOAD', ...faked];
  const env: Record<string, string> = {};
  for (const k of keep) if (process.env[k] !== undefined) env[k] = process.env[k]!;
  return { ...env, ...extra };
}

/**
 * Starts `perks args…` with a clean environment and `env`; `inheritEnv`: this process's environment and `env`
 * over it instead (the scale tests and the bench, whose workers share settings through it).
 */
export function startCli(
  args: string[],
  env: Record<string, string>,
  options: { cwd?: string; inheritEnv?: boolean; stdin?: string } = {},
): RunningCli {
  const started = performance.now();
  const child = spawn(process.execPath, [PERKS, ...args], {
    cwd: options.cwd ?? ROOT,
    env: options.inheritEnv ? { ...process.env, ...env } : baseEnv(env),
    // stdin: what the caller gives (`perks sql -`), else none
    stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  }) as ChildProcessByStdio<Writable | null, Readable, Readable>;
  if (options.stdin !== undefined) {
    child.stdin!.on('error', () => undefined); // a command that exits before reading it all: EPIPE, not a crash
    child.stdin!.end(options.stdin);
  }
  let stdout = '';
  let stderr = '';
  const waiters: { text: string; resolve: (seen: boolean) => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      if (stdout.includes(w.text) || stderr.includes(w.text)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(true);
      }
    }
  };
  child.stdout.on('data', (d) => ((stdout += d), check()));
  child.stderr.on('data', (d) => ((stderr += d), check()));
  const done = new Promise<CliResult>((resolveDone) => {
    child.once('close', (code, signal) => {
      for (const w of waiters.splice(0)) w.resolve(false);
      resolveDone({ code, signal, stdout, stderr, ms: performance.now() - started });
    });
  });
  const saw = (text: string) =>
    new Promise<boolean>((res) => {
      if (stdout.includes(text) || stderr.includes(text)) return res(true);
      if (child.exitCode !== null || child.signalCode !== null) return res(false);
      waiters.push({ text, resolve: res });
    });
  return { child, done, saw, text: () => ({ stdout, stderr }) };
}

/** Runs a command to its end (killed after `timeoutMs`, default 120 s). */
export async function runCli(
  args: string[],
  env: Record<string, string>,
  options: { cwd?: string; timeoutMs?: number; inheritEnv?: boolean; stdin?: string } = {},
): Promise<CliResult> {
  const running = startCli(args, env, options);
  const timer = setTimeout(() => running.child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
  try {
    return await running.done;
  } finally {
    clearTimeout(timer);
  }
}

/** The non-empty lines a command wrote to stderr. */
export const stderrLines = (r: CliResult) => r.stderr.split('\n').filter((l) => l.trim() !== '');

/** `perks extract …` to its end, with this process's environment and `env` over it (the scale tests, the bench). */
export function perksExtract(args: string[], env: Record<string, string>): Promise<CliResult> {
  return startCli(['extract', ...args], env, { inheritEnv: true }).done;
}
