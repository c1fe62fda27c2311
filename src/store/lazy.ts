/**
 * The command line's hooks: where the output is, resolved once per command into the one Output the handlers get
 * (`argv.resolvedOutput`, src/output). The store's code (and the AWS SDK) is loaded only for an output that is a
 * store URL: a local output starts as fast as before and makes no store request.
 */
import { statSync, type Stats } from 'node:fs';
import { checkedOutputPath, outputSetting, type Config, type OutputSetting } from '../config/index.js';
import { outputAt, type Output } from '../output/index.js';
import { ConfigError } from '../shared/exit-codes.js';
import type { StoreSession } from './session.js';
import { LOCAL_OUTPUT_HOOKS } from '../shared/output-hooks.js';
import { COMMANDS } from './layout.js';
import { isStoreUrl } from './url.js';

/** The output of the command under way, and the store session behind it, if any. */
export interface OutputLocation {
  /** The setting as given (the folder or URL, and the flag or variable it came from). */
  readonly setting: OutputSetting;
  /**
   * What the command's stages are told about where they write: the folder, store or not, the hooks. None for a
   * command that writes nothing there and is given a store's URL: `perks store check` (it probes the bucket
   * itself, from the setting) and the sandbox; a URL is not a folder a stage could write.
   */
  readonly output?: Output;
  /**
   * The store session when the output is an s3:// URL: the copy is pulled, and published after the command
   * (`perks check` and `perks store push` read it; the stages see only the output).
   */
  readonly session?: StoreSession;
}

let loaded: typeof import('./entry.js') | undefined;

/**
 * `--output` (else PERKS_OUTPUT, else the default folder), resolved for `command`: a folder, or a store's working
 * copy. `settings` (the command's, parsed once) is read only for a store, which needs its lease and AWS settings.
 */
export async function resolveOutputLazily(
  command: string,
  flag: unknown,
  settings: () => Config,
): Promise<OutputLocation> {
  const setting = outputSetting(flag);
  if (command in COMMANDS || command === 'demo') refuseUnusable(setting);
  if (!isStoreUrl(setting.value)) return { setting, output: outputAt(setting.value) };
  loaded = await import('./entry.js');
  const session = await loaded.resolveOutput(command, setting, settings);
  // `perks store check` (it probes the bucket itself) and the sandbox: no session, no output
  if (!session) return { setting };
  const url = session.client.store.url;
  // `perks check` reads the store itself and commits nothing: its hooks stay no-ops
  const hooks = command === 'check' ? LOCAL_OUTPUT_HOOKS : loaded.storeHooks(session);
  try {
    checkedOutputPath(session.copy, '--output');
  } catch (err) {
    await loaded.finishOutput(session);
    throw err;
  }
  return { setting, output: outputAt(session.copy, { url, hooks }), session };
}

/** A path's stat, or undefined when it cannot be read (a name too long, say: the settings' check names that). */
function statOrNothing(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** After the command: a store output's changes published, its session closed. */
export async function finishOutputLazily(location: OutputLocation | undefined): Promise<void> {
  if (location?.session) await loaded?.finishOutput(location.session);
}

/**
 * An output no command should run on, refused (exit 2) before any work: PERKS_OUTPUT empty under CI
 * (environment.ts), a local path that names a file, for every command with an output (extract refused it
 * at its first write; check, status, sql and report read it as an empty output), or one DuckDB cannot read
 * back (checkedOutputPath: a comma, a backslash…).
 */
function refuseUnusable(setting: OutputSetting): void {
  if (setting.refusal) throw new ConfigError(setting.refusal);
  const path: string = setting.value;
  if (isStoreUrl(path)) return;
  const found = statOrNothing(path);
  const named: string = setting.source === 'default' ? 'the default output' : setting.source;
  if (found && !found.isDirectory())
    throw new ConfigError(
      `${named}=${setting.value} names a file, not a folder: give a folder (made if missing) or a store URL (s3://bucket/prefix)`,
    );
  checkedOutputPath(path, setting.source);
}
