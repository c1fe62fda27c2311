/**
 * `perks sql --format arrow|parquet`: a read-only query's result as an Arrow IPC stream (built with
 * apache-arrow from DuckDB's result chunks, arrow-result.ts) or as a Parquet file (DuckDB's own writer,
 * zstd), to a file (written whole, then renamed into place) or to stdout.
 */
import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import { access, constants, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { commitDurably, tempPathFor } from '../../shared/durable-file.js';
import { StatementType } from '../../shared/duckdb.js';
import { QueryError } from '../errors.js';
import { failed, withReadOnlyQuery, type LastStatement, type QueryOptions } from './read-only-query.js';

export type BinaryFormat = 'arrow' | 'parquet';

export interface ExportTarget {
  /** The file to write; without it, `stdout`. */
  readonly file?: string;
  readonly stdout: NodeJS.WritableStream;
}

/** Runs `sql` read-only and writes its last statement's result in `format`; returns the rows written. */
export async function exportQuery(
  warehouse: string,
  sql: string,
  format: BinaryFormat,
  target: ExportTarget,
  options: QueryOptions = {},
): Promise<number> {
  const temp = target.file ? tempPathFor(target.file) : join(tmpdir(), `perks-sql-${process.pid}.${format}`);
  // before the query runs: a typo in the folder should not cost a long query first
  if (target.file) await access(dirname(target.file), constants.W_OK).catch(cannotWrite(target.file));
  try {
    const rows = await withReadOnlyQuery(
      warehouse,
      sql,
      (last) => (format === 'arrow' ? arrowTo(last, target, temp) : parquetTo(last, temp)),
      { ...options, allowedFiles: [temp] },
    );
    if (target.file) await commitDurably(temp, target.file).catch(cannotWrite(target.file));
    else if (format === 'parquet') await pipeline(createReadStream(temp), target.stdout, { end: false });
    return rows;
  } finally {
    await rm(temp, { force: true });
  }
}

const cannotWrite =
  (file: string) =>
  (err: NodeJS.ErrnoException): never => {
    throw new QueryError(`cannot write ${file}: ${err.code ?? err.message}; choose another --out`);
  };

async function arrowTo(last: LastStatement, target: ExportTarget, temp: string): Promise<number> {
  // loaded here, not at the top: apache-arrow adds about 0.4 s to the start of every other command
  const { writeArrowStream } = await import('./arrow-result.js');
  const result = await last.prepared.stream().catch(failed);
  if (!target.file) return writeArrowStream(result, (bytes) => writeOut(target.stdout, bytes));
  const handle = await open(temp, 'w').catch(cannotWrite(target.file));
  try {
    return await writeArrowStream(result, async (bytes) => {
      await handle.write(bytes);
    });
  } finally {
    await handle.close();
  }
}

/** Writes with the stream's backpressure: a slow reader on the pipe is waited for, not buffered without end. */
async function writeOut(out: NodeJS.WritableStream, bytes: Uint8Array): Promise<void> {
  if (!out.write(bytes)) await once(out, 'drain');
}

/** DuckDB writes the Parquet file itself (its types, row groups, statistics) from the checked SELECT. */
async function parquetTo(last: LastStatement, temp: string): Promise<number> {
  if (last.prepared.statementType !== StatementType.SELECT)
    throw new QueryError('--format parquet needs a SELECT as the last statement (EXPLAIN has no table to write)');
  // The file name is ours (a temporary name), never the user's text; COPY takes no parameter for it.
  const copy = `COPY (\n${last.text}\n) TO '${temp.replaceAll("'", "''")}' (FORMAT parquet, COMPRESSION zstd)`;
  // the checked SELECT is one balanced statement; wrapped, it must still be exactly one COPY: after DuckDB's
  // CREATE of the pivoted values, in a transaction of DuckDB's making, when it is a PIVOT without an IN list
  const expected = last.pivotEnums
    ? [StatementType.TRANSACTION, ...Array<StatementType>(last.pivotEnums).fill(StatementType.CREATE)]
    : [];
  expected.push(StatementType.COPY, ...(last.pivotEnums ? [StatementType.TRANSACTION] : []));
  const statements = await last.connection.extractStatements(copy).catch(failed);
  if (statements.count !== expected.length)
    throw new QueryError('the query could not be written as Parquet: give one SELECT');
  let reader;
  for (const [i, type] of expected.entries()) {
    const prepared = await statements.prepare(i).catch(failed);
    if (prepared.statementType !== type)
      throw new QueryError('the query could not be written as Parquet: give one SELECT');
    const result = await prepared.runAndReadAll().catch(failed);
    if (type === StatementType.COPY) reader = result;
  }
  return Number(reader?.getRows()[0]?.[0] ?? 0);
}
