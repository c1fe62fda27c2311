import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { closeMonth } from '../../src/close/index.js';
import { writeRevenueReport } from '../../src/report/index.js';
import { launchChromium } from './browser.js';
import { buildFixture } from './fixture.js';
import { configFrom } from '../../src/config/index.js';
import { outputAt } from '../../src/output/index.js';

const ARTIFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts', 'report');
let browser: Browser;
let html: string;

beforeAll(async () => {
  const out = await buildFixture();
  const result = await writeRevenueReport({
    settings: configFrom(),
    output: outputAt(out),
    month: '2024-03',
    formats: ['html'],
  });
  html = result.files[0];
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
});

/**
 * The table of contents' links, each with where it leads: the element its fragment names (tag and heading) and,
 * once the link is clicked, the fragment in the address and whether that element is then in the viewport.
 */
async function tocLinks(
  page: Page,
): Promise<{ text: string; href: string; target: string | null; heading: string; hash: string; inView: boolean }[]> {
  const links = await page.$$eval('nav.toc a', (as) =>
    as.map((a) => ({ text: a.textContent ?? '', href: a.getAttribute('href') ?? '' })),
  );
  const out = [];
  for (const [i, l] of links.entries()) {
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.locator('nav.toc a').nth(i).click();
    const where = await page.evaluate((href) => {
      const el = href.startsWith('#') ? document.getElementById(decodeURIComponent(href.slice(1))) : null;
      const r = el?.getBoundingClientRect();
      return {
        target: el ? el.tagName.toLowerCase() : null,
        heading: el?.querySelector('h2')?.textContent ?? '',
        hash: location.hash,
        inView: r !== undefined && r.top >= -1 && r.top < window.innerHeight,
      };
    }, l.href);
    out.push({ ...l, ...where });
  }
  return out;
}

test('the HTML report renders in headless chromium with its charts, totals and status, offline', async () => {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const page = await context.newPage();
  const requests: string[] = [];
  page.on('request', (r) => {
    if (!r.url().startsWith('file:')) requests.push(r.url());
  });
  await page.goto(pathToFileURL(html).href, { waitUntil: 'load' });

  // One chart per group and currency, each a bar per day of March, with a title for screen readers.
  const charts = await page.$$eval('.currency svg.chart', (svgs) =>
    svgs.map((s) => ({
      title: s.querySelector('title')?.textContent ?? '',
      bars: s.querySelectorAll('rect.bar').length,
      tall: Array.from(s.querySelectorAll('rect.bar')).filter((r) => r.getBoundingClientRect().height > 1).length,
      width: s.getBoundingClientRect().width,
    })),
  );
  expect(charts.map((c) => c.title)).toEqual([
    'Group revenue per day, Acme UK, GBP, March 2024',
    'Group revenue per day, Acme US, EUR, March 2024',
    'Group revenue per day, Acme US, USD, March 2024',
  ]);
  for (const c of charts) {
    expect(c.bars).toBe(31);
    expect(c.width).toBeGreaterThan(300);
  }
  // Acme UK sold on six days of March, so six bars have a visible height.
  expect(charts[0].tall).toBe(6);

  // The trend: a chart of 12 monthly bars per currency (April 2023 to March 2024), beside its table with the year to date.
  const trend = await page.$$eval('#trend svg.chart', (svgs) =>
    svgs.map((s) => ({
      title: s.querySelector('title')?.textContent ?? '',
      bars: s.querySelectorAll('rect.bar').length,
    })),
  );
  expect(trend).toEqual(
    ['EUR', 'GBP', 'USD'].map((c) => ({
      title: `Recognised revenue per month, all groups, ${c}, 2023-04 to 2024-03`,
      bars: 12,
    })),
  );
  expect(await page.locator('#trend table.trend tr.total').allInnerTexts()).toEqual([
    expect.stringMatching(/^Year to date 2024\s+1\.35 EUR\s+1\.35 EUR$/),
    // February 5.40 + March 94.95 (Complete); February 4.50 + March 39.00 (Complete): the fixture's hand-worked orders
    expect.stringMatching(/^Year to date 2024\s+100\.35 GBP\s+100\.35 GBP$/),
    expect.stringMatching(/^Year to date 2024\s+43\.50 USD\s+43\.50 USD$/),
  ]);

  const text = await page.innerText('body');
  expect(text).toMatch(/PROVISIONAL:\s+March 2024 is not final yet for group 12/);
  for (const amount of [
    '2,130.00 GBP',
    '95.85 GBP',
    '1,260.00 USD',
    '41.70 USD',
    '1.35 EUR',
    '+90.45 GBP',
    '+1,675.0%',
  ])
    expect(text).toContain(amount);
  expect(await page.locator('#reconciliation').innerText()).toMatch(/Reconciled: the mart equals the lake/);
  expect(requests).toEqual([]);

  // Every contents link leads to its section; with no credit extracted the credit section says why and what to do.
  const toc = await tocLinks(page);
  expect(toc.map((l) => l.href)).toEqual([
    '#recognised',
    '#trend',
    '#summary',
    '#group-11',
    '#group-12',
    '#credit',
    '#reconciliation',
  ]);
  for (const l of toc) expect(l, l.href).toMatchObject({ target: 'section', hash: l.href, inView: true });
  expect(await page.locator('#credit').innerText()).toMatch(
    /Every group: the warehouse has no credit_liability_monthly .*: run `perks extract --streams credit` and `perks build`\./,
  );
  expect(await page.locator('#credit table, #credit-adjustments').count()).toBe(0);

  await mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, 'revenue-2024-03.png'), fullPage: true });
  await context.close();
}, 180_000);

test('the HTML report prints: the print stylesheet applies and chromium lays it out as a PDF', async () => {
  const page = await browser.newPage();
  await page.goto(pathToFileURL(html).href);
  await page.emulateMedia({ media: 'print' });
  expect(await page.locator('nav.toc').isVisible()).toBe(false);
  // A4's printable width (210 mm less 2 × 12 mm margins, 703 px): every table fits it, its header repeats on each
  // page it runs over, and no row is split across pages.
  await page.setViewportSize({ width: 703, height: 1000 });
  expect(await page.evaluate<string[]>(CUT_TABLES)).toEqual([]);
  const print = await page.evaluate(() => ({
    heads: [...new Set(Array.from(document.querySelectorAll('thead')).map((h) => getComputedStyle(h).display))],
    rows: [...new Set(Array.from(document.querySelectorAll('tr')).map((r) => getComputedStyle(r).breakInside))],
  }));
  expect(print).toEqual({ heads: ['table-header-group'], rows: ['avoid'] });
  // the captions make sense on paper: nothing to point at, the daily chart's total and highest day instead
  const onPaper = await page.locator('figcaption').allInnerTexts();
  expect(onPaper.length).toBeGreaterThan(4);
  for (const caption of onPaper) expect(caption).not.toMatch(/tooltip|point at|hover/i);
  expect(onPaper).toContainEqual(
    expect.stringMatching(
      // the fixture's hand-worked March of Acme UK: 95.85 GBP of group revenue, 31 March's two orders 56.25 + 0.90
      /^Group revenue per day, GBP, on the group's local days\. Total 95\.85 GBP over 31 days; highest on 2024-03-31 with 57\.15 GBP\.$/,
    ),
  );
  expect(onPaper).toContainEqual(
    // March is provisional for group 12: its bar pale, and said so
    'Recognised revenue per month, all groups, USD. A pale bar is a partial or provisional month. The amounts are in the table beside it.',
  );
  await page.emulateMedia({ media: 'screen' });
  const onScreen = await page.locator('figcaption').allInnerTexts();
  expect(onScreen.every((c) => /Point at a bar/.test(c))).toBe(true);
  expect(onScreen.some((c) => /Total .* over 31 days/.test(c))).toBe(false);
  await page.emulateMedia({ media: 'print' });
  const pdf = await page.pdf({ preferCSSPageSize: true, printBackground: true });
  expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
  // the stylesheet's @page size: A4, 595.28 × 841.89 points
  const boxes = [...pdf.toString('latin1').matchAll(/\/MediaBox\s*\[\s*0 0 ([\d.]+) ([\d.]+)\s*\]/g)];
  expect(boxes.length).toBeGreaterThan(0);
  for (const [, w, h] of boxes) expect([Math.round(Number(w)), Math.round(Number(h))]).toEqual([595, 842]);
  await mkdir(ARTIFACTS, { recursive: true });
  await import('node:fs/promises').then((fs) => fs.writeFile(join(ARTIFACTS, 'revenue-2024-03.pdf'), pdf));
  expect((await readFile(html, 'utf8')).match(/<(link|script|img)\b/g)).toBeNull();
  await page.close();
}, 180_000);

test('a signed-off month with adjustments to an earlier closed month: recognised revenue, the sign-off and the adjustments render', async () => {
  // February 2024 was closed earlier; two of its orders changed in March (a refund and a late order).
  const out = await buildFixture({
    tweak: `CREATE TABLE revenue_adjustments AS SELECT * FROM (VALUES
      (11::BIGINT, DATE '2024-02-01', 901::BIGINT, DATE '2024-03-01', TIMESTAMPTZ '2024-03-04 06:00:00+00', 'status', 'Complete', 'Refunded', 'GBP', 'GBP', 3.60::DECIMAL(18,2), 3.60::DECIMAL(18,2), 0, 0.00::DECIMAL(18,2), true, false),
      (11::BIGINT, DATE '2024-02-01', 903::BIGINT, DATE '2024-03-01', TIMESTAMPTZ '2024-03-05 06:00:00+00', 'late order', NULL, 'Complete', 'GBP', NULL, NULL, 2.00::DECIMAL(18,2), 1, 2.00::DECIMAL(18,2), false, true)
    ) AS t(organisation_group_id, month, order_id, booked_month, observed_at, adjustment_kind, before_status, after_status, order_currency, before_currency, before_group_revenue, after_group_revenue, orders_change, group_revenue_change, before_is_recognised, after_is_recognised);
    CREATE TABLE credit_adjustments AS SELECT * FROM (VALUES
      (11::BIGINT, DATE '2024-02-01', DATE '2024-03-01', TIMESTAMPTZ '2024-03-06 06:00:00+00', -1::BIGINT, -5.00::DECIMAL(18,2), -7.50::DECIMAL(18,2), -2.50::DECIMAL(18,2), 0.00::DECIMAL(18,2))
    ) AS t(organisation_group_id, month, booked_month, observed_at, users_change, credit_available_change, credit_granted_change, credit_spent_change, credit_expired_change);
    CREATE TABLE credit_liability_monthly AS SELECT * FROM (VALUES
      (11::BIGINT, DATE '2024-03-01', DATE '2024-03-31', 4::BIGINT, 12.50::DECIMAL(18,2), 20.00::DECIMAL(18,2), 6.00::DECIMAL(18,2), 1.50::DECIMAL(18,2), DATE '2024-03-29')
    ) AS t(organisation_group_id, month, month_end, users, credit_available, credit_granted, credit_spent, credit_expired, oldest_snapshot_date)`,
  });
  await closeMonth({
    output: outputAt(out),
    month: '2024-03',
    group: 11,
    by: 'A. Controller',
    note: 'Q1 board pack',
    rule: { statuses: ['Complete'] },
  });
  const { writeFile } = await import('node:fs/promises');
  await writeFile(join(out, 'rates.csv'), 'month,currency,rate\n2024-03,GBP,1.17\n');
  process.env.PERKS_FX_RATES = join(out, 'rates.csv');
  process.env.PERKS_REPORTING_CURRENCY = 'EUR';
  let file: string;
  try {
    [file] = (
      await writeRevenueReport({
        settings: configFrom(),
        output: outputAt(out),
        month: '2024-03',
        group: 11,
        formats: ['html'],
      })
    ).files;
  } finally {
    delete process.env.PERKS_FX_RATES;
    delete process.env.PERKS_REPORTING_CURRENCY;
  }
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
  const status = await page.locator('section.status').innerText();
  expect(status).toMatch(/SIGNED OFF:\s+March 2024 is signed off for group 11/);
  expect(status).toMatch(/closed by A\. Controller at .*\("Q1 board pack"\); close record 1, sha256 [0-9a-f]{64}/);
  const recognised = await page.locator('#recognised').innerText();
  expect(recognised).toContain('Recognised revenue counts orders whose status is Complete');
  expect(recognised).toMatch(/Acme UK\s+GBP\s+6\s+94\.95 GBP\s+\+89\.55 GBP \(\+1,658\.3%\)\s+1\s+0\.90 GBP/);
  expect(await page.locator('#adjustments').isVisible()).toBe(true);
  const totals = await page.locator('#adjustments table.adjustments tbody tr').allInnerTexts();
  expect(totals).toEqual([expect.stringMatching(/^Acme UK\s+2024-02\s+GBP\s+2\s+1\s+0\s+\+2\.00 GBP\s+-1\.60 GBP$/)]);
  expect(await page.locator('#adjustments table.adjustment-lines tbody tr').count()).toBe(2);
  // February's credit liability changed after its close too: booked in March, shown as now − as closed
  expect(await page.locator('#credit-adjustments').isVisible()).toBe(true);
  expect(await page.locator('#credit-adjustments tbody tr').allInnerTexts()).toEqual([
    expect.stringMatching(/^Acme UK\s+2024-02\s+-1\s+-5\.00\s+-7\.50\s+-2\.50\s+0\.00\s+2024-03-06T06:00:00Z$/),
  ]);
  // The contents link to both credit sections, after the groups and before the reconciliation, and each link leads to its section.
  const toc = await tocLinks(page);
  expect(toc.map((l) => [l.text, l.href])).toEqual([
    ['Recognised revenue', '#recognised'],
    ['Consolidated', '#consolidated'],
    ['Trend and year to date', '#trend'],
    ['Summary', '#summary'],
    ['Adjustments', '#adjustments'],
    ['Acme UK', '#group-11'],
    ['Credit liability', '#credit'],
    ['Credit adjustments', '#credit-adjustments'],
    ['Reconciliation', '#reconciliation'],
  ]);
  for (const l of toc) expect(l, l.href).toMatchObject({ target: 'section', hash: l.href, inView: true });
  expect(toc.find((l) => l.href === '#credit')?.heading).toMatch(/^Credit liability at 2024-03-31/);
  expect(toc.find((l) => l.href === '#credit-adjustments')?.heading).toMatch(
    /^Adjustments to closed months' credit liability/,
  );
  expect(await page.locator('#credit table.credit tbody tr').allInnerTexts()).toEqual([
    expect.stringMatching(/^Acme UK\s+4\s+12\.50\s+20\.00\s+6\.00\s+1\.50\s+2024-03-29$/),
  ]);
  expect(await page.locator('#consolidated').innerText()).toMatch(
    /Consolidated in EUR: recognised revenue 111\.09 EUR, group revenue of all statuses 112\.14 EUR at GBP 1\.17/,
  );
  await mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, 'revenue-2024-03-signed.png'), fullPage: true });
  await page.close();
}, 180_000);

/**
 * The elements whose right edge passes the viewport (or that widen the document), as "tag.class: right > width";
 * an element inside a box that scrolls or clips sideways is measured by that box (it scrolls inside it).
 */
const OVERFLOW = `(() => {
  const width = document.documentElement.clientWidth;
  const out = [];
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    let right = r.right;
    for (let p = el.parentElement; p; p = p.parentElement) {
      if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(p).overflowX)) {
        right = Math.min(right, p.getBoundingClientRect().right);
        break;
      }
    }
    if (right > width + 0.5) out.push(el.tagName.toLowerCase() + (el.className ? '.' + el.className : '') + ': ' + Math.round(right) + ' > ' + width);
  }
  if (document.documentElement.scrollWidth > width) out.push('document: ' + document.documentElement.scrollWidth + ' > ' + width);
  return out;
})()`;

/**
 * The tables shown as cards that would fit their box as a table, amounts on one line (a name or a header may wrap),
 * within 10%: the reflow's estimate of a table's width errs wide, never by more. As "caption: needs < box".
 */
const NEEDLESS_CARDS = `Array.from(document.querySelectorAll('.wide > table'))
  .filter((t) => getComputedStyle(t).display === 'block')
  .map((t) => {
    const box = t.parentElement.clientWidth;
    const c = t.cloneNode(true);
    c.className = c.className.replace(/\\bfit-\\d+/, '');
    c.style.position = 'absolute';
    c.style.visibility = 'hidden';
    c.style.width = 'min-content';
    for (const td of c.querySelectorAll('tbody .num')) td.style.whiteSpace = 'nowrap';
    t.parentElement.appendChild(c);
    const needs = c.getBoundingClientRect().width;
    c.remove();
    return { caption: t.caption ? t.caption.textContent : t.className, needs, box };
  })
  .filter((t) => t.needs < t.box * 0.9)
  .map((t) => t.caption + ': ' + Math.round(t.needs) + ' < ' + t.box)`;

/** The tables wider than the box they sit in (which would scroll inside it), as "caption: width > box". */
const CUT_TABLES = `Array.from(document.querySelectorAll('table'))
  .filter((t) => t.getBoundingClientRect().width > t.parentElement.clientWidth + 0.5)
  .map((t) => (t.caption ? t.caption.textContent : t.className) + ': ' + Math.round(t.getBoundingClientRect().width) + ' > ' + t.parentElement.clientWidth)`;

test('at 800 px the tables that fit stay tables: only a table too wide for its box becomes cards, and the page stays short', async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  try {
    await page.goto(pathToFileURL(html).href, { waitUntil: 'load' });
    const wide = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.setViewportSize({ width: 800, height: 900 });
    const narrow = await page.evaluate(() => document.documentElement.scrollHeight);
    const shown = await page.$$eval('.wide > table', (ts) =>
      (ts as HTMLTableElement[]).map(
        (t) => `${getComputedStyle(t).display === 'block' ? 'cards' : 'table'}: ${t.caption?.textContent ?? ''}`,
      ),
    );
    expect(await page.evaluate<string[]>(CUT_TABLES)).toEqual([]);
    expect(await page.evaluate<string[]>(NEEDLESS_CARDS)).toEqual([]);
    // the month tables of the trend (12 rows), each status and brand table, the headline: tables; only the nine
    // columns of the totals per group become cards
    expect(shown.filter((s) => /^table: Recognised group revenue per month, (EUR|GBP|USD),/.test(s))).toHaveLength(3);
    expect(
      shown.filter((s) => /^table: (March 2024 by order status|Top brands by group revenue), /.test(s)),
    ).toHaveLength(6);
    expect(shown.filter((s) => s.startsWith('cards: '))).toEqual([
      'cards: Totals per group and currency; change in group revenue against February 2024',
    ]);
    // every table a card below 900 px made this page 2.9 times as long at 800 px as at 1280 (the demo's October)
    expect(narrow).toBeLessThan(1.6 * wide);
  } finally {
    await page.close();
  }
}, 60_000);

test.each([1280, 800])(
  'at %i px every table fits its box, without scrolling, and the page has no horizontal scroll (long names, large amounts, a partial month)',
  async (width) => {
    // Long names and amounts in the billions: what a real organisation's report holds.
    const out = await buildFixture({
      tweak: `UPDATE stg_groups SET display_name = display_name || ' Employee Benefits and Rewards Programme';
        UPDATE revenue_monthly SET face_value = face_value * 1000000, order_total_paid = order_total_paid * 1000000,
          order_credit = order_credit * 1000000, order_saving = order_saving * 1000000, group_revenue = group_revenue * 1000000`,
    });
    const files = [
      ...(
        await writeRevenueReport({ settings: configFrom(), output: outputAt(out), month: '2024-03', formats: ['html'] })
      ).files,
      ...(
        await writeRevenueReport({ settings: configFrom(), output: outputAt(out), month: '2024-04', formats: ['html'] })
      ).files,
    ];
    const page = await browser.newPage({ viewport: { width, height: 900 } });
    try {
      for (const file of files) {
        await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
        expect(await page.locator('table').count()).toBeGreaterThan(4);
        expect(await page.evaluate<string[]>(OVERFLOW), `${file} at ${width} px`).toEqual([]);
        // and fits it: no table wider than its box; a table becomes cards only when it could not fit as one
        expect(await page.evaluate<string[]>(CUT_TABLES), `${file} at ${width} px`).toEqual([]);
        expect(await page.evaluate<string[]>(NEEDLESS_CARDS), `${file} at ${width} px`).toEqual([]);
        // the trend's month tables (three columns of amounts in the billions) stay tables at 800 px too
        expect(new Set(await page.$$eval('table.trend', (ts) => ts.map((t) => getComputedStyle(t).display)))).toEqual(
          new Set(['table']),
        );
        // and whatever a table holds another day, it has a box of its own to scroll in
        expect(
          await page.$$eval(
            'table',
            (ts) => ts.filter((t) => !t.parentElement || getComputedStyle(t.parentElement).overflowX !== 'auto').length,
          ),
        ).toBe(0);
      }
      await mkdir(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, `revenue-2024-04-${width}px.png`), fullPage: true });
    } finally {
      await page.close();
    }
  },
  60_000,
);
