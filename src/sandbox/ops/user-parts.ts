/**
 * Each user's `"first_name":…,"last_name":…,"email":…,` as order JSON shows it, written once into one flat
 * buffer, found through a table by user id. No object per user: a cache of 100k+ small objects grows the
 * heap through a whole listing run, and the garbage collector then runs over the whole world again and again.
 * Names and emails change only through the user directory, which bumps its version: a part is trusted while
 * the version is the one it was last checked at, and written again (kept if unchanged) after.
 */
import type { UserDirectory } from '../world/directory.js';
import type { JsonBytes } from '../http/json-bytes.js';

const SLOTS = 3; // start, end, directory version it was checked at
const written = (first: string | null, last: string | null, email: string | null) =>
  Buffer.from(`${JSON.stringify({ first_name: first, last_name: last, email }).slice(1, -1)},`, 'utf8');
const NO_USER = written(null, null, null);

export class UserParts {
  private arena = Buffer.allocUnsafe(1 << 20);
  private used = 0;
  private table = new Int32Array(0);

  constructor(private readonly users: UserDirectory) {}

  /** Writes user `id`'s part to `out` (nulls for an unknown user). */
  writeTo(out: JsonBytes, id: number): void {
    const at = id * SLOTS;
    if (at >= this.table.length || this.table[at + 2] !== this.users.version) {
      const user = this.users.get(id);
      if (!user) return out.raw(NO_USER);
      this.check(at, written(user.first_name ?? null, user.last_name ?? null, user.email ?? null));
    }
    out.copy(this.arena, this.table[at], this.table[at + 1]);
  }

  /** Keeps the part at table slot `at` when it did not change, else appends the new one. */
  private check(at: number, part: Buffer): void {
    if (at >= this.table.length) {
      const grown = new Int32Array(Math.max(this.table.length * 2, at + SLOTS * 1024)).fill(-1);
      grown.set(this.table);
      this.table = grown;
    }
    if (this.table[at] < 0 || !part.equals(this.arena.subarray(this.table[at], this.table[at + 1]))) {
      if (this.used + part.length > this.arena.length) {
        const grown = Buffer.allocUnsafe(Math.max(this.arena.length * 2, this.used + part.length));
        this.arena.copy(grown, 0, 0, this.used);
        this.arena = grown;
      }
      part.copy(this.arena, this.used);
      this.table[at] = this.used;
      this.table[at + 1] = this.used += part.length;
    }
    this.table[at + 2] = this.users.version;
  }
}
