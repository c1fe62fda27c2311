/**
 * JSON written by hand into a buffer: parts already encoded (bytes), and numbers written digit by digit with
 * the same digits JSON.stringify gives (test/sandbox/json-bytes.test.ts compares them).
 *
 * Large replies are written into buffers taken from a small pool and given back once the socket has the bytes
 * (`pooled()`, `release()`): a fresh buffer per page is memory outside the JS heap, which V8 only reclaims with
 * full collections over the whole world, dozens of them in a landing run. Room is kept at the start, so the
 * envelope's head can go in front of a listing without copying it.
 */
const POOLED_BYTES = 64 * 1024;
const POOL_MAX = 64;
const pool: Buffer[] = [];

export class JsonBytes {
  private start: number;
  private pos: number;
  private fromPool: boolean;

  constructor(
    private buf: Buffer = Buffer.allocUnsafe(16 * 1024),
    headroom = 0,
  ) {
    this.start = this.pos = headroom;
    this.fromPool = false;
  }

  /** A writer over a pooled buffer, `headroom` bytes kept free at the start. Give it back with release(). */
  static pooled(headroom: number): JsonBytes {
    const out = new JsonBytes(pool.pop() ?? Buffer.allocUnsafeSlow(POOLED_BYTES), headroom);
    out.fromPool = true;
    return out;
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

  /** Text, UTF-8 encoded. */
  text(value: string): void {
    this.room(Buffer.byteLength(value));
    this.pos += this.buf.write(value, this.pos);
  }

  /** ASCII text in front of what was written, in the room kept at the start; false when it does not fit or is not ASCII. */
  prepend(ascii: string): boolean {
    // eslint-disable-next-line no-control-regex -- ASCII is 0x00 to 0x7f, control characters included
    if (ascii.length > this.start || !/^[\x00-\x7f]*$/.test(ascii)) return false;
    this.start -= ascii.length;
    this.buf.write(ascii, this.start, 'latin1');
    return true;
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

  /** What was written (a view on the buffer, not a copy: valid until release()). */
  bytes(): Buffer<ArrayBuffer> {
    return this.buf.subarray(this.start, this.pos) as Buffer<ArrayBuffer>;
  }

  /** Gives a pooled buffer back; the bytes must no longer be in use. Later calls do nothing. */
  release(): void {
    if (this.fromPool && this.buf.length === POOLED_BYTES && pool.length < POOL_MAX) pool.push(this.buf);
    this.fromPool = false;
  }

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.release();
    this.buf = next;
  }
}
