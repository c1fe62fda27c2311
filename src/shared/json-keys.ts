/**
 * The one key style of the JSON the CLI prints and writes: snake_case at every depth
 * (docs/reference/operations.md, "JSON keys"). The code keeps its objects camelCase; they cross into JSON
 * here, and only here: `snakeKeys` on the way out, `camelKeys` on the way back in (files the CLI reads again:
 * run manifests, `state/build.json`, …), which takes either spelling, so a file an older release wrote in
 * camelCase is still read.
 *
 * Only our own names are renamed: a key that looks like an identifier (`finishedAt`, `finished_at`). Keys that
 * are data (stream names, field paths, model names, group ids, operation ids, a user's meta) are named in the
 * rules and kept as they are.
 */

/**
 * Which keys are data, by path in the code's spelling, dot-separated, `*` for any key of a data map, arrays
 * transparent (`schema.streams`, `schema.streams.*.fields`).
 */
export interface KeyRules {
  /** Maps whose keys are data: the keys are kept, their values follow the rules (path `<map>.*`). */
  dataKeys?: readonly string[];
  /** Values kept whole as they are (a user's meta, an API payload). */
  asIs?: readonly string[];
}

const CAMEL = /^[a-z][a-zA-Z0-9]*$/;
const SNAKE = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/;

/** `finishedAt` → `finished_at`; a key that is not a camelCase identifier is returned as it is. */
export function snakeCase(key: string): string {
  return CAMEL.test(key) ? key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : key;
}

/** `finished_at` → `finishedAt`; a key that is not a snake_case identifier is returned as it is. */
export function camelCase(key: string): string {
  return SNAKE.test(key) ? key.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase()) : key;
}

function renameKeys(value: unknown, rename: (key: string) => string, rules: KeyRules, path: string): unknown {
  if (Array.isArray(value)) return value.map((v) => renameKeys(v, rename, rules, path));
  if (value === null || typeof value !== 'object') return value;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return value; // a Date: JSON writes it
  const data = rules.dataKeys?.includes(path) === true;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const name = data ? '*' : camelCase(key);
    const at = path ? `${path}.${name}` : name;
    out[data ? key : rename(key)] = rules.asIs?.includes(at) ? v : renameKeys(v, rename, rules, at);
  }
  return out;
}

/** `value` with every key of ours in snake_case, at every depth (what the CLI prints or writes). */
export function snakeKeys(value: unknown, rules: KeyRules = {}): unknown {
  return renameKeys(value, snakeCase, rules, '');
}

/** `value` (parsed JSON, in either spelling) with every key of ours in camelCase, the code's spelling. */
export function camelKeys(value: unknown, rules: KeyRules = {}): unknown {
  return renameKeys(value, camelCase, rules, '');
}

/** JSON text of `value` with snake_case keys (`space` as JSON.stringify's). */
export function snakeJson(value: unknown, rules: KeyRules = {}, space?: number): string {
  return JSON.stringify(snakeKeys(value, rules), null, space);
}
