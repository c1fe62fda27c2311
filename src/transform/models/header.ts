/**
 * The header comment a model file opens with: what one row is, the key, how it is materialized, and its
 * data tests. Plain SQL comments, so the file stays a query an analyst can paste anywhere:
 *
 *   -- Monthly revenue per group, currency and order status, for finance.
 *   -- grain: one row per organisation_group_id, month, order_currency, order_status
 *   -- key: organisation_group_id, month, order_currency, order_status
 *   -- materialized: table        (or view, or ephemeral: a temporary table of the build, never stored)
 *   -- incremental: month on organisation_group_id, order_date   (built by intervals: incremental.ts)
 *   -- incremental: user on organisation_group_id, user_id = identifier_value   (built by users: by-user.ts)
 *   -- group-wide: group_currency   (a by-user model's CTE computed over its whole group: see ByUser)
 *   -- lookup: stg_user_emails(email) = lower(trim(email))   (an upstream model joined row by row, see Lookup)
 *   -- edges: stg_orders   (a month's rows also read the days beside it: see Incremental.edges)
 *   -- intervals: month on organisation_group_id, window_start   (its rows fall in a group's months: see Intervals)
 *   -- latest: lake_users   (reads only each group's latest snapshot of the stream: latest-snapshots.ts)
 *   -- columns:
 *   --   orders: orders placed in the month (every status), a long meaning
 *   --     continued on a line indented deeper
 *   -- tests:
 *   --   unique: organisation_group_id, month, order_currency, order_status
 *   --   not_null: organisation_group_id, month
 *   --   accepted_values: order_currency in GBP, EUR
 *   --   relationships: organisation_group_id, user_id -> stg_users
 *   --   relationships: user_id -> stg_users(user_id)
 *
 * A singular test file (sql/tests/) names the model it checks (`-- model: revenue_monthly`) and may say
 * `-- severity: warn`: its offending rows are reported and the build goes on (exit 4), as dbt's warn severity.
 */
import { ModelGraphError } from '../errors.js';

export type TestSpec =
  | { kind: 'unique'; columns: string[] }
  | { kind: 'not_null'; columns: string[] }
  | { kind: 'accepted_values'; column: string; values: string[] }
  | { kind: 'relationships'; columns: string[]; toModel: string; toColumns: string[] };

/**
 * table: stored in the warehouse; view: stored as a query; ephemeral: a temporary table that only this
 * build's later models read (what must not be stored, such as the emails that attribute orders to users).
 */
export type Materialization = 'table' | 'view' | 'ephemeral';
export type Severity = 'error' | 'warn';
const MATERIALIZATIONS: readonly string[] = ['table', 'view', 'ephemeral'];

/**
 * `intervals: month on <group column>, <time column>`: each row belongs to a group's month
 * (`date_trunc('month', <time column>)`). A model built by intervals downstream compares this one month by
 * month and reads only its dirty months of it. An `incremental:` line implies it.
 */
export interface Intervals {
  grain: 'month';
  group: string;
  time: string;
}

/**
 * `incremental: month on <group column>, <time column>`: the model is built by intervals, a group's month,
 * from that group and month alone: of the lake partitions (a model read from the lake), or of its upstream
 * models' rows in that interval (a model built from models that declare their intervals); other upstream
 * models are read whole (src/transform/incremental/incremental.ts says when an interval is dirty and what is checked).
 */
export interface Incremental extends Intervals {
  /** Upstream models this one joins row by row on a key (see Lookup). */
  lookups: Lookup[];
  /**
   * `edges: <model>, …`: upstream models (each declares its intervals) of which a month's rows also read the last
   * day of the month before and the first day of the month after (the reconciliation: a local day at a month's
   * edge is partly in the UTC month beside it). A change on a month's first day of such a model dirties the month
   * before too, on its last day the month after, and a dirty month is rebuilt seeing those two days of it.
   */
  edges: string[];
}

/**
 * `lookup: <model>(<column>) = <expression>[, reading <columns>]`: the incremental model joins `<model>` on
 * `<column>` equal to the expression (e.g. the users' emails on the orders' email), and depends on it only so.
 * A model joined more than once (a month's state and its neighbours': reconciliation_platform) has one line per
 * join, each on the same column and reading the same columns.
 * The expression is over the lake rows (a model read from the lake) or over the model's own rows (a model
 * built from models). A change to some of its rows (of the columns read, all when not said) then dirties only
 * the months whose rows match a changed key, not the group.
 */
export interface Lookup {
  model: string;
  column: string;
  expression: string;
  /** The columns of `model` the incremental model reads (absent: all of them). */
  reads?: string[];
}

/**
 * `incremental: user on <group column>, <user column>[ = <own column>]`: the model is built by users, a user's rows
 * from that user's rows of its upstream models alone (by-user.ts): only the users whose upstream rows changed since
 * the model's last build are computed again. The user column is the upstream models'; the model's own rows name
 * the user in `<own column>` (compared as text; the same column when not said).
 */
export interface ByUser {
  group: string;
  user: string;
  own: string;
  /**
   * `group-wide: <cte>, …`: CTEs of the model's SQL whose rows are facts of a whole group (a group's majority
   * currency): computed over every user, kept per group; a group whose rows of them changed is rebuilt whole.
   */
  groupWide: string[];
}

export interface Header {
  description: string;
  grain?: string;
  key?: string[];
  materialized?: Materialization;
  incremental?: Incremental;
  byUser?: ByUser;
  intervals?: Intervals;
  /**
   * `latest: <lake view>, …`: the model reads only the latest snapshot of each group of these snapshot streams
   * (its rows would be the same without the older snapshots); the build then reads no other (latest-snapshots.ts).
   */
  latest?: string[];
  /** Singular test files (sql/tests/) name the model they check. */
  model?: string;
  /** Singular test files: error (the default) stops the build; warn reports and goes on. */
  severity?: Severity;
  tests: TestSpec[];
  /** What each column means (the `columns:` block): the data dictionary prints it beside the type. */
  columns: Record<string, string>;
}

const list = (s: string) =>
  s
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
const unquote = (s: string) => s.replace(/^'(.*)'$/, '$1').replace(/^"(.*)"$/, '$1');

/** A header as its lines are read: the lookups and description lines gathered, the block a line continues. */
interface Draft {
  header: Header;
  /** The `lookup:` lines so far: the array the `incremental:` value holds, whatever their order. */
  lookups: Lookup[];
  /** The `edges:` models so far, as the lookups. */
  edges: string[];
  /** The `group-wide:` CTEs so far, as the lookups. */
  groupWide: string[];
  description: string[];
  block?: 'tests' | 'columns';
  /** The column a deeper-indented line of the `columns:` block continues. */
  column?: string;
}

/** How each `<field>: <value>` line sets the header (`tests:` and `columns:` open a block instead). */
const FIELDS: Record<string, (value: string, draft: Draft, file: string) => void> = {
  grain: (value, { header }) => (header.grain = value),
  key: (value, { header }) => (header.key = list(value)),
  model: (value, { header }) => (header.model = value),
  incremental: (value, { header, lookups, edges, groupWide }, file) => {
    const byUser = /^user\s+on\s+(\w+)\s*,\s*(\w+)(?:\s*=\s*(\w+))?$/i.exec(value);
    if (byUser) header.byUser = { group: byUser[1], user: byUser[2], own: byUser[3] ?? byUser[2], groupWide };
    else header.incremental = { ...parseIntervals('incremental', value, file), lookups, edges };
  },
  'group-wide': (value, { groupWide }) => groupWide.push(...list(value)),
  intervals: (value, { header }, file) => (header.intervals = parseIntervals('intervals', value, file)),
  lookup: (value, { lookups }, file) => lookups.push(parseLookup(value, file)),
  edges: (value, { edges }) => edges.push(...list(value)),
  latest: (value, { header }) => (header.latest = list(value)),
  severity: (value, { header }, file) => {
    if (value !== 'error' && value !== 'warn')
      throw new ModelGraphError(`${file}: severity must be error or warn, not "${value}"`);
    header.severity = value;
  },
  materialized: (value, { header }, file) => {
    if (!MATERIALIZATIONS.includes(value))
      throw new ModelGraphError(`${file}: materialized must be table, view or ephemeral, not "${value}"`);
    header.materialized = value as Materialization;
  },
};
const FIELD_LINE = new RegExp(`^(${[...Object.keys(FIELDS), 'tests', 'columns'].join('|')}):\\s*(.*)$`);

/** Parses the leading `--` lines of a model file; `file` only names the file in errors. */
export function parseHeader(sql: string, file: string): Header {
  const draft: Draft = {
    header: { description: '', tests: [], columns: {} },
    lookups: [],
    edges: [],
    groupWide: [],
    description: [],
  };
  for (const text of commentLines(sql)) parseLine(draft, text, file);
  const { header, lookups, edges, groupWide } = draft;
  header.description = draft.description.join(' ').trim();
  if (header.incremental) {
    const { grain, group, time } = header.incremental;
    header.intervals = { grain, group, time };
  }
  for (const [i, l] of lookups.entries()) {
    const first = lookups.find((o) => o.model === l.model)!;
    if (lookups.indexOf(first) < i && (first.column !== l.column || String(first.reads) !== String(l.reads)))
      throw new ModelGraphError(
        `${file}: the lookups of ${l.model} join it on different columns or read different ones; ` +
          `join every lookup of a model on the same column, reading the same columns`,
      );
  }
  if (lookups.length && !header.incremental)
    throw new ModelGraphError(`${file}: a lookup: line belongs to an incremental model (an incremental: line)`);
  if (edges.length && !header.incremental)
    throw new ModelGraphError(`${file}: an edges: line belongs to an incremental model (an incremental: line)`);
  if (groupWide.length && !header.byUser)
    throw new ModelGraphError(
      `${file}: a group-wide: line belongs to a model built by users (an incremental: user on … line)`,
    );
  if (header.incremental && !header.key?.length)
    throw new ModelGraphError(`${file}: an incremental model needs a key: line (its rows are matched by key)`);
  return header;
}

/** The text of the comment lines a file opens with (blank lines passed over), after `--` and one space. */
function commentLines(sql: string): string[] {
  const texts: string[] = [];
  for (const raw of sql.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    if (!line.startsWith('--')) break;
    texts.push(line.replace(/^--\s?/, ''));
  }
  return texts;
}

/** One header line: an indented line of the open block, a `<field>: <value>` line, or the description. */
function parseLine(draft: Draft, text: string, file: string): void {
  const field = FIELD_LINE.exec(text.trim());
  if (draft.block && /^\s+\S/.test(text) && !field) {
    parseBlockLine(draft, text, file);
    return;
  }
  draft.block = undefined;
  draft.column = undefined;
  if (!field) {
    draft.description.push(text.trim());
    return;
  }
  const [, name, value] = field;
  if (name === 'tests' || name === 'columns') draft.block = name;
  else FIELDS[name](value.trim(), draft, file);
}

/** An indented line of the `tests:` block (a test) or of the `columns:` block (a column, or more of its meaning). */
function parseBlockLine(draft: Draft, text: string, file: string): void {
  const { header, column } = draft;
  if (draft.block === 'tests') header.tests.push(parseTest(text.trim(), file));
  else if (/^\s{4,}\S/.test(text) && column) header.columns[column] += ` ${text.trim()}`;
  else draft.column = parseColumn(text.trim(), header.columns, file);
}

function parseLookup(value: string, file: string): Lookup {
  const reading = /^(.*?)\s*,\s*reading\s+(\w+(?:\s*,\s*\w+)*)$/i.exec(value);
  if (reading) return { ...parseLookup(reading[1], file), reads: list(reading[2]) };
  const match = /^(\w+)\((\w+)\)\s*=\s*(.+)$/.exec(value);
  if (!match)
    throw new ModelGraphError(
      `${file}: lookup "${value}" is not understood; expected "<model>(<column>) = <expression>[, reading <columns>]"`,
    );
  return { model: match[1], column: match[2], expression: match[3].trim() };
}

function parseIntervals(name: string, value: string, file: string): Intervals {
  const match = /^month\s+on\s+(\w+)\s*,\s*(\w+)$/i.exec(value);
  if (!match)
    throw new ModelGraphError(
      `${file}: ${name} "${value}" is not understood; expected "month on <group column>, <date column>"` +
        (name === 'incremental' ? ' or "user on <group column>, <user column>[ = <own column>]"' : ''),
    );
  return { grain: 'month', group: match[1], time: match[2] };
}

/** One `<column>: <what it means>` line; returns the column's name. */
function parseColumn(text: string, columns: Record<string, string>, file: string): string {
  const match = /^(\w+):\s*(.+)$/.exec(text);
  if (!match)
    throw new ModelGraphError(`${file}: column line "${text}" is not understood; expected "<column>: <what it means>"`);
  columns[match[1]] = columns[match[1]] ? `${columns[match[1]]} ${match[2].trim()}` : match[2].trim();
  return match[1];
}

function parseTest(text: string, file: string): TestSpec {
  const match = /^(\w+):\s*(.+)$/.exec(text);
  const bad = (expected: string) =>
    new ModelGraphError(`${file}: test "${text}" is not understood; expected ${expected}`);
  if (!match) throw bad('"<kind>: <arguments>"');
  const [, kind, args] = match;
  switch (kind) {
    case 'unique':
    case 'not_null':
      return { kind, columns: list(args) };
    case 'accepted_values': {
      const m = /^(\w+)\s+in\s+(.+)$/i.exec(args);
      if (!m) throw bad('"accepted_values: <column> in <value>, <value>"');
      return { kind, column: m[1], values: list(m[2]).map(unquote) };
    }
    case 'relationships': {
      const m = /^(.+?)\s*->\s*(\w+)\s*(?:\((.+)\))?$/.exec(args);
      if (!m) throw bad('"relationships: <columns> -> <model>[(<columns>)]"');
      const columns = list(m[1]);
      const toColumns = m[3] ? list(m[3]) : columns;
      if (toColumns.length !== columns.length) throw bad('as many columns on both sides of ->');
      return { kind, columns, toModel: m[2], toColumns };
    }
    default:
      throw bad('unique, not_null, accepted_values or relationships');
  }
}
