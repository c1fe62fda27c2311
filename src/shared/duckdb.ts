/**
 * DuckDB's Node API, loaded with require(). The package is CommonJS: an ESM `import` of it makes Node scan
 * the source of each of its ~180 files for their export names (cjs-module-lexer), about 0.2 s of every
 * command's start on these machines; require() reads them without the scan. The values used here are
 * re-exported by name, every type comes from the package. Import DuckDB from here, not from the package
 * (a type-only import of the package costs nothing and is fine).
 */
import { createRequire } from 'node:module';

type DuckDB = typeof import('@duckdb/node-api');
const duckdb = createRequire(import.meta.url)('@duckdb/node-api') as DuckDB;

export type * from '@duckdb/node-api';
export const {
  BIGINT,
  DuckDBInstance,
  DuckDBTimestampTZValue,
  DuckDBTypeId,
  LIST,
  listValue,
  quotedIdentifier,
  quotedString,
  StatementType,
  TIMESTAMPTZ,
  VARCHAR,
} = duckdb;
// the classes and enums above are types too
export type DuckDBInstance = import('@duckdb/node-api').DuckDBInstance;
export type DuckDBTimestampTZValue = import('@duckdb/node-api').DuckDBTimestampTZValue;
export type DuckDBTypeId = import('@duckdb/node-api').DuckDBTypeId;
export type StatementType = import('@duckdb/node-api').StatementType;
