/**
 * `perks models` draws the lineage: <out>/docs/lineage.svg, linked from the dictionary beside it, opened in
 * Chromium with every model named, no name covering another or leaving its box.
 */
import { describe, expect, test } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { launchChromium } from '../report/browser.js';
import { ROOT, startCli } from '../support/cli.js';
import { tempOut } from '../support/scratch.js';
import { REPORT_TABLES } from '../../src/lineage/index.js';

const sqlFiles = (folder: string) =>
  readdirSync(join(ROOT, 'sql', folder))
    .filter((f) => f.endsWith('.sql'))
    .map((f) => f.slice(0, -4));

interface Box {
  id: string;
  label: string;
  text: DOMRect;
  rect: DOMRect;
}

describe('the lineage drawn by perks models', () => {
  test('opens in Chromium with every model named, none hidden, and the dictionary links to it', async () => {
    const dir = tempOut('lineage-picture-');
    const r = await startCli(['models', '--output', dir], {}).done;
    expect(r.code, r.stderr).toBe(0);
    const svg = join(dir, 'docs', 'lineage.svg');
    expect(readFileSync(join(dir, 'docs', 'models.md'), 'utf8')).toContain('[lineage.svg](lineage.svg)');
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      const failed: string[] = [];
      page.on('requestfailed', (req) => failed.push(req.url()));
      await page.goto(pathToFileURL(svg).href);
      const { boxes, bounds } = await page.evaluate(() => {
        const plain = (d: DOMRect) => ({ x: d.x, y: d.y, width: d.width, height: d.height }) as DOMRect;
        const root = document.documentElement as unknown as SVGSVGElement;
        return {
          bounds: plain(root.getBoundingClientRect()),
          boxes: Array.from(document.querySelectorAll('g.node')).map((g) => ({
            id: g.getAttribute('data-id') ?? '',
            label: g.querySelector('text')?.textContent ?? '',
            text: plain(g.querySelector('text')!.getBoundingClientRect()),
            rect: plain(g.querySelector('rect')!.getBoundingClientRect()),
          })),
        };
      });
      expect(failed).toEqual([]); // self-contained: nothing fetched
      // every model of the SQL project, every mart's export, the write-back and the report
      const models = ['staging', 'intermediate', 'marts', 'writeback'].flatMap(sqlFiles);
      const labels = (boxes as Box[]).map((b) => b.label);
      for (const m of models) expect(labels, m).toContain(m);
      for (const m of sqlFiles('marts')) expect(labels).toContain(`marts/${m}.parquet`);
      expect(labels).toEqual(
        expect.arrayContaining(['revenue report', 'write-back → API interactions', 'lake/orders']),
      );
      const inside = (a: DOMRect, b: DOMRect) =>
        a.x >= b.x - 0.5 &&
        a.y >= b.y - 0.5 &&
        a.x + a.width <= b.x + b.width + 0.5 &&
        a.y + a.height <= b.y + b.height + 0.5;
      const overlap = (a: DOMRect, b: DOMRect) =>
        a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
      for (const b of boxes as Box[]) {
        expect(b.text.width, b.label).toBeGreaterThan(0);
        expect(inside(b.text, b.rect), `${b.label} fits its box`).toBe(true);
        expect(inside(b.rect, bounds), `${b.label} is inside the picture`).toBe(true);
      }
      for (const [i, a] of (boxes as Box[]).entries())
        for (const b of (boxes as Box[]).slice(i + 1))
          expect(overlap(a.rect, b.rect), `${a.label} and ${b.label} overlap`).toBe(false);
    } finally {
      await browser.close();
    }
  });

  test("the report's tables named for lineage are the models the report's sources read", () => {
    const models = ['staging', 'intermediate', 'marts', 'writeback'].flatMap(sqlFiles);
    const sources = readdirSync(join(ROOT, 'src', 'report'))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => readFileSync(join(ROOT, 'src', 'report', f), 'utf8'))
      .join('\n');
    const read = models.filter((m) => new RegExp(`\\b${m}\\b`).test(sources)).sort();
    expect([...REPORT_TABLES].sort()).toEqual(read);
  });
});
