/**
 * The command line's hooks: where the output is, resolved once per command into a value the handlers get
 * (`argv.resolvedOutput`). The store's code (and the AWS SDK) is loaded only for an output that is a store URL: a local
 * output starts as fast as before and makes no store request.
 */
import { statSync, type Stats } from 'node:fs';
import { outputSetting, type Config, type OutputSetting } from '../config/index.js';
import { ConfigError } from '../shared/exit-codes.js';
import type { StoreSession } from './session.js';
import { LOCAL_OUTPUT_HOOKS, type OutputHooks } from '../shared/output-hooks.js';
import { COMMANDS } from './layout.js';
import { isStoreUrl } from './url.js';

/** The output of the command under way: the folder it reads and writes, and the store session behind it, if any. */
export interface OutputLocation {
  /** A local folder as given (./output), or a store's working copy (or, for `perks check`, the store's URL). */
  readonly dir: string;
  /** The store session when the output is an s3:// URL: the copy is pulled, and published after the command. */
  readonly store?: StoreSession;
  /** The moments the stages make their work durable (shared/output-hooks.ts): the store's, or a local folder's no-ops. */
  readonly hooks: OutputHooks;
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
  if (!isStoreUrl(setting.value)) return { dir: setting.value, hooks: LOCAL_OUTPUT_HOOKS };
  loaded = await import('./entry.js');
  const store = await loaded.resolveOutput(command, setting, settings);
  if (!store) return { dir: setting.value, hooks: LOCAL_OUTPUT_HOOKS };
  // `perks check` reads the store itself and commits nothing: its hooks stay no-ops
  return command === 'check'
    ? { dir: setting.value, store, hooks: LOCAL_OUTPUT_HOOKS }
    : { dir: store.copy, store, hooks: loaded.storeHooks(store) };
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
export async function finishOutputLazily(output: OutputLocation | undefined): Promise<void> {
  if (output?.store) await loaded?.finishOutput(output.store);
}

/**
 * An output no command should run on, refused (exit 2) before any work: PERKS_OUTPUT empty under CI
 * (environment.ts), or a local path that names a file, for every command with an output (extract refused it
 * at its first write; check, status, sql and report read it as an empty output).
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
}
