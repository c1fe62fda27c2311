/**
 * Tables that reflow on a narrow screen: each body cell gets its column's header as `data-label`, so the
 * stylesheet can show a row as a card of "label: value" lines below 900 px instead of a table wider than the page.
 * Works on the HTML this report writes (headers in <thead>, cells as <td>/<th>, colspan only as a number).
 */
const TABLE = /<table\b[\s\S]*?<\/table>/g;
const HEAD = /<thead>([\s\S]*?)<\/thead>/;
const HEAD_CELL = /<th\b[^>]*>([\s\S]*?)<\/th>/g;
const ROW = /<tr\b[^>]*>[\s\S]*?<\/tr>/g;
const CELL = /<(td|th)\b([^>]*)>/g;

export function labelTableCells(html: string): string {
  return html.replace(TABLE, (table) => {
    const head = HEAD.exec(table);
    if (!head) return table;
    const labels = [...head[1].matchAll(HEAD_CELL)].map((m) => m[1].replace(/<[^>]*>/g, '').trim());
    const [before, after] = [table.slice(0, head.index + head[0].length), table.slice(head.index + head[0].length)];
    return before + after.replace(ROW, (row) => labelRow(row, labels));
  });
}

function labelRow(row: string, labels: readonly string[]): string {
  let column = 0;
  return row.replace(CELL, (cell, tag: string, attrs: string) => {
    const label = labels[column] ?? '';
    column += Number(/colspan="(\d+)"/.exec(attrs)?.[1] ?? 1);
    return `<${tag}${attrs} data-label="${label.replaceAll('"', '&quot;')}">`;
  });
}
