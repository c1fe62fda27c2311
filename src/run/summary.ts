/** The one summary of a run: per stream rows and calls, per step status and time, where the files are. */
import { appendFileSync, existsSync } from 'node:fs';
import { formatExtractSummary } from '../extract/index.js';
import type { RunSummary } from './result.js';
import { changesLines, changesMarkdown } from './changes-text.js';

/** Rows of each mart the build exported (its Parquet file under <out>/marts/). */
export function martRows(s: RunSummary): { mart: string; rows: number }[] {
  return (s.build?.ok ? s.build.steps : [])
    .filter((st) => st.kind === 'export' && st.status === 'success')
    .map((st) => ({ mart: st.name.replace(/^marts\//, '').replace(/\.parquet$/, ''), rows: st.rows ?? 0 }));
}

export function formatRunSummary(s: RunSummary): string {
  const lines: string[] = [];
  if (s.extract) lines.push(formatExtractSummary(s.extract).trimEnd());
  lines.push('steps:');
  for (const st of s.steps)
    lines.push(
      `  ${st.name.padEnd(10)} ${st.status.padEnd(8)} ${(st.ms / 1000).toFixed(1).padStart(6)} s  ${st.detail}`,
    );
  lines.push(...changesLines(s.changes));
  const marts = martRows(s);
  const width = Math.max(0, ...marts.map((m) => m.mart.length));
  if (marts.length)
    lines.push('marts:', ...marts.map((m) => `  ${m.mart.padEnd(width)} ${String(m.rows).padStart(10)} rows`));
  // Only files that exist: after a failed extract there is no warehouse or marts folder to point at.
  const files = [
    ...(existsSync(s.files.warehouse) ? [`  warehouse  ${s.files.warehouse}`] : []),
    ...(existsSync(s.files.marts) ? [`  marts      ${s.files.marts}/`] : []),
    ...s.files.reports.filter((r) => existsSync(r)).map((r) => `  report     ${r}`),
  ];
  lines.push(...(files.length ? ['files:', ...files] : ['files: none written']));
  lines.push(...(s.alertLines ?? []));
  lines.push(`exit code ${s.exitCode}`);
  return `${lines.join('\n')}\n`;
}

export function markdownSummary(s: RunSummary): string {
  const rows = s.steps.map(
    (st) => `| ${st.name} | ${st.status} | ${(st.ms / 1000).toFixed(1)} s | ${st.detail.replace(/\|/g, '\\|')} |`,
  );
  const streams = (s.extract?.streams ?? []).map(
    (x) => `| ${x.name} | ${x.status} | ${x.rows} | ${x.calls} | ${x.rejected} |`,
  );
  const marts = martRows(s).map((m) => `| ${m.mart} | ${m.rows} |`);
  return [
    '## Perks data refresh',
    '',
    '| step | status | time | detail |',
    '|---|---|---|---|',
    ...rows,
    '',
    '| stream | status | rows | calls | quarantined |',
    '|---|---|---|---|---|',
    ...streams,
    '',
    ...(marts.length ? ['| mart | rows |', '|---|---|', ...marts, ''] : []),
    ...changesMarkdown(s.changes),
    ...(s.alertLines ?? []).map((l) => `${l}  `),
    `Exit code ${s.exitCode}.`,
    '',
  ].join('\n');
}

/** Appends the Markdown summary to the CI's step summary file (GITHUB_STEP_SUMMARY, src/config), when there is one. */
export function appendStepSummary(s: RunSummary, file: string | undefined): void {
  if (file) appendFileSync(file, markdownSummary(s));
}
