/**
 * Whether a run quarantined more than its threshold allows: the share of quarantined records among
 * every record the listings sent (landed + quarantined). Above it the run ends "partial", exit 4, and
 * says so in one line; the manifest keeps the figures.
 */
import type { StreamResult } from './result.js';

export interface QuarantineShare {
  quarantined: number;
  /** Records the listings sent: landed rows plus quarantined records. */
  records: number;
  /** The configured threshold, a fraction (0.001 = 0.1%). */
  threshold: number;
  above: boolean;
  /** The line that says it, when above. */
  message?: string;
}

export function quarantineShare(streams: StreamResult[], threshold: number): QuarantineShare {
  const quarantined = streams.reduce((n, s) => n + s.rejected, 0);
  const records = streams.reduce((n, s) => n + s.rows + s.rejected, 0);
  const above = quarantined > 0 && quarantined / Math.max(1, records) > threshold;
  const share: QuarantineShare = { quarantined, records, threshold, above };
  if (above) {
    share.message =
      `quarantined ${quarantined} of ${records} records (${percent(quarantined / records, 1)}), ` +
      `above the ${percent(threshold)} threshold (PERKS_QUARANTINE_THRESHOLD)`;
  }
  return share;
}

/** 0.03 → "3.0%" with a fixed number of decimals, or 0.001 → "0.1%" as short as it is exact. */
function percent(fraction: number, decimals?: number): string {
  const p = fraction * 100;
  return `${decimals === undefined ? String(Number(p.toPrecision(6))) : p.toFixed(decimals)}%`;
}
