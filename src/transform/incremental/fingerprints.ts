/**
 * The fingerprints of a model's upstream models in this build (ModelState.inputs): the count and hash of each
 * one's rows per group-month, per group or whole, and an `edges:` model's rows on a month's first and last days
 * apart. What the dirty intervals are decided from (dirty-intervals.ts), against the previous build's. A model
 * built by intervals in this build is hashed again only in the intervals it replaced, the rest carried over from
 * the previous build's fingerprint; one with the rows it had then is not read at all.
 */
import { type DuckDBConnection } from '../../shared/duckdb.js';
import type { Incremental, Intervals } from '../models/header.js';
import { digestSql, digestWithEdgesSql, edgeDigestsSql, hasColumnSql } from './digest-sql.js';

/** A month's edge days an `edges:` model's rows are hashed on apart: a change on one dirties the month beside it. */
export const EDGE_DAYS = ['first', 'last'] as const;
export type EdgeDay = (typeof EDGE_DAYS)[number];

/** An `edges:` model's fingerprints of its rows on a month's first day and on its last day. */
type EdgeFingerprints = Record<EdgeDay, Record<string, string>>;

/** The key of an `edges:` model's fingerprint of its rows on a month's first or last day (ModelState.inputs). */
export const edgeInput = (model: string, day: EdgeDay): string => `${model}#${day}`;

export class Fingerprints {
  /**
   * Each upstream model's fingerprint (by table and group column) once computed in this build: a table does not
   * change once built, and two marts read the same ones (stg_orders, stg_redemption_stats).
   */
  private readonly known = new Map<string, Record<string, string>>();

  constructor(
    private readonly conn: DuckDBConnection,
    /** The models that declare their intervals (`intervals:` or `incremental:`), by name. */
    private readonly intervalsOf: Map<string, Intervals>,
    /** Whether a model's rows are the ones it had at the previous build (model-versions.ts). */
    private readonly unchangedSinceLastBuild: (model: string) => boolean,
    /** The intervals a model built by intervals replaced in this build (undefined: built whole, or not yet). */
    private readonly replaced: (model: string) => Set<string> | undefined,
  ) {}

  /**
   * The fingerprints of a model's upstream models `deps` (ModelState.inputs), those of an `edges:` model's edge
   * days beside its own; `before`: the previous build's.
   */
  async inputs(
    inc: Incremental,
    deps: string[],
    before: Record<string, Record<string, string>> | undefined,
  ): Promise<Record<string, Record<string, string>>> {
    const inputs: Record<string, Record<string, string>> = {};
    for (const dep of deps) {
      if (!inc.edges.includes(dep) || !this.intervalsOf.has(dep)) {
        inputs[dep] = await this.fingerprint(dep, inc.group, before?.[dep]);
        continue;
      }
      const edgesBefore = { first: before?.[edgeInput(dep, 'first')], last: before?.[edgeInput(dep, 'last')] };
      const both = await this.fingerprintWithEdges(dep, inc.group, before?.[dep], edgesBefore);
      inputs[dep] = both.all;
      for (const day of EDGE_DAYS) inputs[edgeInput(dep, day)] = both[day];
    }
    return inputs;
  }

  /**
   * The count and hash of an upstream model's rows per group-month (`<group>/<YYYY-MM>`) when it declares its
   * intervals, else per group, or `*` without a group column (or for rows of no group or month).
   */
  private async fingerprint(
    table: string,
    group: string,
    before: Record<string, string> | undefined,
  ): Promise<Record<string, string>> {
    const known = this.known.get(`${table}/${group}`);
    if (known) return { ...known };
    // its rows are those the previous build hashed (the same group column: the model's own)
    const now =
      before && this.unchangedSinceLastBuild(table) ? before : await this.computeFingerprint(table, group, before);
    this.known.set(`${table}/${group}`, now);
    return { ...now };
  }

  /**
   * An `edges:` model's fingerprint (as `fingerprint`) and those of its rows on a month's first day and on its last
   * day, in one scan when neither is known yet in this build and the previous build's can be carried alike (about
   * 0.1 CPU-s a next day less than two scans); else each on its own.
   */
  private async fingerprintWithEdges(
    table: string,
    group: string,
    before: Record<string, string> | undefined,
    edgesBefore: Partial<EdgeFingerprints>,
  ): Promise<EdgeFingerprints & { all: Record<string, string> }> {
    const iv = this.intervalsOf.get(table)!;
    const replaced = this.replaced(table);
    const keptAll = !!replaced && isCarried(before);
    const keptEdges = !!replaced && isCarried(edgesBefore.first) && isCarried(edgesBefore.last);
    const separate =
      this.known.has(`${table}/${group}`) ||
      this.known.has(edgeInput(table, 'first')) ||
      (before && this.unchangedSinceLastBuild(table)) ||
      keptAll !== keptEdges ||
      iv.group !== group;
    if (separate)
      return {
        all: await this.fingerprint(table, group, before),
        ...(await this.edgeFingerprints(table, edgesBefore)),
      };
    const r = await this.conn.runAndReadAll(digestWithEdgesSql(table, iv, keptAll ? replaced : undefined));
    const rows = r.getRowObjectsJson() as { g: string; fp: string; first: string | null; last: string | null }[];
    const of = (column: 'fp' | EdgeDay, from: Record<string, string> | undefined) =>
      mergeReplaced(
        keptAll ? from : undefined,
        // a row of no group or month is in the whole fingerprint (`*`), never at an edge
        Object.fromEntries(
          rows.flatMap((row) =>
            row[column] === null || (column !== 'fp' && row.g === '*') ? [] : [[row.g, row[column]]],
          ),
        ),
        keptAll ? replaced : undefined,
      );
    const now = { all: of('fp', before), first: of('first', edgesBefore.first), last: of('last', edgesBefore.last) };
    this.known.set(`${table}/${group}`, now.all);
    for (const day of EDGE_DAYS) this.known.set(edgeInput(table, day), now[day]);
    return { all: { ...now.all }, first: { ...now.first }, last: { ...now.last } };
  }

  /**
   * An `edges:` model's count and hash of its rows on a month's first day, and of those on its last day, per
   * group-month: one scan of its rows on those days (of the intervals it replaced in this build, when it did).
   */
  private async edgeFingerprints(table: string, before: Partial<EdgeFingerprints>): Promise<EdgeFingerprints> {
    const known = this.known.get(edgeInput(table, 'first'));
    if (known) return { first: { ...known }, last: { ...this.known.get(edgeInput(table, 'last'))! } };
    const { first, last } = before;
    const kept = isCarried(first) && isCarried(last);
    let now: EdgeFingerprints;
    if (kept && this.unchangedSinceLastBuild(table)) now = { first: first, last: last };
    else {
      const iv = this.intervalsOf.get(table)!;
      const replaced = kept ? this.replaced(table) : undefined;
      const r = await this.conn.runAndReadAll(edgeDigestsSql(table, iv, replaced));
      const rows = r.getRowObjectsJson() as { day: EdgeDay; g: string; fp: string }[];
      const of = (day: EdgeDay) =>
        mergeReplaced(
          replaced ? before[day] : undefined,
          Object.fromEntries(rows.filter((row) => row.day === day).map((row) => [row.g, row.fp])),
          replaced,
        );
      now = { first: of('first'), last: of('last') };
    }
    for (const day of EDGE_DAYS) this.known.set(edgeInput(table, day), now[day]);
    return { first: { ...now.first }, last: { ...now.last } };
  }

  private async computeFingerprint(
    table: string,
    group: string,
    before: Record<string, string> | undefined,
  ): Promise<Record<string, string>> {
    const iv = this.intervalsOf.get(table);
    // A model built by intervals in this build: its other intervals' rows are the ones the last build hashed
    // (the same warehouse's), so only the intervals it replaced are hashed again (a scan of those alone).
    const replaced = this.replaced(table);
    const only = iv && replaced && isCarried(before) ? replaced : undefined;
    const cols = await this.conn.runAndReadAll(hasColumnSql(table), { group });
    const byGroup = Number(cols.getRowObjectsJson()[0].n) > 0;
    const r = await this.conn.runAndReadAll(digestSql(table, group, { iv, byGroup, replaced: only }));
    const now = Object.fromEntries(
      (r.getRowObjectsJson() as { g: string; fp: string }[]).map((row) => [row.g, row.fp]),
    );
    return only ? mergeReplaced(before, now, replaced) : now;
  }
}

/** Whether a previous build's fingerprint is kept per group-month, so that its intervals not replaced carry over. */
function isCarried(before: Record<string, string> | undefined): before is Record<string, string> {
  return before !== undefined && !('*' in before) && Object.keys(before).every((k) => k.includes('/'));
}

/**
 * A fingerprint of the intervals `replaced` hashed again (`now`) over the previous build's (`before`): the other
 * intervals' rows are those it hashed. Without `replaced`, `now` is the whole fingerprint.
 */
function mergeReplaced(
  before: Record<string, string> | undefined,
  now: Record<string, string>,
  replaced: Set<string> | undefined,
): Record<string, string> {
  if (!replaced || !before) return now;
  return { ...Object.fromEntries(Object.entries(before).filter(([k]) => !replaced.has(k))), ...now };
}
