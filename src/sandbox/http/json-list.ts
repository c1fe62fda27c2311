/**
 * A listing's records already written as JSON text, one string per record. The envelope splices them in
 * as they are (respond.ts), so a page costs one join instead of an object and a stringify per record.
 * The text must be exactly what JSON.stringify gives for the record, so answers do not depend on the path.
 */
export class JsonList {
  constructor(readonly items: readonly string[]) {}

  /** The array's JSON text, as JSON.stringify would write the parsed records. */
  text(): string {
    return `[${this.items.join(',')}]`;
  }

  /** The records as objects (for drift, which changes records): JSON.stringify gives back each item's text. */
  values(): Record<string, unknown>[] {
    return this.items.map((item) => JSON.parse(item) as Record<string, unknown>);
  }
}
