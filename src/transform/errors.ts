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
