/**
 * Schema drift, for reliability tests (`schemaDrift`): the platform changes what its records carry, the
 * way real APIs do on a release day. Each kind, once switched on, changes every record of its listings
 * (switching it on between two runs makes the change appear mid-history):
 *
 * - newField:     orders carry a field the project does not declare, `tax_amount` (a number, 20% of the
 *                 amount paid, to the cent)
 * - typeChange:   that field arrives as a string ("1.23") instead
 * - removedField: a declared field stops arriving: orders' `offer_excerpt`, and `voucher_code` inside offers' `type`
 * - nestedField:  an unknown field inside a declared object: offers' `type.redeem_limit` (a number), and
 *                 `reason` (a string) on each credit item
 * - personalField: orders carry a personal value the project does not declare, `contact_phone` (the ordering
 *                 user's phone, derived from the e-mail: contactPhoneOf), which `perks forget` must clear too
 */
import type { SchemaDriftKind } from '../options.js';

type Rec = Record<string, unknown>;
const isRecord = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The tax amount an order carries under `newField`: 20% of what was paid, to the cent. */
export const taxAmountOf = (order: Rec): number => Math.round(Number(order.order_total_paid ?? 0) * 20) / 100;

/** The phone an order carries under `personalField`: a fixed-length number derived from the e-mail. */
export function contactPhoneOf(email: string): string {
  let h = 0;
  for (const ch of email.toLowerCase()) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return `+44 7700 ${String(h % 1_000_000).padStart(6, '0')}`;
}

/** Changes the records of `data` (a fresh wire object per response) as the kinds switched on say. */
export function schemaDriftData(operation: string, data: unknown, kinds: readonly SchemaDriftKind[]): void {
  if (!kinds.length) return;
  const on = new Set(kinds);
  const records: unknown[] = Array.isArray(data)
    ? data
    : isRecord(data) && Array.isArray(data.credits)
      ? (data.credits as unknown[])
      : [];
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    if (!isRecord(r)) continue;
    if (operation === 'listOrders') records[i] = order(r, on);
    else if (operation === 'listOffers' && isRecord(r.type)) records[i] = { ...r, type: offerType(r.type, on) };
    else if (operation === 'userCredit' && on.has('nestedField')) records[i] = { ...r, reason: 'welcome bonus' };
  }
}

function order(r: Rec, on: Set<SchemaDriftKind>): Rec {
  const out = { ...r };
  if (on.has('newField') || on.has('typeChange'))
    out.tax_amount = on.has('typeChange') ? taxAmountOf(r).toFixed(2) : taxAmountOf(r);
  if (on.has('removedField')) delete out.offer_excerpt;
  if (on.has('personalField') && typeof r.email === 'string') out.contact_phone = contactPhoneOf(r.email);
  return out;
}

function offerType(type: Rec, on: Set<SchemaDriftKind>): Rec {
  const out = { ...type };
  if (on.has('nestedField')) out.redeem_limit = 1 + (Number(type.id ?? 0) % 5);
  if (on.has('removedField')) delete out.voucher_code;
  return out;
}
