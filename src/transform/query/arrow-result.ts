/**
 * A DuckDB result as Arrow: the schema from DuckDB's column types, one record batch per DuckDB data chunk,
 * so pandas, Polars, R arrow or DuckDB take `perks sql` results with their types (DECIMAL, DATE,
 * TIMESTAMP, BIGINT, lists, structs) instead of parsing CSV. Types Arrow has no plain match for here
 * (INTERVAL, UUID, MAP, UNION, ENUM, BIT, …) travel as their DuckDB text.
 */
import * as A from 'apache-arrow';
import {
  DuckDBTypeId,
  type DuckDBBlobValue,
  type DuckDBDataChunk,
  type DuckDBDateValue,
  type DuckDBDecimalValue,
  type DuckDBListType,
  type DuckDBListValue,
  type DuckDBResult,
  type DuckDBStructType,
  type DuckDBStructValue,
  type DuckDBTimestampTZValue,
  type DuckDBTimestampValue,
  type DuckDBTimeValue,
  type DuckDBType,
  type DuckDBValue,
} from '../../shared/duckdb.js';

/** The Arrow type of each DuckDB type that has no parameters (a type not here travels as text). */
const PLAIN_TYPES: Partial<Record<DuckDBTypeId, () => A.DataType>> = {
  [DuckDBTypeId.BOOLEAN]: () => new A.Bool(),
  [DuckDBTypeId.TINYINT]: () => new A.Int8(),
  [DuckDBTypeId.SMALLINT]: () => new A.Int16(),
  [DuckDBTypeId.INTEGER]: () => new A.Int32(),
  [DuckDBTypeId.BIGINT]: () => new A.Int64(),
  [DuckDBTypeId.UTINYINT]: () => new A.Uint8(),
  [DuckDBTypeId.USMALLINT]: () => new A.Uint16(),
  [DuckDBTypeId.UINTEGER]: () => new A.Uint32(),
  [DuckDBTypeId.UBIGINT]: () => new A.Uint64(),
  [DuckDBTypeId.HUGEINT]: () => new A.Decimal(0, 38, 128),
  [DuckDBTypeId.FLOAT]: () => new A.Float32(),
  [DuckDBTypeId.DOUBLE]: () => new A.Float64(),
  [DuckDBTypeId.DATE]: () => new A.DateDay(),
  [DuckDBTypeId.TIME]: () => new A.TimeMicrosecond(),
  [DuckDBTypeId.TIMESTAMP]: () => new A.TimestampMicrosecond(),
  // the warehouse's session runs in UTC, and TIMESTAMPTZ values are instants
  [DuckDBTypeId.TIMESTAMP_TZ]: () => new A.TimestampMicrosecond('UTC'),
  [DuckDBTypeId.TIMESTAMP_S]: () => new A.TimestampSecond(),
  [DuckDBTypeId.TIMESTAMP_MS]: () => new A.TimestampMillisecond(),
  [DuckDBTypeId.TIMESTAMP_NS]: () => new A.TimestampNanosecond(),
  [DuckDBTypeId.BLOB]: () => new A.Binary(),
};

/** The Arrow type a DuckDB column becomes. */
export function arrowType(t: DuckDBType): A.DataType {
  switch (t.typeId) {
    case DuckDBTypeId.DECIMAL:
      return new A.Decimal(t.scale, t.width, 128);
    case DuckDBTypeId.LIST:
      return new A.List(new A.Field('item', arrowType(t.valueType), true));
    case DuckDBTypeId.STRUCT:
      return new A.Struct(t.entryNames.map((name, i) => new A.Field(name, arrowType(t.entryTypes[i]), true)));
    default:
      return PLAIN_TYPES[t.typeId]?.() ?? new A.Utf8();
  }
}

/** The Arrow schema of a result: its column names and types, every field nullable. */
export function arrowSchema(names: readonly string[], types: readonly DuckDBType[]): A.Schema {
  return new A.Schema(names.map((name, i) => new A.Field(name, arrowType(types[i]), true)));
}

/** Validity bitmap (bit set = value present) and the null count, as Arrow lays them out. */
function validity(values: readonly DuckDBValue[]): { nullBitmap: Uint8Array; nullCount: number } {
  const nullBitmap = new Uint8Array(Math.ceil(values.length / 8));
  let nullCount = 0;
  values.forEach((v, i) => {
    if (v === null) nullCount++;
    else nullBitmap[i >> 3] |= 1 << (i & 7);
  });
  return { nullBitmap, nullCount };
}

/** A 128-bit two's complement integer as Arrow's four little-endian 32-bit words. */
function putInt128(words: Uint32Array, at: number, v: bigint): void {
  for (let k = 0; k < 4; k++) words[at * 4 + k] = Number(BigInt.asUintN(32, v >> BigInt(32 * k)));
}

/** Fills `array` at each non-null value's position; null slots stay zero (the bitmap says they are null). */
function fixed<T>(
  values: readonly DuckDBValue[],
  array: T,
  put: (array: T, v: NonNullable<DuckDBValue>, i: number) => void,
): T {
  values.forEach((v, i) => {
    if (v !== null) put(array, v, i);
  });
  return array;
}

/** What every column's Arrow data holds: its type, its length and which of its values are null. */
interface ColumnBase {
  type: A.DataType;
  length: number;
  nullCount: number;
  nullBitmap: Uint8Array;
}

/** One column's values as Arrow data, for one kind of DuckDB type (see COLUMNS). */
type ColumnData = (base: ColumnBase, duck: DuckDBType, values: readonly DuckDBValue[]) => A.Data;

/** One column's values as Arrow data of `type`. */
export function arrowData(type: A.DataType, duck: DuckDBType, values: readonly DuckDBValue[]): A.Data {
  const { nullBitmap, nullCount } = validity(values);
  const data = COLUMNS[duck.typeId] ?? textColumn;
  return data({ type, length: values.length, nullCount, nullBitmap }, duck, values);
}

/** Booleans: one bit each, as the validity bitmap. */
const boolColumn: ColumnData = (base, _duck, values) => {
  const data = new Uint8Array(Math.ceil(base.length / 8));
  values.forEach((v, i) => {
    if (v === true) data[i >> 3] |= 1 << (i & 7);
  });
  return A.makeData({ ...base, type: base.type as A.Bool, data });
};

/** Integers of 32 bits at most and floats: the typed array of the Arrow type. */
const numberColumn: ColumnData = (base, _duck, values) => {
  const t = base.type as A.Int | A.Float;
  const data = fixed(values, new t.ArrayType(base.length) as unknown as number[], (a, v, i) => (a[i] = Number(v)));
  return A.makeData({ ...base, type: t, data } as never);
};

/** BIGINT and UBIGINT: DuckDB's bigints as they are. */
const bigintColumn: ColumnData = (base, duck, values) => {
  const data = fixed(
    values,
    duck.typeId === DuckDBTypeId.BIGINT ? new BigInt64Array(base.length) : new BigUint64Array(base.length),
    (a, v, i) => (a[i] = v as bigint),
  );
  return A.makeData({ ...base, type: base.type as A.Int64, data } as never);
};

/** HUGEINT and DECIMAL: 128-bit integers (a decimal's unscaled value). */
const int128Column: ColumnData = (base, _duck, values) => {
  const data = fixed(values, new Uint32Array(base.length * 4), (a, v, i) =>
    putInt128(a, i, typeof v === 'bigint' ? v : (v as DuckDBDecimalValue).value),
  );
  return A.makeData({ ...base, type: base.type as A.Decimal, data });
};

/** DATE: days since the epoch. */
const dateColumn: ColumnData = (base, _duck, values) => {
  const data = fixed(values, new Int32Array(base.length), (a, v, i) => (a[i] = (v as DuckDBDateValue).days));
  return A.makeData({ ...base, type: base.type as A.DateDay, data });
};

/** TIME, TIMESTAMP and TIMESTAMPTZ: microseconds. */
const microsColumn: ColumnData = (base, _duck, values) => {
  const data = fixed(
    values,
    new BigInt64Array(base.length),
    (a, v, i) => (a[i] = (v as DuckDBTimestampValue | DuckDBTimestampTZValue | DuckDBTimeValue).micros),
  );
  return A.makeData({ ...base, type: base.type as A.TimestampMicrosecond, data } as never);
};

/** TIMESTAMP_S, _MS and _NS: each in its own unit, as DuckDB holds it. */
const ticksColumn: ColumnData = (base, _duck, values) => {
  const ticks = (v: object) =>
    ('seconds' in v ? v.seconds : 'millis' in v ? v.millis : (v as { nanos: bigint }).nanos) as bigint;
  const data = fixed(values, new BigInt64Array(base.length), (a, v, i) => (a[i] = ticks(v as object)));
  return A.makeData({ ...base, type: base.type as A.TimestampSecond, data } as never);
};

/** BLOB: the bytes one after another, with their offsets. */
const blobColumn: ColumnData = (base, _duck, values) => {
  const parts = values.map((v) => (v === null ? new Uint8Array(0) : (v as DuckDBBlobValue).bytes));
  return A.makeData({ ...base, type: base.type as A.Binary, ...concat(parts) });
};

/** LIST: every list's items as one child column, with the offsets where each list starts. */
const listColumn: ColumnData = (base, duck, values) => {
  const items = values.map((v) => (v === null ? [] : (v as DuckDBListValue).items));
  const valueOffsets = new Int32Array(base.length + 1);
  items.forEach((list, i) => (valueOffsets[i + 1] = valueOffsets[i] + list.length));
  const t = base.type as A.List;
  const child = arrowData(t.children[0].type as A.DataType, (duck as DuckDBListType).valueType, items.flat());
  return A.makeData({ ...base, type: t, valueOffsets, child });
};

/** STRUCT: a child column per entry (null where the struct is null). */
const structColumn: ColumnData = (base, duck, values) => {
  const t = base.type as A.Struct;
  const { entryNames, entryTypes } = duck as DuckDBStructType;
  const children = entryNames.map((name, k) =>
    arrowData(
      t.children[k].type as A.DataType,
      entryTypes[k],
      values.map((v) => (v === null ? null : ((v as DuckDBStructValue).entries[name] ?? null))),
    ),
  );
  return A.makeData({ ...base, type: t, children });
};

/** Every other type: its DuckDB text, as UTF-8. */
const textColumn: ColumnData = (base, _duck, values) => {
  const encoder = new TextEncoder();
  const parts = values.map((v) =>
    v === null ? new Uint8Array(0) : encoder.encode(typeof v === 'string' ? v : String(v)),
  );
  return A.makeData({ ...base, type: base.type as A.Utf8, ...concat(parts) });
};

/** How each DuckDB type's values become Arrow data (a type not here: textColumn). */
const COLUMNS: Partial<Record<DuckDBTypeId, ColumnData>> = {
  [DuckDBTypeId.BOOLEAN]: boolColumn,
  [DuckDBTypeId.TINYINT]: numberColumn,
  [DuckDBTypeId.SMALLINT]: numberColumn,
  [DuckDBTypeId.INTEGER]: numberColumn,
  [DuckDBTypeId.UTINYINT]: numberColumn,
  [DuckDBTypeId.USMALLINT]: numberColumn,
  [DuckDBTypeId.UINTEGER]: numberColumn,
  [DuckDBTypeId.FLOAT]: numberColumn,
  [DuckDBTypeId.DOUBLE]: numberColumn,
  [DuckDBTypeId.BIGINT]: bigintColumn,
  [DuckDBTypeId.UBIGINT]: bigintColumn,
  [DuckDBTypeId.HUGEINT]: int128Column,
  [DuckDBTypeId.DECIMAL]: int128Column,
  [DuckDBTypeId.DATE]: dateColumn,
  [DuckDBTypeId.TIME]: microsColumn,
  [DuckDBTypeId.TIMESTAMP]: microsColumn,
  [DuckDBTypeId.TIMESTAMP_TZ]: microsColumn,
  [DuckDBTypeId.TIMESTAMP_S]: ticksColumn,
  [DuckDBTypeId.TIMESTAMP_MS]: ticksColumn,
  [DuckDBTypeId.TIMESTAMP_NS]: ticksColumn,
  [DuckDBTypeId.BLOB]: blobColumn,
  [DuckDBTypeId.LIST]: listColumn,
  [DuckDBTypeId.STRUCT]: structColumn,
};

function concat(parts: readonly Uint8Array[]): { valueOffsets: Int32Array; data: Uint8Array } {
  const valueOffsets = new Int32Array(parts.length + 1);
  parts.forEach((p, i) => (valueOffsets[i + 1] = valueOffsets[i] + p.length));
  const data = new Uint8Array(valueOffsets[parts.length]);
  parts.forEach((p, i) => data.set(p, valueOffsets[i]));
  return { valueOffsets, data };
}

/** One DuckDB data chunk as one Arrow record batch of `schema`. */
export function chunkToBatch(schema: A.Schema, types: readonly DuckDBType[], chunk: DuckDBDataChunk): A.RecordBatch {
  const children = schema.fields.map((f, i) => arrowData(f.type as A.DataType, types[i], chunk.getColumnValues(i)));
  const struct = A.makeData({ type: new A.Struct(schema.fields), length: chunk.rowCount, nullCount: 0, children });
  return new A.RecordBatch(schema, struct);
}

/** Streams a result as Arrow IPC (the stream format) into `write`, chunk by chunk; returns the rows written. */
export async function writeArrowStream(
  result: DuckDBResult,
  write: (bytes: Uint8Array) => Promise<void>,
): Promise<number> {
  const types = result.columnTypes();
  const schema = arrowSchema(result.columnNames(), types);
  const writer = new A.RecordBatchStreamWriter();
  // the writer is an async iterable of the IPC bytes: pass them on as they come
  const pump = (async () => {
    for await (const bytes of writer) await write(bytes as Uint8Array);
  })();
  let rows = 0;
  try {
    writer.reset(undefined, schema);
    for (
      let chunk = await result.fetchChunk();
      chunk !== null && chunk.rowCount > 0;
      chunk = await result.fetchChunk()
    ) {
      writer.write(chunkToBatch(schema, types, chunk));
      rows += chunk.rowCount;
    }
  } finally {
    writer.finish();
    await pump;
  }
  return rows;
}
