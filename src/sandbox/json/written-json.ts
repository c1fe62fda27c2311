/**
 * JSON already written, as replies carry it. A listing writes its records straight to bytes (a JsonList, see
 * ops/order-json.ts) and the envelope goes around them in the same buffer, so a page costs no object and no
 * stringify per record. The bytes must be exactly what JSON.stringify gives for the records, so answers do not
 * depend on the path they took. A pooled buffer travels with the reply until the server has sent it.
 */
import { JsonBytes } from './json-bytes.js';

/** JSON text, or the same text in UTF-8. */
export type Json = string | Uint8Array<ArrayBuffer>;

/** Room kept in front of a listing for the envelope's head ({"status":…,"timestamp":…,"current_page":…,"data":). */
const HEAD_ROOM = 256;

/** JSON already written, passed to jsonReply as it is; `buffer` is released once the reply is sent. */
export class JsonText {
  constructor(
    readonly json: Json,
    readonly buffer?: JsonBytes,
  ) {}
}

/** A listing's records written as a JSON array into a pooled buffer. */
export class JsonList {
  private constructor(private readonly out: JsonBytes) {}

  /** Writes a listing: `write` puts the array, brackets included, into `out`. */
  static write(write: (out: JsonBytes) => void): JsonList {
    const out = JsonBytes.pooled(HEAD_ROOM);
    write(out);
    return new JsonList(out);
  }

  /** The array's text; the buffer is given back. */
  text(): string {
    const text = this.out.bytes().toString('utf8');
    this.out.release();
    return text;
  }

  /** The records as objects (for drift, which changes records): JSON.stringify gives back the same text. */
  values(): Record<string, unknown>[] {
    return JSON.parse(this.text()) as Record<string, unknown>[];
  }

  /** `before` + the array + `after`, in the same buffer when `before` fits in front (it always does for the envelope). */
  wrap(before: string, after: string): JsonText {
    if (this.out.prepend(before)) {
      this.out.text(after);
      return new JsonText(this.out.bytes(), this.out);
    }
    return new JsonText(`${before}${this.text()}${after}`);
  }
}
