/** The HTML report's stylesheet: inline, system fonts only, with print rules for A4 paper. */
export const HTML_STYLE =
  `
:root { --ink: #1d2433; --muted: #5b6475; --line: #d9dee7; --soft: #f4f6f9; --accent: #2f5aa8;
  --ok: #1f7a4a; --ok-bg: #e7f5ed; --warn: #8a5a00; --warn-bg: #fff4dc; --bad: #a1261d; --bad-bg: #fdeceb; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 28px 32px 48px; }
header.masthead { border-bottom: 3px solid var(--accent); padding-bottom: 12px; margin-bottom: 18px; }
.eyebrow { margin: 0; color: var(--accent); font-weight: 600; letter-spacing: .06em; text-transform: uppercase; font-size: 12px; }
h1 { margin: 4px 0 6px; font-size: 26px; }
h2 { font-size: 20px; margin: 28px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h2 .sub, h3 .sub { color: var(--muted); font-weight: 400; font-size: 14px; margin-left: 8px; }
h3 { font-size: 16px; margin: 18px 0 8px; }
h4 { font-size: 13px; margin: 14px 0 6px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
.meta { margin: 0; color: var(--muted); font-size: 12.5px; }
.status { border-radius: 6px; padding: 12px 16px; margin: 0 0 18px; border: 1px solid; }
.status p { margin: 0; }
.status ul { margin: 6px 0 0; padding-left: 20px; }
.status-final, .status-signed_off { background: var(--ok-bg); border-color: var(--ok); color: var(--ok); }
.status-provisional, .status-partial { background: var(--warn-bg); border-color: var(--warn); color: var(--warn); }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 11.5px; font-weight: 700; ` +
  `letter-spacing: .05em; text-transform: uppercase; border: 1px solid currentColor; }
.badge.final, .badge.signed_off { color: var(--ok); } .badge.provisional, .badge.partial { color: var(--warn); }
.badge.ok { color: var(--ok); } .badge.bad { color: var(--bad); }
.badge.test { color: var(--muted); font-size: 10px; padding: 0 6px; }
tr.not-counted th, tr.not-counted td { color: var(--muted); font-style: italic; }
tr.current th, tr.current td { background: var(--soft); }
.state { display: inline-block; margin-left: 4px; padding: 0 5px; border-radius: 8px; border: 1px solid currentColor; ` +
  `font-size: 10.5px; font-weight: 600; color: var(--warn); text-transform: uppercase; letter-spacing: .04em; font-variant-numeric: normal; }
.from { color: var(--muted); font-weight: 400; font-size: 11.5px; }
.on-paper { display: none; }
.test-groups { color: var(--muted); }
.credit-gaps { padding-left: 20px; }
table { border-collapse: collapse; width: 100%; margin: 6px 0 12px; font-size: 13px; }
caption { text-align: left; color: var(--muted); font-size: 12px; padding-bottom: 4px; caption-side: top; }
th, td { padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
thead th { background: var(--soft); text-align: left; font-weight: 600; border-bottom: 2px solid var(--line); }
th[scope=row] { text-align: left; font-weight: 500; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.total th, tr.total td { font-weight: 700; border-top: 2px solid var(--ink); }
.up { color: var(--ok); } .down { color: var(--bad); }
.currency { border: 1px solid var(--line); border-radius: 8px; padding: 4px 16px 12px; margin: 12px 0 18px; }
.split { display: grid; grid-template-columns: 3fr 2fr; gap: 18px; align-items: start; }
.split.trend-pair { grid-template-columns: 1fr 1fr; margin-bottom: 14px; }
figure { margin: 0; }
.wide { overflow-x: auto; max-width: 100%; }
.split > div { min-width: 0; }
figcaption { color: var(--muted); font-size: 12px; margin-top: 2px; }
svg.chart { width: 100%; height: auto; display: block; }
svg .bar { fill: var(--accent); } svg .bar.negative { fill: var(--bad); } svg .bar.noted { fill-opacity: .4; }
svg .grid { stroke: var(--line); stroke-width: 1; } svg .grid.zero { stroke: #8a93a6; }
svg text { font-size: 13px; fill: var(--muted); font-family: inherit; }
.empty { color: var(--muted); font-style: italic; }
nav.toc { font-size: 13px; color: var(--muted); } nav.toc a { color: var(--accent); text-decoration: none; margin-right: 12px; }
footer { margin-top: 32px; padding-top: 10px; border-top: 1px solid var(--line); color: var(--muted); font-size: 12px; }
@media (max-width: 1000px) { .split { grid-template-columns: 1fr; } }
/* a trend's chart and table side by side on paper (A4, 8 pt tables), one above the other on a screen below 1000 px */
@media screen and (max-width: 1000px) { .split.trend-pair { grid-template-columns: 1fr; } }
@media (max-width: 760px) { main { padding: 16px; } }
/* A table becomes cards of "header: value" lines when its box is narrower than it needs (html-reflow.ts: the
   rules per width, after this sheet); each box is a size container for them. */
.wide { container: wide / inline-size; }
@media print {
  @page { size: A4; margin: 14mm 12mm; }
  body { font-size: 10pt; }
  table { font-size: 8pt; }
  th, td { padding: 3px 4px; }
  .wide { overflow: visible; }
  .currency { padding: 2px 10px 8px; }
  main { max-width: none; padding: 0; }
  nav.toc { display: none; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  section.group { break-before: page; }
  thead { display: table-header-group; }
  tr, figure, .status { break-inside: avoid; }
  caption { break-after: avoid; }
  h2, h3, h4 { break-after: avoid; }
  a { color: inherit; text-decoration: none; }
  .on-screen { display: none; } .on-paper { display: inline; }
}
`;
