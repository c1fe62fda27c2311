/**
 * The models' lineage drawn, for analysts who would rather look than read the dictionary: one self-contained
 * SVG (no script, no font to fetch) in columns, lake streams and the close record → staging → intermediate →
 * marts → the write-back's models → what leaves the warehouse (each mart's Parquet file, the write-back to the
 * API, the revenue report), an arrow for every dependency. Labels are monospace and every column as wide as its
 * longest label, so no name hides another (a test checks it in Chromium). `perks models` writes it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fsyncPathSync, renameDurablySync, tempPathFor } from '../shared/durable-file.js';
import { dirname } from 'node:path';
import type { ModelDoc } from '../transform/index.js';
import { relativeStreamDir } from '../lake/index.js';
import { REPORT_STREAMS, REPORT_TABLES, SOURCE_FILES } from './reads.js';

interface Node {
  id: string;
  label: string;
  /** The stage (COLUMNS), then, within it, after what of its own stage it reads (a mart reading a mart). */
  stage: number;
  column: number;
  kind: 'source' | 'model' | 'output';
  title: string;
  inputs: string[];
  y?: number;
}

const COLUMNS = ['sources', 'staging', 'intermediate', 'marts', 'write-back models', 'outputs'];
const LAYER_COLUMN: Record<string, number> = { staging: 1, intermediate: 2, marts: 3, writeback: 4 };
const CHAR = 7.4; // px per character of 12px monospace (a little over the usual 7.2)
const ROW = 28;
const BOX = 20;
const GAP = 70;
const TOP = 48;
const PAD = 10;

const escape = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The graph's nodes: every source the models read, every model, and the outputs. */
export function lineageNodes(docs: readonly ModelDoc[]): Node[] {
  const models = new Set(docs.map((d) => d.name));
  const sources = [...new Set(docs.flatMap((d) => d.dependsOn).filter((n) => !models.has(n)))].sort();
  const nodes: Node[] = sources.map((s) => ({
    id: s,
    label: s.startsWith('lake_') ? relativeStreamDir(s.slice(5)) : s,
    stage: 0,
    column: 0,
    kind: 'source',
    title: s.startsWith('lake_')
      ? `the lake's ${s.slice(5)} stream (view ${s})`
      : `${s}: from ${SOURCE_FILES[s] ?? 'the output'}`,
    inputs: [],
  }));
  for (const d of docs)
    nodes.push({
      id: d.name,
      label: d.name,
      stage: LAYER_COLUMN[d.layer] ?? 3,
      column: 0,
      kind: 'model',
      title: `${d.name} (${d.layer}, ${d.materialized}): ${d.description}`.trim(),
      inputs: d.dependsOn,
    });
  for (const d of docs.filter((m) => m.layer === 'marts'))
    nodes.push({
      id: `export:${d.name}`,
      label: `marts/${d.name}.parquet`,
      stage: 5,
      column: 0,
      kind: 'output',
      title: `${d.name} exported for BI tools`,
      inputs: [d.name],
    });
  const writeback = docs.filter((m) => m.layer === 'writeback').map((m) => m.name);
  if (writeback.length)
    nodes.push({
      id: 'output:writeback',
      label: 'write-back → API interactions',
      stage: 5,
      column: 0,
      kind: 'output',
      title: 'perks writeback posts the rows of the write-back models to the API',
      inputs: writeback,
    });
  nodes.push({
    id: 'output:report',
    label: 'revenue report',
    stage: 5,
    column: 0,
    kind: 'output',
    title: 'perks report revenue: HTML, CSV, Markdown',
    inputs: [
      ...REPORT_TABLES.filter((t) => models.has(t)),
      ...REPORT_STREAMS.map((s) => `lake_${s}`).filter((s) => sources.includes(s)),
    ],
  });
  return inColumns(nodes);
}

/** Each node's column: its stage's, one further right for each model of its own stage it reads through. */
function inColumns(nodes: Node[]): Node[] {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const depth = new Map<string, number>();
  const depthOf = (n: Node): number => {
    if (!depth.has(n.id)) {
      depth.set(n.id, 0); // a cycle cannot be (the build refuses one); this only ends the recursion
      const same = n.inputs.map((i) => byId.get(i)).filter((i): i is Node => i?.stage === n.stage);
      depth.set(n.id, same.length ? 1 + Math.max(...same.map(depthOf)) : 0);
    }
    return depth.get(n.id)!;
  };
  const keys = [...new Set(nodes.map((n) => `${n.stage}:${depthOf(n)}`))].sort((a, b) => {
    const [sa, da] = a.split(':').map(Number);
    const [sb, db] = b.split(':').map(Number);
    return sa - sb || da - db;
  });
  for (const n of nodes) n.column = keys.indexOf(`${n.stage}:${depthOf(n)}`);
  return nodes;
}

/** Rows within each column: each node near the mean row of what it reads (one sweep left to right). */
function place(nodes: Node[]): number[] {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const heights: number[] = [];
  const columns = Math.max(...nodes.map((n) => n.column)) + 1;
  for (let c = 0; c < columns; c++) {
    const column = nodes.filter((n) => n.column === c);
    const wish = (n: Node) => {
      const ys = n.inputs.map((i) => byId.get(i)?.y).filter((y): y is number => y !== undefined);
      return ys.length ? ys.reduce((a, b) => a + b, 0) / ys.length : Number.MAX_SAFE_INTEGER;
    };
    column.sort((a, b) => wish(a) - wish(b) || a.label.localeCompare(b.label));
    column.forEach((n, i) => (n.y = TOP + i * ROW));
    heights.push(column.length);
  }
  return heights;
}

/** The SVG of the models' lineage. */
export function lineageSvg(docs: readonly ModelDoc[]): string {
  const nodes = lineageNodes(docs);
  const rows = Math.max(...place(nodes));
  // a column's heading: its stage's, over the stage's first column
  const heading = (c: number) => {
    const first = nodes.find((n) => n.column === c)!;
    return nodes.some((n) => n.stage === first.stage && n.column < c) ? '' : COLUMNS[first.stage];
  };
  const count = Math.max(...nodes.map((n) => n.column)) + 1;
  const widths = Array.from({ length: count }, (_, c) =>
    Math.ceil(
      Math.max(heading(c).length, ...nodes.filter((n) => n.column === c).map((n) => n.label.length)) * CHAR + 2 * PAD,
    ),
  );
  const xs = widths.map((_, c) => PAD + widths.slice(0, c).reduce((a, w) => a + w + GAP, 0));
  const width = xs[xs.length - 1] + widths[widths.length - 1] + PAD;
  const height = TOP + rows * ROW + PAD;
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const edges = nodes.flatMap((n) =>
    n.inputs.flatMap((i) => {
      const from = byId.get(i);
      if (!from) return [];
      const [x1, y1] = [xs[from.column] + widths[from.column], from.y! + BOX / 2];
      const [x2, y2] = [xs[n.column], n.y! + BOX / 2];
      const bend = (x2 - x1) / 2;
      return [`<path class="edge" d="M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}"/>`];
    }),
  );
  const headings = widths.flatMap((_, c) =>
    heading(c) ? [`<text class="heading" x="${xs[c] + PAD}" y="${TOP - 18}">${heading(c)}</text>`] : [],
  );
  const boxes = nodes.map(
    (n) =>
      `<g class="node ${n.kind}" data-id="${escape(n.id)}"><title>${escape(n.title)}</title>` +
      `<rect x="${xs[n.column]}" y="${n.y}" width="${widths[n.column]}" height="${BOX}" rx="4"/>` +
      `<text x="${xs[n.column] + PAD}" y="${n.y! + 14}">${escape(n.label)}</text></g>`,
  );
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${Math.ceil(width)}" height="${height}" viewBox="0 0 ${Math.ceil(width)} ${height}">`,
    '<title>perks models: lineage from the lake to the marts, the write-back and the report</title>',
    '<style>text{font:12px monospace;fill:#1b1f24}.heading{font-weight:bold;fill:#57606a}' +
      'rect{fill:#f6f8fa;stroke:#8c959f}.source rect{fill:#ddf4ff}.output rect{fill:#dafbe1}' +
      '.edge{fill:none;stroke:#8c959f;stroke-opacity:.55}</style>',
    ...headings,
    ...edges,
    ...boxes,
    '</svg>',
    '',
  ].join('\n');
}

/** Writes the picture (a temporary name renamed over the old one: a reader sees a whole file). */
export function writeLineagePicture(path: string, docs: readonly ModelDoc[]): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = tempPathFor(path);
  writeFileSync(temp, lineageSvg(docs));
  fsyncPathSync(temp);
  renameDurablySync(temp, path);
}
