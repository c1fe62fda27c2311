/**
 * Formatting of exact decimal strings for people: thousands separators and the currency code, done on
 * the digits themselves (never through a float), so what is shown is exactly what DuckDB summed.
 */
import type { Measure } from '../../closes/index.js';

/** "1234567.5" → "1,234,567.50"; keeps the sign; `decimals` pads or keeps the fraction as given. */
export function groupDigits(decimal: string, decimals?: number): string {
  const text = decimal.trim();
  const negative = text.startsWith('-');
  const [whole, fraction = ''] = text.replace(/^[-+]/, '').split('.');
  const grouped = (whole.replace(/^0+(?=\d)/, '') || '0').replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const frac = decimals === undefined ? fraction : fraction.padEnd(decimals, '0').slice(0, decimals);
  const body = frac ? `${grouped}.${frac}` : grouped;
  return negative && /[1-9]/.test(body) ? `-${body}` : body;
}

/** "1234.5", "GBP" → "1,234.50 GBP". A missing currency is shown as such, never guessed. */
export function formatMoney(decimal: string, currency: string): string {
  return `${groupDigits(decimal, 2)} ${currency || '(no currency)'}`;
}

export function formatCount(integer: string): string {
  return groupDigits(integer);
}

/** A measure's value: orders as a count, everything else as money. */
export function formatMeasure(measure: Measure, value: string, currency: string): string {
  return measure === 'orders' ? formatCount(value) : formatMoney(value, currency);
}

/** A signed change: "+90.45 GBP", "-3", "0.00 GBP". */
export function formatChange(measure: Measure, value: string, currency: string): string {
  const shown = formatMeasure(measure, value, currency);
  return shown.startsWith('-') || !/[1-9]/.test(value) ? shown : `+${shown}`;
}

/**
 * "+1,675.0%", "-12.5%"; without a percentage (the previous month was zero): "new" when there is something
 * this month, "–" when both months are zero.
 */
export function formatPct(pct: string | null, current: string): string {
  if (pct === null) return /[1-9]/.test(current) ? 'new' : '–';
  const shown = `${groupDigits(pct)}%`;
  return shown.startsWith('-') || !/[1-9]/.test(pct) ? shown : `+${shown}`;
}

export function currencyLabel(currency: string): string {
  return currency || '(no currency)';
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML and SVG (names and brands come from the API). */
export function esc(text: string | number): string {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}
