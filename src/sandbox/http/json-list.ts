/**
 * A listing's records already written as a JSON array, in UTF-8. The envelope splices the bytes in as they
 * are (respond.ts), so a page costs no object and no stringify per record. The bytes must be exactly what
 * JSON.stringify gives for the records, so answers do not depend on the path they took.
 */
export class JsonList {
  constructor(readonly bytes: Uint8Array) {}

  /** The records as objects (for drift, which changes records): JSON.stringify gives back the same text. */
  values(): Record<string, unknown>[] {
    return JSON.parse(Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength).toString('utf8')) as Record<string, unknown>[];
  }
}
