/**
 * An order-free digest of a relation's rows, for change detection (a count and a bit_xor of the rows' hashes).
 * DuckDB hashes a row by folding its columns' hashes, the last one XORed in: a bit_xor of plain row hashes cancels
 * when an even number of rows change alike in their last column (two groups' months provisional → final), and the
 * change goes unseen. Hashing each row's hash again mixes its bits first: a cancellation then takes a collision.
 */
export function rowDigestSql(alias: string): string {
  return `count(*) || ':' || bit_xor(hash(hash(${alias})))`;
}
