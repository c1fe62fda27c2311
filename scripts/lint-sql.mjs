#!/usr/bin/env node
// Checks the SQL of sql/ against its conventions (docs/dev/sql-style.md): the header every file opens with,
// the columns and tests it names against the columns the model really has, and the layout of the query.
// The header is read by the project's own parser and the columns come from building every model over an
// empty lake in memory (as `perks models` does), so what is checked is what the build reads.
// Prints one line per finding, `file:line: rule: what`, and exits 1 when there is any.
// Usage: node scripts/lint-sql.mjs [SQL_DIR]   (default: the repository's sql/)
import { register } from 'tsx/esm/api';

register();
const { readProject, DEFAULT_SQL_DIR } = await import('../src/transform/models/model-files.ts');
const { describeModels } = await import('../src/transform/warehouse/describe-models.ts');

const MAX_LINE = 120;
/** Each layer's file-name prefix (the file name is the model name). */
const PREFIX = { staging: 'stg_', intermediate: 'int_', writeback: 'writeback_' };
/** Layers whose every output column must be named in `columns:` (every model's: the data dictionary describes them all). */
const DOCUMENTED = new Set(['staging', 'intermediate', 'marts', 'writeback']);

const findings = [];
const report = (file, line, rule, what) => findings.push(`${file}:${line}: ${rule}: ${what}`);

const sqlDir = process.argv[2] ?? DEFAULT_SQL_DIR;
const project = readProject(sqlDir);
const columnsOf = new Map((await describeModels(sqlDir)).map((d) => [d.name, d.columns.map((c) => c.name)]));

for (const model of project.models) checkModel(model);
for (const test of project.tests) checkSingularTest(test);
for (const file of [...project.models, ...project.tests]) checkLayout(file);

if (findings.length) {
  const order = (f) => f.replace(/:(\d+):/, (_, n) => `:${n.padStart(6, '0')}:`);
  process.stdout.write(`${findings.sort((a, b) => order(a).localeCompare(order(b))).join('\n')}\n`);
  process.stderr.write(`lint-sql: ${findings.length} finding(s) in sql/ (conventions: docs/dev/sql-style.md)\n`);
  process.exit(1);
}
process.stdout.write(
  `lint-sql: ${project.models.length} models and ${project.tests.length} tests follow docs/dev/sql-style.md\n`,
);

function checkModel({ name, layer, file, header, sql }) {
  const line = (text) => lineOf(sql, text);
  if (!header.description) report(file, 1, 'header', 'opens with no description of what one row means');
  if (!header.grain) report(file, 1, 'header', 'has no `-- grain:` line');
  if (!header.key?.length) report(file, 1, 'header', 'has no `-- key:` line');
  const prefix = PREFIX[layer];
  if (prefix && !name.startsWith(prefix)) report(file, 1, 'file-name', `a model of sql/${layer}/ is named ${prefix}…`);
  const actual = columnsOf.get(name) ?? [];
  const has = new Set(actual);
  for (const column of header.key ?? [])
    if (!has.has(column)) report(file, line('-- key:'), 'key', `names ${column}, which the model has no column of`);
  for (const column of Object.keys(header.columns))
    if (!has.has(column)) report(file, line(`--   ${column}:`), 'columns', `documents ${column}, which is no column`);
  if (DOCUMENTED.has(layer)) {
    const undocumented = actual.filter((c) => !(c in header.columns));
    if (undocumented.length)
      report(
        file,
        line('-- columns:'),
        'columns',
        `every ${layer} column is documented; missing ${undocumented.join(', ')}`,
      );
  }
  for (const spec of header.tests) {
    const named =
      spec.kind === 'accepted_values' ? [spec.column] : spec.kind === 'relationships' ? spec.columns : spec.columns;
    for (const column of named)
      if (!has.has(column))
        report(file, line(`${spec.kind}:`), 'tests', `${spec.kind} names ${column}, which is no column`);
    if (spec.kind === 'relationships') {
      const target = columnsOf.get(spec.toModel);
      if (!target)
        report(file, line(`-> ${spec.toModel}`), 'tests', `relationships point at ${spec.toModel}, no model`);
      else
        for (const column of spec.toColumns)
          if (!target.includes(column))
            report(file, line(`-> ${spec.toModel}`), 'tests', `${spec.toModel} has no column ${column}`);
    }
  }
}

function checkSingularTest({ file, header, sql }) {
  if (!header.description) report(file, 1, 'header', 'opens with no description of what a returned row means');
  if (!header.model) report(file, 1, 'header', 'has no `-- model:` line naming the model it checks');
  else if (!columnsOf.has(header.model))
    report(file, lineOf(sql, '-- model:'), 'header', `names model ${header.model}, which does not exist`);
}

/** Layout: lowercase, 4-space indentation, no tabs or trailing blanks, lines up to MAX_LINE, CTEs `name as (` … `),`. */
function checkLayout({ file, sql }) {
  const lines = sql.split('\n');
  if (lines.at(-1) === '') lines.pop();
  else report(file, lines.length, 'layout', 'the file does not end with a newline');
  let inQuery = false;
  let ctes = 0;
  for (const [i, text] of lines.entries()) {
    const n = i + 1;
    if (text.includes('\t')) report(file, n, 'layout', 'a tab (indent with 4 spaces)');
    if (/\s$/.test(text)) report(file, n, 'layout', 'trailing whitespace');
    if (text.length > MAX_LINE) report(file, n, 'layout', `${text.length} characters, more than ${MAX_LINE}`);
    const code = codeOf(text);
    if (!inQuery && code.trim() === '') continue;
    inQuery = true;
    const indent = /^ */.exec(text)[0].length;
    if (code.trim() !== '' && indent % 4 !== 0)
      report(file, n, 'layout', `indented ${indent} spaces, not a multiple of 4`);
    if (/[A-Z]/.test(code))
      report(
        file,
        n,
        'lowercase',
        'keywords, functions, types and names are lowercase (quote a name spelt in capitals)',
      );
    if (code.includes(';')) report(file, n, 'layout', 'a semicolon: a model is one query, the runner ends it');
    if (/^with\b/.test(code) && !/^with [a-z_][a-z0-9_]* as \($/.test(code))
      report(file, n, 'cte', 'the first CTE opens on the `with` line: `with <name> as (`');
    if (/^[a-z_][a-z0-9_]* as \($/.test(code) || /^with [a-z_][a-z0-9_]* as \($/.test(code)) {
      ctes += 1;
      if (ctes > 1 && !/^\),?$/.test(codeOf(previousCode(lines, i))))
        report(file, n, 'cte', 'a CTE follows the `),` of the one before');
    }
    if (/^\S.* as \($/.test(code) && !/^(with )?[a-z_][a-z0-9_]* as \($/.test(code))
      report(file, n, 'cte', 'a CTE opens at the start of its line: `<name> as (`');
    if (/^\s+\),$/.test(code)) report(file, n, 'cte', 'a CTE closes with `),` at the start of the line');
  }
}

/** The line without its comment, its string literals and its quoted names (what the layout rules read). */
function codeOf(text) {
  return text
    .replace(/'(?:[^']|'')*'/g, "''")
    .replace(/"[^"]*"/g, '""')
    .replace(/--.*$/, '')
    .replace(/\s+$/, '');
}

function previousCode(lines, i) {
  for (let j = i - 1; j >= 0; j--) if (codeOf(lines[j]).trim() !== '') return lines[j];
  return '';
}

function lineOf(sql, text) {
  const at = sql.split('\n').findIndex((l) => l.includes(text));
  return at < 0 ? 1 : at + 1;
}
