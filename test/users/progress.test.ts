/** The import's progress bar: drawn on a terminal, absent elsewhere (stdout keeps the report). */
import { describe, expect, test } from 'vitest';
import { importProgress } from '../../src/users/index.js';

function stream(isTTY: boolean) {
  const written: string[] = [];
  return { written, stream: { isTTY, write: (s: string) => written.push(s) } as unknown as NodeJS.WriteStream };
}

describe('import progress', () => {
  test('on a terminal, one updating bar per phase, ended by a line break when the phase is done', () => {
    const t = stream(true);
    const progress = importProgress(t.stream)!;
    progress('look up', 100, 250);
    progress('look up', 100, 250); // unchanged: not drawn again
    progress('look up', 250, 250);
    expect(t.written).toEqual([
      `\rlook up  [${'#'.repeat(12)}${'.'.repeat(18)}] 100/250`,
      `\rlook up  [${'#'.repeat(30)}] 250/250\n`,
    ]);
  });

  test('off a terminal (CI, a pipe), nothing', () => {
    expect(importProgress(stream(false).stream)).toBeUndefined();
  });
});
