/**
 * What the build reads of the lake's partitions: a stream's group-months with their fingerprints and the
 * latest snapshot folders, both from src/lake (partitions.ts: folder names are read there only), and the
 * month a lake view's row was read from.
 */
export { latestSnapshotFiles, monthPartitions, type Partition } from '../../lake/index.js';

/**
 * The first day of the month folder a row of a lake view over such a stream was read from (`alias` the view's
 * alias), a DATE: its partition column, which the views take from the path (lake-views.ts); `columns` the
 * view's partition columns (a stream without month folders has its days in the path).
 */
export function folderMonth(alias: string, columns: string[]): string {
  const day = `CAST(date_trunc('month', ${alias}.order_date) AS DATE)`;
  return columns.includes('order_month') ? `coalesce(CAST(${alias}.order_month || '-01' AS DATE), ${day})` : day;
}
