/**
 * Tables that reflow on a narrow screen, and only those that need to: each body cell gets its column's header as
 * `data-label`, so the stylesheet can show a row as a card of "label: value" lines; each table gets the width it
 * needs to read well as a table (`fit-<px>`, worked out here from its text), and the card rules apply to it only
 * when its box (`.wide`, a size container) is narrower than that. A 12-row month table of three columns stays a
 * table at 800 px; a table of nine amounts becomes cards. No script: the same file on screen, on paper, offline.
 * Works on the HTML this report writes (headers in <thead>, cells as <td>/<th>, colspan only as a number).
 */
const TABLE = /<table\b([^>]*)>([\s\S]*?)<\/table>/g;
const HEAD = /<thead>([\s\S]*?)<\/thead>/;
const HEAD_CELL = /<th\b[^>]*>([\s\S]*?)<\/th>/g;
const ROW = /<tr\b[^>]*>[\s\S]*?<\/tr>/g;
const CELL = /<(td|th)\b([^>]*)>/g;
const CELL_WITH_TEXT = /<(td|th)\b([^>]*)>([\s\S]*?)<\/\1>/g;

/**
 * The width of one character of the tables' 13 px text, in px, on the wide side: the system fonts' digits run from
 * 7.2 px (Arial, Helvetica) to 8.3 px (DejaVu Sans, Linux's usual), letters narrower on average. Over-estimating
 * turns a table into cards a little early; under-estimating would leave a table wider than its box.
 */
const CHAR_PX = 7.8;
/** A cell's horizontal padding (8 px each side) and its share of the borders. */
const CELL_PX = 17;
/** Widths are rounded up to this step, so a report has a few breakpoints, not one per table. */
const STEP_PX = 20;
/** A text cell (a name) may wrap, but not below this many characters (or its longest word). */
const TEXT_MIN_CHARS = 10;
/** A bold row (a total) is this much wider than the same text in the regular weight. */
const BOLD = 1.1;

export function labelTableCells(html: string): string {
  const fits = new Set<number>();
  const body = html.replace(TABLE, (table, attrs: string, inner: string) => {
    const head = HEAD.exec(inner);
    if (!head) return table;
    const labels = [...head[1].matchAll(HEAD_CELL)].map((m) => textOf(m[1]).trim());
    const [before, after] = [inner.slice(0, head.index + head[0].length), inner.slice(head.index + head[0].length)];
    const fit = Math.ceil(tableWidth(inner) / STEP_PX) * STEP_PX;
    fits.add(fit);
    return `<table${withClass(attrs, `fit-${fit}`)}>${before}${after.replace(ROW, (row) => labelRow(row, labels))}</table>`;
  });
  return body.replace('</style>', `${cardRules([...fits].sort((a, b) => a - b))}</style>`);
}

function labelRow(row: string, labels: readonly string[]): string {
  let column = 0;
  return row.replace(CELL, (cell, tag: string, attrs: string) => {
    const label = labels[column] ?? '';
    column += colspan(attrs);
    return `<${tag}${attrs} data-label="${label.replaceAll('"', '&quot;')}">`;
  });
}

const colspan = (attrs: string) => Number(/colspan="(\d+)"/.exec(attrs)?.[1] ?? 1);

/** The attributes with `name` added to their class (or a class of it). */
function withClass(attrs: string, name: string): string {
  return /\bclass="/.test(attrs) ? attrs.replace(/\bclass="/, `class="${name} `) : `${attrs} class="${name}"`;
}

/** The text a cell shows, line by line (`<br>` ends a line), its tags gone and its entities one character each. */
function linesOf(cell: string): string[] {
  return cell.split(/<br\s*\/?>/).map((l) => textOf(l).replace(/\s+/g, ' ').trim());
}

const textOf = (html: string) => html.replace(/<[^>]*>/g, '').replace(/&(#\d+|#x[0-9a-f]+|[a-z]+);/gi, '_');

const longestWord = (line: string) => Math.max(0, ...line.split(' ').map((w) => w.length));

/**
 * The width, in px, at which the table reads well as a table: per column, the widest of its cells as each wants to
 * be (an amount on one line; a header's words may wrap, down to its longest; a name down to TEXT_MIN_CHARS), then
 * the columns and their padding added up. A cell spanning columns is left out (it fits in the sum of theirs).
 */
export function tableWidth(table: string): number {
  const columns: number[] = [];
  const headEnd = table.indexOf('</thead>');
  for (const row of table.matchAll(ROW)) {
    const inHead = headEnd >= 0 && row.index < headEnd;
    const weight = /^<tr\b[^>]*\bclass="[^"]*\btotal\b/.test(row[0]) ? BOLD : 1;
    let column = 0;
    for (const [, , attrs, inner] of row[0].matchAll(CELL_WITH_TEXT)) {
      const span = colspan(attrs);
      if (span === 1) {
        const chars = weight * Math.max(0, ...linesOf(inner).map((l) => cellChars(l, inHead, /\bnum\b/.test(attrs))));
        columns[column] = Math.max(columns[column] ?? 0, chars);
      }
      column += span;
    }
  }
  return columns.reduce((sum, chars) => sum + (chars ?? 0) * CHAR_PX + CELL_PX, 0);
}

function cellChars(line: string, inHead: boolean, numeric: boolean): number {
  if (inHead) return longestWord(line);
  if (numeric) return line.length;
  return Math.min(line.length, Math.max(longestWord(line), TEXT_MIN_CHARS));
}

/**
 * The card rules, once per width the report's tables need: a table of `fit-N` is shown as cards while its box is
 * narrower than N px (a container query on `.wide`). Screen only: paper is A4, laid out as tables (the print rules).
 */
function cardRules(fits: readonly number[]): string {
  return fits
    .map((n) => {
      const t = `.wide > table.fit-${n}`;
      return (
        `@media screen { @container wide (max-width: ${n - 0.02}px) {
  ${t}, ${t} tbody, ${t} tr, ${t} td, ${t} tbody th { display: block; width: 100%; }
  ${t} caption { display: block; }
  ${t} thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  ${t} tr { border: 1px solid var(--line); border-radius: 6px; margin: 0 0 8px; padding: 4px 10px; }
  ${t} td, ${t} tbody th { border: 0; padding: 2px 0; text-align: right; overflow-wrap: anywhere; }
  ${t} td::before, ${t} tbody th::before { content: attr(data-label); float: left; margin-right: 12px; color: ` +
        `var(--muted); font-weight: 400; font-style: normal; text-align: left; }
  ${t} tr.total { border: 2px solid var(--ink); }
  ${t} tr.total th, ${t} tr.total td { border: 0; }
} }
`
      );
    })
    .join('');
}
