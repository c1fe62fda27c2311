/**
 * OpenLineage names a run by a UUID; this program names it by its own run id (src/shared/run-id.ts:
 * `20261122T120000Z-4d4d08`, the manifest's `<out>/runs/<run_id>.json`). The one is derived from the other, so
 * that the same run always gets the same UUID: a UUIDv7 (RFC 9562) whose time is the run id's second and whose
 * other bits are the SHA-256 of the run id. The run id itself travels beside it, in the `perks_run` run facet.
 */
import { createHash } from 'node:crypto';

const SECOND = /(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z/;

/** The UUID of run `perksRunId` (any text: a model's run of a build is `<build run id>/<model>`). */
export function lineageRunId(perksRunId: string): string {
  const m = SECOND.exec(perksRunId);
  const ms = m ? Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) : 0;
  const bytes = Buffer.alloc(16);
  bytes.writeUIntBE(Number.isFinite(ms) && ms > 0 ? ms : 0, 0, 6);
  createHash('sha256').update(perksRunId).digest().copy(bytes, 6, 0, 10);
  bytes[6] = (bytes[6] & 0x0f) | 0x70; // version 7
  bytes[8] = (bytes[8] & 0x3f) | 0x80; // the RFC's variant
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
