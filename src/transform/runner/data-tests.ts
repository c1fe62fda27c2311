/**
 * Data tests: each is a query that returns the offending rows; zero rows passes. Generic tests come from
 * model headers (unique, not_null, accepted_values, relationships); singular tests are the files of
 * sql/tests/ (e.g. the revenue reconciliation), written as plain queries.
 */
import { quotedIdentifier as id, quotedString as str, type DuckDBConnection } from '../../shared/duckdb.js';
import type { Intervals, Severity, TestSpec } from '../models/header.js';
import type { Node } from '../models/model-graph.js';
import { stripTrailingSemicolon } from '../models/model-graph.js';

export interface DataTest {
  /** e.g. revenue_monthly · unique(organisation_group_id, month) */
  name: string;
  /** The model the test checks. */
  model: string;
  /** Models the query reads: the test runs once all are built. */
  needs: string[];
  sql: string;
  /**
   * The same test on some of the model's rows only (`where`: a predicate over its rows, alias t). Present when
   * rows outside `where` cannot change the outcome: a test of each row, or uniqueness of a key holding the
   * model's group and time columns (its duplicates share a group-month). A model built by intervals runs it
   * on the intervals the build replaced, as SQLMesh audits the intervals it processed; the rows kept passed it
   * at an earlier build. Absent: the test reads whole tables (a relationship, a singular test).
   */
  sqlOn?: (where: string) => string;
  /** error: a failure stops the build; warn: it is reported and the build goes on. */
  severity: Severity;
}

export interface TestOutcome {
  failures: number;
  /** A few offending rows, JSON-safe. */
  examples: Record<string, unknown>[];
}

const cols = (c: string[]) => c.map(id).join(', ');

function compile(model: string, spec: TestSpec, intervals: Intervals | undefined): DataTest[] {
  const from = `${id(model)} AS t`;
  switch (spec.kind) {
    case 'unique': {
      const on = (where: string) =>
        `SELECT ${cols(spec.columns)}, count(*) AS duplicates FROM ${from} WHERE ${where} GROUP BY ALL HAVING count(*) > 1`;
      const oneInterval = intervals && [intervals.group, intervals.time].every((c) => spec.columns.includes(c));
      return [
        {
          name: `${model} · unique(${spec.columns.join(', ')})`,
          model,
          needs: [model],
          severity: 'error',
          sql: on('true'),
          ...(oneInterval ? { sqlOn: on } : {}),
        },
      ];
    }
    case 'not_null':
      return spec.columns.map((c) => {
        const on = (where: string) => `SELECT * FROM ${from} WHERE (${where}) AND ${id(c)} IS NULL`;
        return {
          name: `${model} · not_null(${c})`,
          model,
          needs: [model],
          severity: 'error' as const,
          sql: on('true'),
          sqlOn: on,
        };
      });
    case 'accepted_values': {
      const on = (where: string) => `SELECT ${id(spec.column)}, count(*) AS "rows" FROM ${from}
                WHERE (${where}) AND ${id(spec.column)} IS NOT NULL
                  AND ${id(spec.column)}::VARCHAR NOT IN (${spec.values.map(str).join(', ')})
                GROUP BY ALL`;
      return [
        {
          name: `${model} · accepted_values(${spec.column})`,
          model,
          needs: [model],
          severity: 'error',
          sql: on('true'),
          sqlOn: on,
        },
      ];
    }
    case 'relationships': {
      const on = spec.columns.map((c, i) => `p.${id(spec.toColumns[i])} = c.${id(c)}`).join(' AND ');
      const present = spec.columns.map((c) => `c.${id(c)} IS NOT NULL`).join(' AND ');
      return [
        {
          name: `${model} · relationships(${spec.columns.join(', ')} -> ${spec.toModel})`,
          model,
          needs: [model, spec.toModel],
          severity: 'error',
          sql: `SELECT ${spec.columns.map((c) => `c.${id(c)}`).join(', ')}, count(*) AS "rows" FROM ${id(model)} c
                WHERE ${present} AND NOT EXISTS (SELECT 1 FROM ${id(spec.toModel)} p WHERE ${on})
                GROUP BY ALL`,
        },
      ];
    }
  }
}

/** Every test of the project: the header tests of each model, then the singular tests. */
export function collectTests(models: Node[], singular: Node[]): DataTest[] {
  const generic = models.flatMap((m) => m.header.tests.flatMap((spec) => compile(m.name, spec, m.header.incremental)));
  const files = singular.map((t) => ({
    name: `${t.header.model ?? t.dependsOn.join('+')} · ${t.name} (${t.file})`,
    model: t.header.model ?? t.dependsOn.join(', '),
    needs: t.dependsOn,
    severity: t.header.severity ?? 'error',
    sql: stripTrailingSemicolon(t.sql),
  }));
  return [...generic, ...files];
}

/** Runs a test's query (`sql`, or `sqlOn` of some rows): how many rows it returns and the first three. */
export async function runTest(conn: DuckDBConnection, sql: string): Promise<TestOutcome> {
  const reader = await conn.runAndReadAll(
    `SELECT *, count(*) OVER () AS __failures FROM (${sql}\n) ORDER BY ALL LIMIT 3`,
  );
  const rows = reader.getRowObjectsJson() as Record<string, unknown>[];
  const failures = rows.length === 0 ? 0 : Number(rows[0].__failures);
  const examples = rows.map(({ __failures, ...rest }) => rest);
  return { failures, examples };
}

/** One line: the model, the test and a few offending rows. */
export function describeFailure(test: DataTest, outcome: TestOutcome): string {
  const shown = outcome.examples.map((r) => JSON.stringify(r)).join('; ');
  const what = test.severity === 'warn' ? 'data test warning' : 'data test failed';
  return `${what}: ${test.name}: ${outcome.failures} offending row${outcome.failures === 1 ? '' : 's'}, e.g. ${shown}`;
}
