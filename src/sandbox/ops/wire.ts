/**
 * Records to wire form, through the resource declarations of src/resources (z.encode), so the sandbox
 * answers exactly what the client decodes: 0/1 booleans, money rounded to cents, ISO timestamps.
 */
import { z } from 'zod';
import {
  CreditItem,
  Group,
  Interaction,
  Offer,
  OfferListItem,
  Order,
  RedemptionStatsItem,
  User,
  UserCredit,
  UserListItem,
  UserStats,
} from '../../resources/index.js';
import { isoMicro } from '../clock.js';
import type { CreditRecord } from '../world/credit.js';
import type { GroupRecord } from '../world/groups.js';
import type { InteractionRecord } from '../world/interactions.js';
import type { OfferRecord } from '../world/offers.js';
import type { OrderRecord } from '../world/order-store.js';
import type { UserRecord } from '../world/users.js';
import type { World } from '../world/world.js';

const ts = (ms: number | null) => (ms === null ? null : isoMicro(ms));
const ts0 = (ms: number) => isoMicro(ms);
/** Minor units to a decimal amount. */
export const major = (minor: number) => minor / 100;

export function userWire(u: UserRecord) {
  return z.encode(User, {
    id: u.id,
    UID: u.UID,
    first_name: u.first_name,
    last_name: u.last_name,
    email: u.email,
    status: u.status,
    created_at: ts0(u.created_at),
  });
}

export function userListWire(u: UserRecord) {
  return z.encode(UserListItem, {
    id: u.id,
    UID: u.UID,
    alt_uid: u.alt_uid,
    first_name: u.first_name,
    last_name: u.last_name,
    email: u.email,
    status: u.status,
    last_login: ts(u.last_login),
    login_count: u.login_count,
    created_at: ts0(u.created_at),
    updated_at: ts0(u.updated_at),
    deleted_at: ts(u.deleted_at),
  });
}

export function groupWire(g: GroupRecord) {
  const { id, name, display_name, sandbox, locale, timezone, custom_domain, subdomain } = g;
  return z.encode(Group, { id, name, display_name, sandbox, locale, timezone, custom_domain, subdomain });
}

export function offerDetailWire(o: OfferRecord) {
  return z.encode(Offer, {
    id: o.id,
    partner_id: o.partner_id,
    title: o.title,
    overview: o.overview,
    terms: o.terms,
    faq: o.faq,
    how_to_redeem: o.how_to_redeem,
    offer: o.offer,
    redemption_in_store: o.redemption_in_store,
    redemption_online: o.redemption_online,
    redemption_selected_stores: o.redemption_selected_stores,
    image: o.image,
    offer_link: o.link,
    collections: o.collections,
  });
}

export function offerListWire(o: OfferRecord) {
  return z.encode(OfferListItem, {
    id: o.id,
    brand: o.brand,
    brand_id: o.brand_id,
    title: o.title,
    overview: o.overview,
    terms: o.terms,
    faq: o.faq,
    how_to_redeem: o.how_to_redeem,
    offer: o.offer,
    start_date: ts0(o.start_date),
    end_date: ts0(o.end_date),
    redemption_in_store: o.redemption_in_store,
    redemption_online: o.redemption_online,
    redemption_selected_stores: o.redemption_selected_stores,
    link: o.link,
    image: o.image,
    discount: o.discount,
    perk_type_format: o.perk_type_format,
    collections: o.collections,
    type: o.type,
  });
}

/**
 * An order as the API shows it: the ordering user's current name and email, no creation time. Listings write
 * orders straight to bytes (order-json.ts); this is the declared form that test/sandbox/order-json.test.ts holds them to.
 */
export function orderWire(world: World, o: OrderRecord) {
  const user = world.users.get(o.user_id);
  const offer = world.offers[o.offerIndex];
  return z.encode(Order, {
    order_id: o.order_id,
    order_status: o.status,
    first_name: user?.first_name ?? null,
    last_name: user?.last_name ?? null,
    email: user?.email ?? null,
    perk_id: offer.id,
    brand: offer.brand,
    offer: offer.title,
    offer_excerpt: offer.offer_excerpt,
    face_value: major(o.face_value),
    order_total_paid: major(o.order_total_paid),
    order_credit: major(o.order_credit),
    order_currency: o.currency,
    order_saving: major(o.order_saving),
    group_revenue: major(o.group_revenue),
  });
}

export function creditWire(c: CreditRecord, items: CreditRecord['credits']) {
  return z.encode(UserCredit, {
    available: major(c.available),
    spent: major(c.spent),
    expired: major(c.expired),
    credits: items.map((i): z.output<typeof CreditItem> => ({
      status: i.status,
      amount: major(i.amount),
      remaining_amount: major(i.remaining_amount),
      expires_at: ts0(i.expires_at),
      created_at: ts0(i.created_at),
    })),
  });
}

export function interactionWire(i: InteractionRecord) {
  return z.encode(Interaction, {
    ...i,
    interaction_at: ts0(i.interaction_at),
    created_at: ts0(i.created_at),
    updated_at: ts0(i.updated_at),
  });
}

/** Sums of a user's orders, as both stats operations report them. */
export interface OrderTotals {
  all: number;
  complete: number;
  face: number;
  cost: number;
  credit: number;
  savings: number;
}

export function userStatsWire(t: OrderTotals) {
  return z.encode(UserStats, {
    all_redemptions_count: t.all,
    egift_face_value: major(t.face),
    egift_cost: major(t.cost),
    order_credit: major(t.credit),
    egift_savings: major(t.savings),
  });
}

export function redemptionItemWire(u: UserRecord, t: OrderTotals) {
  return z.encode(RedemptionStatsItem, {
    id: u.id,
    UID: u.UID,
    email: u.email,
    all_redemptions_count: t.all,
    egift_orders_count: t.complete,
    egift_face_value: major(t.face),
    egift_cost: major(t.cost),
    egift_savings: major(t.savings),
  });
}
