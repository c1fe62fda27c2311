/** Offers: organisation-wide, every list and detail field of the spec, plus the money rules orders use. */
import { DAY_MS } from '../clock.js';
import { createRng } from '../prng.js';
import { BRANDS, COLLECTIONS } from './names.js';

export interface OfferRecord {
  id: number;
  partner_id: number;
  brand: string;
  brand_id: number;
  title: string;
  overview: string;
  terms: string;
  faq: string;
  how_to_redeem: string;
  offer: string;
  offer_excerpt: string;
  start_date: number;
  /** Always a timestamp (the spec types it so); an open-ended offer ends 5 years after it started. */
  end_date: number;
  redemption_in_store: boolean;
  redemption_online: boolean;
  redemption_selected_stores: boolean;
  link: string;
  image: string;
  discount: number;
  perk_type_format: 'vouchers' | 'codes' | 'cashback';
  collections: { id: number; name: string }[];
  type: {
    id: number;
    perk_id: number;
    /** A string, as the spec types it: the shared code of a `codes` offer, empty for the others. */
    voucher_code: string;
    presentation: string;
    redeem_url_protocol: string;
    redeem_url: string;
    trackable: boolean;
    redeem_from_inventory: boolean;
    group_allocated_inventory: boolean;
  };
  /** Share of face value that is the group's revenue, in basis points. */
  revenueBps: number;
  /** Face values on sale, in minor units. */
  denominations: number[];
}

export const BRAND_ID_BASE = 200;
/** How long an offer without a planned end runs, from its start: the spec gives end_date no null. */
const OPEN_ENDED_DAYS = 5 * 365;

export function generateOffers(seed: number, count: number, todayStart: number): OfferRecord[] {
  const rng = createRng(seed, 'offers');
  const offers: OfferRecord[] = [];
  for (let i = 0; i < count; i++) {
    const brandIndex = i % BRANDS.length;
    const brand = BRANDS[brandIndex];
    const slug = brand.toLowerCase().replace(/[^a-z0-9]+/g, '-');
    const id = 1001 + i;
    const format = i < BRANDS.length || rng.chance(0.75) ? 'vouchers' : rng.pick(['codes', 'cashback'] as const);
    const discount = rng.int(2, 15);
    const inStore = rng.chance(0.5);
    const code = format === 'codes' ? `SAVE${discount}${slug.slice(0, 3).toUpperCase()}` : '';
    const collections = [
      COLLECTIONS[brandIndex % COLLECTIONS.length],
      ...(rng.chance(0.3) ? [COLLECTIONS[(brandIndex + 3) % COLLECTIONS.length]] : []),
    ];
    // Drawn in the order the generator always drew them, so a seed gives the same world as before.
    const start_date = todayStart - rng.int(370, 900) * DAY_MS;
    offers.push({
      id,
      partner_id: 5000 + brandIndex,
      brand,
      brand_id: BRAND_ID_BASE + brandIndex,
      title: `${discount}% off ${brand} ${format === 'vouchers' ? 'eGift cards' : 'online'}`,
      overview: `<p>Save <strong>${discount}%</strong> with ${escapeHtml(brand)}.</p>`,
      terms: `<ul><li>Valid for 12 months from purchase.</li><li>Not exchangeable for cash.</li></ul>`,
      faq: `<h3>Can I combine this offer?</h3><p>No, one offer per order.</p>`,
      how_to_redeem:
        format === 'vouchers'
          ? '<ol><li>Choose a value.</li><li>Pay.</li><li>Use the eGift code at checkout.</li></ol>'
          : '<p>Use the code at checkout.</p>',
      offer: `${discount}% off`,
      offer_excerpt: `Save ${discount}% at ${brand}`,
      start_date,
      end_date: rng.chance(0.3) ? start_date + OPEN_ENDED_DAYS * DAY_MS : todayStart + rng.int(30, 400) * DAY_MS,
      redemption_in_store: inStore,
      redemption_online: !inStore || rng.chance(0.6),
      redemption_selected_stores: inStore && rng.chance(0.3),
      link: `https://www.${slug}.example/offers/${id}`,
      image: `https://cdn.perks.example/offers/${id}.jpg`,
      discount,
      perk_type_format: format,
      collections: collections.map((c) => ({ ...c })),
      type: {
        id: 300 + i,
        perk_id: id,
        voucher_code: code,
        presentation: format === 'vouchers' ? 'eGift card, delivered by email' : 'text',
        redeem_url_protocol: 'https',
        redeem_url: `https://redeem.perks.example/${slug}/${id}`,
        trackable: rng.chance(0.7),
        redeem_from_inventory: format === 'vouchers' && rng.chance(0.5),
        group_allocated_inventory: rng.chance(0.2),
      },
      revenueBps: rng.int(100, 500),
      denominations: rng.pick([
        [1000, 2000, 5000],
        [500, 1000, 2500, 5000, 10000],
        [2500, 5000, 10000],
        [1500, 3000],
      ]),
    });
  }
  return offers;
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
}
