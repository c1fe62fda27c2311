/** Runs fn over items with at most `limit` in flight; the first failure stops new work and is thrown. */
export async function forEachLimit<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed: { error: unknown } | undefined;
  const worker = async () => {
    while (failed === undefined && next < items.length) {
      const index = next++;
      try {
        await fn(items[index], index);
      } catch (err) {
        failed ??= { error: err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failed !== undefined) throw failed.error;
}
