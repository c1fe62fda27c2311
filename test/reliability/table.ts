/** The suite's result rows and the one table it prints: scenario, runs, outcome, figure. */
export interface Row {
  scenario: string;
  /** How many runs (or cases, or generated inputs) the figure is over. */
  runs: number;
  ok: boolean;
  figure: string;
  /** What went wrong, one line each, when not ok (printed under the table). */
  problems?: string[];
}

export interface ScenarioOptions {
  /** The larger counts of `npm run reliability -- --long`. */
  long: boolean;
  /** Progress lines (the suite prints them on stderr; tests stay quiet). */
  log: (line: string) => void;
  /** Seed of the random moments and splits, printed so a failure can be replayed. */
  seed: number;
}

export type Scenario = (options: ScenarioOptions) => Promise<Row[]>;

/**
 * The entries of `all` a subset names (`names`), in the subset's order; every entry when none is given. A name
 * that selects nothing, or an empty subset, is an error, not a smaller run: a misspelt case in a test's subset
 * would otherwise be dropped without a word and the test pass on the rest.
 */
export function selectByName<T>(
  what: string,
  all: readonly T[],
  nameOf: (t: T) => string,
  names?: readonly string[],
): T[] {
  if (!names) return [...all];
  const known = all.map(nameOf);
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length || !names.length)
    throw new Error(
      `${names.length ? `unknown ${what} ${unknown.map((n) => JSON.stringify(n)).join(', ')}` : `no ${what} named`}: a subset names some of ${known.map((n) => JSON.stringify(n)).join(', ')}`,
    );
  return names.map((n) => all.find((t) => nameOf(t) === n)!);
}

export function row(scenario: string, runs: number, problems: string[], figure: string): Row {
  return { scenario, runs, ok: problems.length === 0, figure, ...(problems.length ? { problems } : {}) };
}

export function formatTable(rows: Row[]): string {
  const head = ['scenario', 'runs', 'outcome', 'figure'];
  const cells = rows.map((r) => [r.scenario, String(r.runs), r.ok ? 'pass' : 'FAIL', r.figure]);
  const width = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: string[]) =>
    `| ${c.map((v, i) => (i === 1 ? v.padStart(width[i]) : v.padEnd(width[i]))).join(' | ')} |`;
  const rule = `|${width.map((w, i) => (i === 1 ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  const out = [line(head), rule, ...cells.map(line)];
  for (const r of rows) for (const p of r.problems ?? []) out.push(`  ${r.scenario}: ${p}`);
  return `${out.join('\n')}\n`;
}

/** The rows of a quiet pass and of a pass under load side by side (same scenarios, same order). */
export function formatPairTable(quiet: Row[], loaded: Row[]): string {
  const head = ['scenario', 'runs', 'quiet', 'under load', 'figure (quiet)', 'figure (under load)'];
  const outcome = (r?: Row) => (r ? (r.ok ? 'pass' : 'FAIL') : '-');
  const cells = quiet.map((q, i) => {
    const l = loaded[i];
    return [q.scenario, `${q.runs}/${l?.runs ?? '-'}`, outcome(q), outcome(l), q.figure, l?.figure ?? '-'];
  });
  const width = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: string[]) =>
    `| ${c.map((v, i) => (i === 1 ? v.padStart(width[i]) : v.padEnd(width[i]))).join(' | ')} |`;
  const rule = `|${width.map((w, i) => (i === 1 ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  const out = [line(head), rule, ...cells.map(line)];
  for (const [label, rows] of [
    ['quiet', quiet],
    ['under load', loaded],
  ] as const)
    for (const r of rows) for (const p of r.problems ?? []) out.push(`  ${r.scenario} (${label}): ${p}`);
  return `${out.join('\n')}\n`;
}
