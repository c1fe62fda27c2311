/**
 * Write-ahead journals reach the store before the calls they announce. The write-back appends each
 * batch's 'pending' entries to its local journal and fsyncs them before posting; with a store, the lines
 * appended since the last upload also go, as one small immutable object,
 * `_perks/wal/<journal path>/<byte offset, 12 digits>`, before any of the posts leave. So a write-back
 * killed after a post, on any machine, leaves its 'pending' entries where the next run, on any machine,
 * finds them: the pull appends the pieces (in offset order) to the journal in the working copy,
 * the write-back's recovery looks the rows up instead of posting them again, and the publish that
 * commits the result removes the pieces.
 */
import { open, stat } from 'node:fs/promises';
import { relative, sep } from 'node:path';
import type { StoreClient } from './client.js';
import { WAL } from './layout.js';

export class WalWriter {
  /** Bytes of each journal already in the store. */
  private readonly sent = new Map<string, number>();
  /** Every piece this command wrote (removed after its publish commits). */
  readonly pieces: string[] = [];

  constructor(
    private readonly client: StoreClient,
    private readonly copy: string,
  ) {}

  async flush(file: string): Promise<void> {
    const path = relative(this.copy, file).split(sep).join('/');
    const from = this.sent.get(path) ?? 0;
    const size = (await stat(file)).size;
    if (size <= from) return;
    const handle = await open(file, 'r');
    const bytes = Buffer.alloc(size - from);
    try {
      await handle.read(bytes, 0, bytes.length, from);
    } finally {
      await handle.close();
    }
    const piece = `${WAL}/${path}/${String(from).padStart(12, '0')}`;
    await this.client.put(piece, bytes);
    this.pieces.push(piece);
    this.sent.set(path, size);
  }

  /** A publish committed the journal at `path` whole: later pieces continue from its size. */
  committed(path: string, size: number): void {
    if (this.sent.has(path)) this.sent.set(path, Math.max(size, this.sent.get(path)!));
  }
}

export interface WalPiece {
  offset: number;
  key: string;
  size: number;
}

/** The journals the store holds pieces of: path → pieces in offset order. */
export async function walJournals(client: StoreClient): Promise<Map<string, WalPiece[]>> {
  const objects = await client.list(`${WAL}/`);
  const byPath = new Map<string, WalPiece[]>();
  for (const o of objects) {
    const m = /^_perks\/wal\/(.+)\/(\d{12})$/.exec(o.path);
    if (!m) continue;
    byPath.set(m[1], [...(byPath.get(m[1]) ?? []), { offset: Number(m[2]), key: o.path, size: o.size }]);
  }
  for (const list of byPath.values()) list.sort((a, b) => a.offset - b.offset);
  return byPath;
}

/**
 * The pieces that continue a journal of `size` bytes: from that offset on, contiguous (a piece before it
 * is already in the file a publish committed; nothing after a gap was announced in order).
 */
export function continuation(pieces: WalPiece[], size: number): WalPiece[] {
  const out: WalPiece[] = [];
  let next = size;
  for (const p of pieces) {
    if (p.offset + p.size <= size) continue;
    if (p.offset !== next) break;
    out.push(p);
    next += p.size;
  }
  return out;
}
