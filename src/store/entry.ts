/**
 * The one place the commands meet the store: before a command runs, an output that is a store URL
 * (`--output s3://bucket/prefix`, PERKS_OUTPUT) becomes a session with a local working copy, brought up to
 * date, which the command gets as its Output's folder (store/lazy.ts: `argv.resolvedOutput`); after it, what it changed is
 * published. Nothing is written back into the command line or the environment.
 * A plain folder changes nothing: no store code runs, no request is made.
 */
import { ConfigError, ExitCode, UserFacingError } from '../shared/exit-codes.js';
import { now } from '../shared/clock.js';
import { redact } from '../shared/redact.js';
import type { OutputHooks } from '../shared/output-hooks.js';
import { debugWanted, type Config, type OutputSetting } from '../config/index.js';
import { COMMANDS } from './layout.js';
import { StoreSession } from './session.js';
import { parseStoreUrl } from './url.js';

/**
 * Before the command: a store output (a URL, `setting.value`) becomes its session, whose working copy is
 * brought up to date; or it is refused, one line and an exit code. Undefined for a command without an output.
 * `settings`: the command's settings, parsed once for the whole command (src/cli.ts), read only when needed.
 */
export async function resolveOutput(
  command: string,
  setting: OutputSetting,
  settings: () => Config,
): Promise<StoreSession | undefined> {
  const source = setting.source === '--output' ? '--output' : 'PERKS_OUTPUT';
  try {
    const store = parseStoreUrl(setting.value, source);
    if (command === 'demo')
      throw new ConfigError(
        `${source}=${store.url}: the demo writes a local folder; give a folder, or use perks run against the store`,
      );
    if (!(command in COMMANDS)) return undefined; // the sandbox: no output
    const config = settings();
    const session = await StoreSession.open(store, command, {
      settings: config,
      redisUrl: config.redisUrl,
      leaseTtlMs: config.storeLeaseSeconds * 1000,
      checkpoints: { seconds: config.storeCheckpointSeconds, mb: config.storeCheckpointMb },
      onLeaseLost: leaseLost,
    });
    return session;
  } catch (err) {
    fail(err);
  }
}

/** The stages' moments of durability reaching the store (shared/output-hooks.ts), part of the resolved output. */
export function storeHooks(session: StoreSession): OutputHooks {
  return {
    checkpoint: async () => {
      await session.publish();
    },
    journalWritten: (file) => session.wal.flush(file),
    progressMade: (bytes) => session.progress(bytes),
  };
}

/** After the command: publish what it changed (unless a publish already failed), release the store. */
export async function finishOutput(session: StoreSession): Promise<void> {
  try {
    await session.publish();
  } catch (err) {
    report(err);
  } finally {
    await session.close().catch((err: unknown) => report(err));
    process.stderr.write(storeLine(session));
  }
}

/**
 * One line on what moved: JSON off a terminal (like the progress events), a sentence on one. Its keys are
 * snake_case, as every JSON the CLI prints (`changed_bytes`, `bytes_up`, `bytes_down`; camelCase until issue 42).
 */
function storeLine(session: StoreSession): string {
  const c = session.client.counters;
  const published = session.publishes;
  const event = {
    at: now().toISOString(), // the program's clock, as every other event line
    event: 'store',
    store: session.client.store.url,
    generation: published.at(-1)?.generation,
    pulled: session.pulled,
    published: {
      files: published.reduce((n, p) => n + p.files, 0),
      changed_bytes: published.reduce((n, p) => n + p.changedBytes, 0),
      removed: published.reduce((n, p) => n + p.removed, 0),
    },
    requests: c.requests,
    bytes_up: c.bytesUp,
    bytes_down: c.bytesDown,
  };
  if (!process.stderr.isTTY) return `${JSON.stringify(event)}\n`;
  const requests = Object.values(c.requests).reduce((a, b) => a + b, 0);
  const generation = event.generation ? ` as generation ${event.generation}` : '';
  return (
    `store ${event.store}: pulled ${event.pulled.files} files (${event.pulled.bytes} bytes), ` +
    `published ${event.published.files} files${generation}; ` +
    `${requests} requests, ${c.bytesUp} bytes up, ${c.bytesDown} down\n`
  );
}

/**
 * The lease's heartbeat found it taken by another run: this one stops at once (as a kill would: nothing
 * uncommitted counts, the copy is reset by the next command), saying so, exit 5.
 */
function leaseLost(message: string): void {
  process.stderr.write(`perks: ${redact(message)}\n`);
  process.exit(ExitCode.locked);
}

function report(err: unknown): void {
  const code = err instanceof UserFacingError ? err.exitCode : ExitCode.failed;
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`perks: ${err instanceof UserFacingError ? '' : 'failed: '}${redact(message)}\n`);
  if (debugWanted() && err instanceof Error && err.stack) process.stderr.write(`${redact(err.stack)}\n`);
  // what the command did was not (all) committed: the publish's failure is the outcome
  process.exitCode = code;
}

function fail(err: unknown): never {
  report(err);
  process.exit(process.exitCode ?? ExitCode.failed);
}
