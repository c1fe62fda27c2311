/**
 * The lake's streams as the models see them (docs/dev/lake-contract.md): path partitions and the
 * columns inside the files, typed from the one zod declaration of each resource (src/resources/).
 * Knowing the columns lets a stream with no files yet still be an empty, typed relation.
 */
import { z } from 'zod';
import {
  Group,
  Interaction,
  OfferListItem,
  Order,
  OrderVersion,
  RedemptionStatsItem,
  UserCredit,
  UserListItem,
  lakeType,
} from '../../resources/index.js';

export interface LakeColumn {
  name: string;
  /** DuckDB type, e.g. BIGINT, DECIMAL(18,2), STRUCT(id BIGINT, name VARCHAR)[] */
  type: string;
}

export interface LakeStream {
  name: string;
  /** Hive partition columns: in the path only, never inside the files. */
  partitions: LakeColumn[];
  /** Columns inside the files, including _extracted_at, _run_id and _extra. */
  columns: LakeColumn[];
  /** Each `_snapshot_date` folder (of a group) holds a whole listing: the latest is the stream as it is now. */
  listing?: boolean;
}

const BIGINT = 'BIGINT';
const DATE = 'DATE';
const group = { name: 'organisation_group_id', type: BIGINT };
const snapshot = { name: '_snapshot_date', type: DATE };
const snapshotMonth = { name: '_snapshot_month', type: 'VARCHAR' };
const META: LakeColumn[] = [
  { name: '_extracted_at', type: 'TIMESTAMPTZ' },
  { name: '_run_id', type: 'VARCHAR' },
  // what the records carried beyond the declaration (src/lake/projector.ts); NULL in files landed before it
  { name: '_extra', type: 'JSON' },
];

/** DuckDB type of a zod schema: codecs name theirs in the lakeType registry; plain shapes map structurally. */
export function duckdbType(schema: z.ZodType): string {
  const hinted = lakeType.get(schema);
  if (hinted) return hinted.duckdb;
  const def = (schema as unknown as { _zod: { def: Record<string, unknown> & { type: string } } })._zod.def;
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
      return duckdbType(def.innerType as z.ZodType);
    case 'string':
    case 'enum':
    case 'literal':
      return 'VARCHAR';
    case 'int':
      return BIGINT;
    case 'number':
      return 'DOUBLE';
    case 'boolean':
      return 'BOOLEAN';
    case 'array':
      return `${duckdbType(def.element as z.ZodType)}[]`;
    case 'object':
      return `STRUCT(${objectColumns(schema as z.ZodObject)
        .map((c) => `"${c.name}" ${c.type}`)
        .join(', ')})`;
    default:
      return 'JSON';
  }
}

function objectColumns(schema: z.ZodObject, skip: string[] = []): LakeColumn[] {
  return Object.entries(schema.shape)
    .filter(([name]) => !skip.includes(name))
    .map(([name, field]) => ({ name, type: duckdbType(field as z.ZodType) }));
}

function stream(name: string, partitions: LakeColumn[], columns: LakeColumn[], listing = false): LakeStream {
  const inPath = partitions.map((p) => p.name);
  return {
    name,
    partitions,
    columns: [...columns.filter((c) => !inPath.includes(c.name)), ...META],
    ...(listing ? { listing } : {}),
  };
}

/** Every stream of the contract, in the contract's order. */
export const LAKE_STREAMS: LakeStream[] = [
  stream('groups', [group, snapshot], objectColumns(Group), true),
  stream('users', [group, snapshot], objectColumns(UserListItem), true),
  stream('offers', [snapshot], objectColumns(OfferListItem), true),
  // Month folders (order_month=YYYY-MM) whose files carry order_date, so a closed month is one file
  // (src/lake/month-layout.ts); a lake of the earlier layout has order_date in the path and no order_month.
  stream(
    'orders',
    [group, { name: 'order_month', type: 'VARCHAR' }],
    [{ name: 'order_date', type: DATE }, ...objectColumns(Order)],
  ),
  // The order history: each version of an order an extract observed (new or changed, or no longer listed:
  // is_removed), appended, never replaced.
  // Month folders like orders (a lake of the earlier layout has order_date in the path).
  stream(
    'order_versions',
    [group, { name: 'order_month', type: 'VARCHAR' }],
    [{ name: 'order_date', type: DATE }, ...objectColumns(OrderVersion), { name: 'is_removed', type: 'BOOLEAN' }],
  ),
  stream(
    'redemption_stats',
    [group, { name: 'window_start', type: DATE }],
    [...objectColumns(RedemptionStatsItem), { name: 'window_end', type: DATE }],
  ),
  // Refresh batches in month folders too (_snapshot_month=YYYY-MM), the refresh day a column.
  stream('credit', [group, snapshotMonth], [snapshot, { name: 'user_id', type: BIGINT }, ...objectColumns(UserCredit)]),
  stream('interactions', [group, snapshotMonth], [snapshot, ...objectColumns(Interaction)]),
  // The write-back ledger has no API resource: its columns are the contract's.
  stream(
    'writeback_ledger',
    [group, snapshot],
    [
      { name: 'interaction_id', type: BIGINT },
      { name: 'kind', type: 'VARCHAR' },
      { name: 'identifier', type: 'VARCHAR' },
      { name: 'identifier_value', type: 'VARCHAR' },
      { name: 'interaction_type', type: 'VARCHAR' },
      { name: 'interaction_at', type: 'TIMESTAMPTZ' },
      // not in the contract's table, but written by the write-back (what was sent): typed even with no files
      { name: 'interaction_details', type: 'JSON' },
      { name: 'status', type: 'VARCHAR' },
      { name: 'http_status', type: BIGINT },
      { name: 'message', type: 'VARCHAR' },
      { name: 'attempted_at', type: 'TIMESTAMPTZ' },
    ],
  ),
];

/** The view name a model uses for a raw stream: `lake_<stream>`. */
export const lakeViewName = (stream: string): string => `lake_${stream}`;
