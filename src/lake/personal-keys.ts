/**
 * How a person is recognised without keeping who they are: a personal value (an e-mail address, a
 * name) is kept only as the SHA-256 of its normal form. A pending erasure (erasure-queue.ts) holds such
 * keys, enough to find the orders that name the person by e-mail, and nothing that gives the value back.
 * The JavaScript and SQL forms are the same function: lower case, blanks and no-break spaces trimmed.
 */
import { createHash } from 'node:crypto';

const EDGE_BLANKS = /^[ \t\n\r\u00a0]+|[ \t\n\r\u00a0]+$/g;

export function personalKey(value: string): string {
  return createHash('sha256').update(value.toLowerCase().replace(EDGE_BLANKS, '')).digest('hex');
}

/** The same key in DuckDB SQL, over an expression holding the value (NULL stays NULL). */
export function personalKeySql(expression: string): string {
  return `sha256(trim(lower(${expression}), chr(32) || chr(9) || chr(10) || chr(13) || chr(160)))`;
}
