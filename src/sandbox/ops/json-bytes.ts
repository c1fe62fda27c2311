/**
 * A growable UTF-8 buffer for writing JSON by hand: parts already encoded (bytes), and ASCII text such as
 * numbers printed by String() (the same digits JSON.stringify writes for a finite number).
 */
export class JsonBytes {
  private buf: Buffer;
  private pos = 0;

  constructor(capacity = 16 * 1024) {
    this.buf = Buffer.allocUnsafe(capacity);
  }

  raw(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** Text known to be ASCII (digits, punctuation), one byte per character. */
  ascii(text: string): void {
    this.room(text.length);
    for (let k = 0; k < text.length; k++) this.buf[this.pos++] = text.charCodeAt(k);
  }

  /** A finite number as JSON.stringify writes it. */
  number(value: number): void {
    this.ascii(String(value));
  }

  /** What was written (a view on the buffer, not a copy). */
  bytes(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }
}
