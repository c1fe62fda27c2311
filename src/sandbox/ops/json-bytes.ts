/**
 * A growable UTF-8 buffer for writing JSON by hand: parts already encoded (bytes), and numbers written digit
 * by digit with the same digits JSON.stringify gives (test/sandbox/json-bytes.test.ts compares them).
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

  /** Bytes [start, end) of `from`, copied one by one: short parts, where a copy call would cost more. */
  copy(from: Uint8Array, start: number, end: number): void {
    this.room(end - start);
    const buf = this.buf;
    let pos = this.pos;
    for (let k = start; k < end; k++) buf[pos++] = from[k];
    this.pos = pos;
  }

  /** One ASCII character by its code. */
  char(code: number): void {
    this.room(1);
    this.buf[this.pos++] = code;
  }

  /** A safe integer, as String(value). */
  int(value: number): void {
    if (value < 0) {
      this.char(0x2d);
      value = -value;
    }
    this.room(16);
    let digits = 1;
    for (let v = value; v >= 10; v = Math.floor(v / 10)) digits++;
    let at = this.pos + digits;
    this.pos = at;
    do {
      this.buf[--at] = 0x30 + (value % 10);
      value = Math.floor(value / 10);
    } while (value > 0);
  }

  /**
   * Minor units as the decimal amount JSON.stringify(minor / 100) writes: 1250 -> 12.5, 1205 -> 12.05,
   * 1200 -> 12, -5 -> -0.05 (for whole minor amounts below 2^46, the shortest form of minor / 100 has these digits).
   */
  cents(minor: number): void {
    if (minor < 0) {
      this.char(0x2d);
      minor = -minor;
    }
    const cents = minor % 100;
    this.int((minor - cents) / 100);
    if (cents === 0) return;
    this.room(3);
    this.buf[this.pos++] = 0x2e;
    this.buf[this.pos++] = 0x30 + Math.floor(cents / 10);
    if (cents % 10 !== 0) this.buf[this.pos++] = 0x30 + (cents % 10);
  }

  /** What was written (a view on the buffer, not a copy). */
  bytes(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  /** What was written, as text. */
  text(): string {
    return this.buf.toString('utf8', 0, this.pos);
  }

  /** Starts again at the beginning, keeping the buffer. */
  reset(): void {
    this.pos = 0;
  }

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }
}
