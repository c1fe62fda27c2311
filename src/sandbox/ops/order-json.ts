/**
 * An order's wire JSON, written straight to text. It is byte for byte JSON.stringify(orderWire(…)), the
 * Order declaration of src/resources encoded with zod, which test/sandbox/order-json.test.ts checks for
 * every order of a world before and after the clock moves. Listing a million orders through z.encode and
 * an object per order was most of the sandbox's CPU; this writes ~15 fields into one string.
 * Only the status (settling, refunds) and the user (renames, anonymisation) change, and both are read
 * at each call; offers never change, so their part is written once.
 */
import { ORDER_STATUSES } from '../choices.js';
import type { OfferRecord } from '../world/offers.js';
import { ORDER_ID_BASE } from '../world/order-store.js';
import type { World } from '../world/world.js';
import { major } from './wire.js';

const STATUS_TEXT = ORDER_STATUSES.map((s) => JSON.stringify(s));
const offerParts = new WeakMap<OfferRecord, string>();

/** `"perk_id":…,"brand":…,"offer":…,"offer_excerpt":…` of an offer (JSON.stringify leaves out undefined, as the object form does). */
function offerPart(offer: OfferRecord): string {
  let part = offerParts.get(offer);
  if (part === undefined) {
    part = JSON.stringify({ perk_id: offer.id, brand: offer.brand, offer: offer.title, offer_excerpt: offer.offer_excerpt }).slice(1, -1);
    offerParts.set(offer, part);
  }
  return part;
}

const text = (v: string | null | undefined) => (v === null || v === undefined ? 'null' : JSON.stringify(v));

/** The wire JSON of the order at store index `i`: the ordering user's current name and email, no creation time. */
export function orderJson(world: World, i: number): string {
  const s = world.orders;
  const user = world.users.get(s.user[i]);
  const face = s.face[i];
  const paid = s.paid[i];
  return (
    `{"order_id":${ORDER_ID_BASE + i},"order_status":${STATUS_TEXT[s.status[i]]}` +
    `,"first_name":${text(user?.first_name)},"last_name":${text(user?.last_name)},"email":${text(user?.email)}` +
    `,${offerPart(world.offers[s.offer[i]])}` +
    `,"face_value":${major(face)},"order_total_paid":${major(paid)},"order_credit":${major(s.credit[i])}` +
    `,"order_currency":${text(s.currencyOf(i))},"order_saving":${major(face - paid)},"group_revenue":${major(s.revenue[i])}}`
  );
}
