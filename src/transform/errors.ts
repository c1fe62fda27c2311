/** Errors of the model runner: one line each, naming the files involved. */
import { InputError, UserFacingError } from '../shared/exit-codes.js';
import { LakeError } from '../lake/index.js';

/** The models do not form a buildable graph: a cycle, a missing reference, a duplicate name, a syntax error. */
export class ModelGraphError extends UserFacingError {}

/** A lake stream's files cannot be read together (a broken file, clashing column types). */
export class LakeReadError extends LakeError {}

/** The warehouse cannot be read: not built yet, or built by an incompatible DuckDB. */
export class WarehouseMissingError extends InputError {
  constructor(path: string) {
    super(
      `no warehouse at ${path}: run \`perks build\` first (or set PERKS_OUTPUT to the output folder that holds it)`,
    );
  }
}

/** An ad-hoc query was refused (a write on the read-only warehouse) or failed (bad SQL). */
export class QueryError extends InputError {}

/** One line out of a DuckDB error: its first line, without the "LINE 1: ^" excerpt. */
export function firstLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split('\n')[0].trim();
}

/** DuckDB's "Did you mean …" line, which names what the query probably meant (a table, a column, a function). */
const DID_YOU_MEAN = /^\s*Did you mean/i;

/** The first line of a DuckDB error, and its "Did you mean …" when it has one: what a one-line message says. */
export function firstLineWithHint(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const hint = message.split('\n').find((l) => DID_YOU_MEAN.test(l));
  return `${firstLine(err)}${hint ? ` ${hint.trim()}` : ''}`;
}

/**
 * The rest of a DuckDB error after firstLineWithHint's line, as DuckDB wrote it: "Candidate bindings: …", and the
 * query's line with a caret under the place (its spaces kept, so the caret stays under it); '' when none.
 */
export function duckdbDetail(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const rest = message
    .split('\n')
    .slice(1)
    .filter((l) => !DID_YOU_MEAN.test(l));
  while (rest.length && rest[0].trim() === '') rest.shift();
  while (rest.length && rest.at(-1)!.trim() === '') rest.pop();
  return rest.map((l) => l.trimEnd()).join('\n');
}

/** A query error's message: one line, then DuckDB's detail under it (perks sql shows DuckDB's whole message). */
export const withDuckdbDetail = (line: string, err: unknown): string => {
  const detail = duckdbDetail(err);
  return detail ? `${line}\n${detail}` : line;
};
