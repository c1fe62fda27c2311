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
  type DuckDBListValue,
  type DuckDBResult,
  type DuckDBStructValue,
  type DuckDBTimestampTZValue,
  type DuckDBTimestampValue,
  type DuckDBTimeValue,
  type DuckDBType,
  type DuckDBValue,
} from '../../shared/duckdb.js';

/** The Arrow type a DuckDB column becomes. */
export function arrowType(t: DuckDBType): A.DataType {
  switch (t.typeId) {
    case DuckDBTypeId.BOOLEAN:
      return new A.Bool();
    case DuckDBTypeId.TINYINT:
      return new A.Int8();
    case DuckDBTypeId.SMALLINT:
      return new A.Int16();
    case DuckDBTypeId.INTEGER:
      return new A.Int32();
    case DuckDBTypeId.BIGINT:
      return new A.Int64();
    case DuckDBTypeId.UTINYINT:
      return new A.Uint8();
    case DuckDBTypeId.USMALLINT:
      return new A.Uint16();
    case DuckDBTypeId.UINTEGER:
      return new A.Uint32();
    case DuckDBTypeId.UBIGINT:
      return new A.Uint64();
    case DuckDBTypeId.HUGEINT:
      return new A.Decimal(0, 38, 128);
    case DuckDBTypeId.FLOAT:
      return new A.Float32();
    case DuckDBTypeId.DOUBLE:
      return new A.Float64();
    case DuckDBTypeId.DECIMAL:
      return new A.Decimal(t.scale, t.width, 128);
    case DuckDBTypeId.DATE:
      return new A.DateDay();
    case DuckDBTypeId.TIME:
      return new A.TimeMicrosecond();
    case DuckDBTypeId.TIMESTAMP:
      return new A.TimestampMicrosecond();
    // the warehouse's session runs in UTC, and TIMESTAMPTZ values are instants
    case DuckDBTypeId.TIMESTAMP_TZ:
      return new A.TimestampMicrosecond('UTC');
    case DuckDBTypeId.TIMESTAMP_S:
      return new A.TimestampSecond();
    case DuckDBTypeId.TIMESTAMP_MS:
      return new A.TimestampMillisecond();
    case DuckDBTypeId.TIMESTAMP_NS:
      return new A.TimestampNanosecond();
    case DuckDBTypeId.BLOB:
      return new A.Binary();
    case DuckDBTypeId.LIST:
      return new A.List(new A.Field('item', arrowType(t.valueType), true));
    case DuckDBTypeId.STRUCT:
      return new A.Struct(t.entryNames.map((name, i) => new A.Field(name, arrowType(t.entryTypes[i]), true)));
    default:
      return new A.Utf8();
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

/** One column's values as Arrow data of `type`. */
export function arrowData(type: A.DataType, duck: DuckDBType, values: readonly DuckDBValue[]): A.Data {
  const n = values.length;
  const { nullBitmap, nullCount } = validity(values);
  const base = { type, length: n, nullCount, nullBitmap } as const;
  switch (duck.typeId) {
    case DuckDBTypeId.BOOLEAN: {
      const data = new Uint8Array(Math.ceil(n / 8));
      values.forEach((v, i) => {
        if (v === true) data[i >> 3] |= 1 << (i & 7);
      });
      return A.makeData({ ...base, type: type as A.Bool, data });
    }
    case DuckDBTypeId.TINYINT:
    case DuckDBTypeId.SMALLINT:
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.UTINYINT:
    case DuckDBTypeId.USMALLINT:
    case DuckDBTypeId.UINTEGER:
    case DuckDBTypeId.FLOAT:
    case DuckDBTypeId.DOUBLE: {
      const t = type as A.Int | A.Float;
      const data = fixed(values, new t.ArrayType(n) as unknown as number[], (a, v, i) => (a[i] = Number(v)));
      return A.makeData({ ...base, type: t, data } as never);
    }
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UBIGINT: {
      const data = fixed(
        values,
        duck.typeId === DuckDBTypeId.BIGINT ? new BigInt64Array(n) : new BigUint64Array(n),
        (a, v, i) => (a[i] = v as bigint),
      );
      return A.makeData({ ...base, type: type as A.Int64, data } as never);
    }
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.DECIMAL: {
      const data = fixed(values, new Uint32Array(n * 4), (a, v, i) =>
        putInt128(a, i, typeof v === 'bigint' ? v : (v as DuckDBDecimalValue).value),
      );
      return A.makeData({ ...base, type: type as A.Decimal, data });
    }
    case DuckDBTypeId.DATE: {
      const data = fixed(values, new Int32Array(n), (a, v, i) => (a[i] = (v as DuckDBDateValue).days));
      return A.makeData({ ...base, type: type as A.DateDay, data });
    }
    case DuckDBTypeId.TIME:
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_TZ: {
      const data = fixed(
        values,
        new BigInt64Array(n),
        (a, v, i) => (a[i] = (v as DuckDBTimestampValue | DuckDBTimestampTZValue | DuckDBTimeValue).micros),
      );
      return A.makeData({ ...base, type: type as A.TimestampMicrosecond, data } as never);
    }
    case DuckDBTypeId.TIMESTAMP_S:
    case DuckDBTypeId.TIMESTAMP_MS:
    case DuckDBTypeId.TIMESTAMP_NS: {
      // each in its own unit, as DuckDB holds it
      const ticks = (v: object) =>
        ('seconds' in v ? v.seconds : 'millis' in v ? v.millis : (v as { nanos: bigint }).nanos) as bigint;
      const data = fixed(values, new BigInt64Array(n), (a, v, i) => (a[i] = ticks(v as object)));
      return A.makeData({ ...base, type: type as A.TimestampSecond, data } as never);
    }
    case DuckDBTypeId.BLOB: {
      const parts = values.map((v) => (v === null ? new Uint8Array(0) : (v as DuckDBBlobValue).bytes));
      return A.makeData({ ...base, type: type as A.Binary, ...concat(parts) });
    }
    case DuckDBTypeId.LIST: {
      const items = values.map((v) => (v === null ? [] : (v as DuckDBListValue).items));
      const valueOffsets = new Int32Array(n + 1);
      items.forEach((list, i) => (valueOffsets[i + 1] = valueOffsets[i] + list.length));
      const t = type as A.List;
      const child = arrowData(t.children[0].type as A.DataType, duck.valueType, items.flat());
      return A.makeData({ ...base, type: t, valueOffsets, child });
    }
    case DuckDBTypeId.STRUCT: {
      const t = type as A.Struct;
      const children = duck.entryNames.map((name, k) =>
        arrowData(
          t.children[k].type as A.DataType,
          duck.entryTypes[k],
          values.map((v) => (v === null ? null : ((v as DuckDBStructValue).entries[name] ?? null))),
        ),
      );
      return A.makeData({ ...base, type: t, children });
    }
    default: {
      const encoder = new TextEncoder();
      const parts = values.map((v) =>
        v === null ? new Uint8Array(0) : encoder.encode(typeof v === 'string' ? v : String(v)),
      );
      return A.makeData({ ...base, type: type as A.Utf8, ...concat(parts) });
    }
  }
}

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
