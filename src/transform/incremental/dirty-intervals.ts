/**
 * Deciding which intervals (`<group>/<YYYY-MM>`) of a model built by intervals are dirty, from its state in this
 * build against the previous build's (ModelState: its lake folders' and upstream models' fingerprints), or why it
 * must be built whole. Decisions only: nothing here reads or writes the warehouse (the lookups, which must read
 * it, are lookups.ts).
 */
import type { Intervals } from '../models/header.js';
import type { Node } from '../models/model-graph.js';
import type { ModelState } from './build-state.js';
import { EDGE_DAYS, edgeInput } from './fingerprints.js';
import { monthPlus } from './interval-sql.js';
import type { StagedLookup } from './lookups.js';

/** What the previous build left, against which a model's state in this build is read. */
export interface PreviousBuild {
  /** The states of the warehouse this build started from; null: build every model whole (--full). */
  previous: Map<string, ModelState> | null;
  previousTables: Set<string>;
  /** The models that declare their intervals (`intervals:` or `incremental:`), by name. */
  intervalsOf: Map<string, Intervals>;
}

/** What a model built by intervals reads: its lake views and its upstream models (its lookups aside). */
export interface ModelInputs {
  lakeDeps: string[];
  modelDeps: string[];
  /** Why the lake cannot be read by intervals (lake-files.ts), else undefined. */
  unsupported: string | undefined;
}

/** Why the model must be built whole rather than by intervals; undefined when intervals will do. */
export function wholeBuildReason(
  build: PreviousBuild,
  model: Node,
  current: ModelState,
  { lakeDeps, modelDeps, unsupported }: ModelInputs,
  lookups: StagedLookup[],
): string | undefined {
  const inc = model.header.incremental!;
  const stray = inc.edges.find((e) => !modelDeps.includes(e) || !build.intervalsOf.has(e));
  const prev = build.previous?.get(model.name);
  if (build.previous === null) return 'asked for (--full)';
  if (!prev || !build.previousTables.has(model.name)) return 'no earlier build of it';
  if (prev.sql !== current.sql) return 'its SQL changed';
  if (prev.settings !== current.settings) return 'a setting it reads changed';
  if (unsupported !== undefined) return unsupported;
  if (lookups.some((l) => !l.previous)) return 'no earlier state of its lookups';
  if (lookups.length && lakeDeps.length > 1) return 'a lookup needs one lake stream at most';
  if (stray !== undefined) return `its edges: model ${stray} is not an upstream model that declares its intervals`;
  // a model built from models matches its rows by key: the key must fix the interval (see incremental.ts' comment)
  const keyed = [inc.group, inc.time].every((c) => model.header.key!.includes(c));
  if (lakeDeps.length === 0 && !keyed) return `its key lacks ${inc.group} or ${inc.time}`;
  return undefined;
}

/** The intervals (`<group>/<YYYY-MM>`) whose lake files changed since the previous build. */
export function changedPartitions(prev: ModelState, current: ModelState): Set<string> {
  const dirty = new Set<string>();
  for (const key of new Set([...Object.keys(prev.partitions), ...Object.keys(current.partitions)]))
    if (prev.partitions[key] !== current.partitions[key]) dirty.add(key.slice(key.indexOf('/') + 1));
  return dirty;
}

/**
 * Adds to `dirty` the intervals an upstream model's changes dirty: its changed intervals (a model that declares
 * them), else every interval `known` (now or at the previous build) of a group it changed in. Returns the first
 * upstream model that changed without a group column (the model is then built whole), else undefined.
 */
export function dirtyFromModels(
  dirty: Set<string>,
  prev: ModelState,
  current: ModelState,
  modelDeps: string[],
  known: string[],
): string | undefined {
  for (const dep of modelDeps) {
    const before = prev.inputs[dep] ?? {};
    const now = current.inputs[dep];
    // keys: a group's interval (`<group>/<YYYY-MM>`) of a model that declares its intervals, else a group
    for (const key of new Set([...Object.keys(before), ...Object.keys(now)])) {
      if (before[key] === now[key]) continue;
      if (key === '*') return dep;
      if (key.includes('/')) dirty.add(key);
      else for (const interval of known) if (interval.startsWith(`${key}/`)) dirty.add(interval);
    }
  }
  return undefined;
}

/**
 * Adds to `dirty` the month before each group-month whose rows on its first day changed in an `edges:` model, and
 * the month after each whose rows on its last day did (only the months some state knows of: a month with no rows
 * anywhere has nothing to rebuild).
 */
export function dirtyFromEdges(
  dirty: Set<string>,
  prev: ModelState,
  current: ModelState,
  edges: string[],
  known: Set<string>,
): void {
  for (const dep of edges)
    for (const day of EDGE_DAYS) {
      const before = prev.inputs[edgeInput(dep, day)] ?? {};
      const now = current.inputs[edgeInput(dep, day)] ?? {};
      for (const key of new Set([...Object.keys(before), ...Object.keys(now)])) {
        if (before[key] === now[key] || !key.includes('/')) continue;
        const [g, month] = key.split('/');
        const beside = `${g}/${monthPlus(month, day === 'first' ? -1 : 1)}`;
        if (known.has(beside)) dirty.add(beside);
      }
    }
}

/** The group-months a state knows of: its lake partitions' and its upstream models' intervals. */
export function intervalsIn(state: ModelState): Set<string> {
  return new Set([
    ...Object.keys(state.partitions).map((k) => k.slice(k.indexOf('/') + 1)),
    ...Object.values(state.inputs).flatMap((byKey) => Object.keys(byKey).filter((k) => k.includes('/'))),
  ]);
}
