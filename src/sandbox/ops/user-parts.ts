/**
 * Each user's `"first_name":…,"last_name":…,"email":…,` as order JSON shows it, written once into a slot of one
 * flat buffer by user id. Orders name their users at random, so everything an order needs of its user sits in
 * one place; and there is no object per user: a cache of 100k+ small objects grows the heap through a whole
 * listing run, and the garbage collector then runs over the whole world again and again.
 * Names and emails change only through the user directory, which bumps its version: a part is trusted while
 * the directory's version is the one it was written at, and written again after.
 */
import type { JsonBytes } from '../json/json-bytes.js';
import type { UserDirectory } from '../world/directory.js';

/** Bytes per user: the directory version it was written at (4), the part's length (1), the part. */
const SLOT = 128;
const ROOM = SLOT - 5;
/** Length byte of a part longer than its slot holds: it is kept aside. */
const LONG = 255;

const written = (first: string | null, last: string | null, email: string | null) =>
  Buffer.from(`${JSON.stringify({ first_name: first, last_name: last, email }).slice(1, -1)},`, 'utf8');
const NO_USER = written(null, null, null);

export class UserParts {
  private slots = new Uint8Array(0);
  /** The slots' first four bytes, as numbers: versions[id * SLOT / 4]. */
  private versions = new Int32Array(0);
  private readonly long = new Map<number, Buffer>();

  constructor(private readonly users: UserDirectory) {}

  /** Writes user `id`'s part to `out` (nulls for an unknown user). */
  writeTo(out: JsonBytes, id: number): void {
    const at = id * SLOT;
    if (at >= this.slots.length || this.versions[at >> 2] !== this.users.version) {
      const user = this.users.get(id);
      if (!user) return out.raw(NO_USER);
      this.store(at, id, written(user.first_name ?? null, user.last_name ?? null, user.email ?? null));
    }
    const length = this.slots[at + 4];
    if (length === LONG) out.raw(this.long.get(id)!);
    else out.copy(this.slots, at + 5, at + 5 + length);
  }

  private store(at: number, id: number, part: Buffer): void {
    if (at >= this.slots.length) {
      const grown = new Uint8Array(Math.max(this.slots.length * 2, at + SLOT * 1024));
      grown.set(this.slots);
      const versions = new Int32Array(grown.buffer);
      for (let slot = this.slots.length; slot < grown.length; slot += SLOT) versions[slot >> 2] = -1;
      this.slots = grown;
      this.versions = versions;
    }
    if (part.length <= ROOM) {
      this.slots.set(part, at + 5);
      this.slots[at + 4] = part.length;
      this.long.delete(id);
    } else {
      this.slots[at + 4] = LONG;
      this.long.set(id, part);
    }
    this.versions[at >> 2] = this.users.version;
  }
}
