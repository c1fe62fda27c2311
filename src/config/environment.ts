/**
 * What the program reads of its environment before or beside the settings (loadConfig parses the rest):
 * where the output is (the one reader of PERKS_OUTPUT: the middleware and loadConfig both ask outputSetting), and
 * whether a failure shows its stack.
 * Kept apart from the schema so that reading them never stops on an unrelated setting.
 */
import { z } from 'zod';
import { ConfigError } from '../shared/exit-codes.js';
import { DEFAULTS } from './defaults.js';
import { STAGE_SETTINGS } from './stage-settings.js';

export interface OutputSetting {
  /** As given: a folder, or a store's URL (s3://bucket/prefix). */
  readonly value: string;
  /** What a message names: the flag or the variable that gave it. */
  readonly source: '--output' | 'PERKS_OUTPUT' | 'default';
  /**
   * Why a command with an output must not run on it: PERKS_OUTPUT set but empty under CI (a workflow's
   * `PERKS_OUTPUT: ${{ vars.PERKS_STORE_URL }}` with the variable undefined), where the default folder is
   * thrown away with the runner and a green job would keep nothing.
   */
  readonly refusal?: string;
}

/** Whether this runs under a CI service (CI=true, as GitHub Actions, GitLab, CircleCI… set it). */
export function underCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = (env.CI ?? '').trim().toLowerCase();
  return v !== '' && v !== 'false' && v !== '0';
}

/** The output: --output, else PERKS_OUTPUT, else the default folder. */
export function outputSetting(flag: unknown, env: NodeJS.ProcessEnv = process.env): OutputSetting {
  if (typeof flag === 'string') return { value: flag, source: '--output' };
  if (env.PERKS_OUTPUT) return { value: env.PERKS_OUTPUT, source: 'PERKS_OUTPUT' };
  if (env.PERKS_OUTPUT === '' && underCi(env))
    return {
      value: DEFAULTS.output,
      source: 'default',
      refusal:
        `PERKS_OUTPUT is empty under CI (CI=${env.CI}): the variable it is set from is not defined ` +
        `(the shipped workflows set it from vars.PERKS_STORE_URL), and ${DEFAULTS.output} on a CI runner is ` +
        `thrown away with it: define that variable (the store, s3://bucket/prefix), or set PERKS_OUTPUT to a ` +
        `folder explicitly`,
    };
  return { value: DEFAULTS.output, source: 'default' };
}

/**
 * The output directory: any name a file system takes, `[ ] ? * { }`, quotes, spaces and unicode included
 * (DuckDB reads them literally, src/lake/paths.ts), except what DuckDB cannot read back: a comma (its
 * file_search_path, which the warehouse's lake views resolve through, is a comma-separated list) and a
 * backslash (an escape in its globs); and a folder name above the file system's 255 bytes (ENAMETOOLONG).
 */
const outputDir = z
  .string()
  .min(1, 'must not be empty')
  // eslint-disable-next-line no-control-regex -- control characters are exactly what this refuses
  .refine((p) => !/[\x00-\x1f\x7f]/.test(p), 'expected no control characters (a newline, a tab…)')
  .refine((p) => !p.includes(','), 'expected no comma: DuckDB reads the lake through a comma-separated search path')
  .refine((p) => !p.includes('\\'), 'expected no backslash: DuckDB reads it as an escape')
  .refine(
    (p) => p.split('/').every((name) => Buffer.byteLength(name) <= 255),
    'a folder name is longer than 255 bytes, the most a file system takes: choose a shorter one',
  )
  .refine(
    (p) => Buffer.byteLength(p) <= 3000,
    'expected a path of at most 3000 bytes (the lake adds its own folders below it)',
  );

/**
 * The output's folder checked (outputDir above): `path` as given, or a store's working copy; a bad one is one
 * line naming what gave it (`--output=…` for the flag and a store's copy, `PERKS_OUTPUT=…` otherwise), exit 2.
 */
export function checkedOutputPath(path: string, source: OutputSetting['source']): string {
  const checked = outputDir.safeParse(path);
  if (checked.success) return checked.data;
  const named = source === '--output' ? '--output' : 'PERKS_OUTPUT';
  throw new ConfigError(`${named}=${JSON.stringify(path)} is invalid: ${checked.error.issues[0].message}`);
}

/**
 * The pinned AWS SDK supports Node 20; its warning about releases after January 2027 would be printed on every
 * command's stderr. The SDK reads this variable itself: set here, where the program meets its environment.
 */
export function quietAwsSdk(env: NodeJS.ProcessEnv = process.env): void {
  env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
}

/**
 * PERKS_DEBUG: a failure's stack follows its line on stderr (redacted). Read through the schema's own field,
 * alone: the failure being reported may be the configuration's.
 */
export function debugWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env.PERKS_DEBUG;
  return v !== undefined && v !== '' && STAGE_SETTINGS.debug.parse(v);
}
