import { z } from 'zod';
import { bool, int, timestamp } from './codecs.js';
import { pageRequest } from './envelope.js';

export const Collection = z.looseObject({ id: int, name: z.string().nullish() });

/** The fields an offer's detail and its list item share. */
const offerContent = {
  id: int,
  title: z.string().nullish(),
  overview: z.string().nullish(),
  terms: z.string().nullish(),
  faq: z.string().nullish(),
  how_to_redeem: z.string().nullish(),
  offer: z.string().nullish(),
  redemption_in_store: bool.nullish(),
  redemption_online: bool.nullish(),
  redemption_selected_stores: bool.nullish(),
  image: z.string().nullish(),
  collections: z.array(Collection).nullish(),
};

/** Offer detail (/v3/offers/get/{id}). */
export const Offer = z.looseObject({
  ...offerContent,
  partner_id: int.nullish(),
  offer_link: z.string().nullish(),
});
export type Offer = z.infer<typeof Offer>;

export const OfferType = z.looseObject({
  id: int.nullish(),
  perk_id: int.nullish(),
  voucher_code: z.string().nullish(),
  presentation: z.string().nullish(),
  redeem_url_protocol: z.string().nullish(),
  redeem_url: z.string().nullish(),
  trackable: bool.nullish(),
  redeem_from_inventory: bool.nullish(),
  group_allocated_inventory: bool.nullish(),
});

/** Offer list item (/v3/offers/list). */
export const OfferListItem = z.looseObject({
  ...offerContent,
  brand: z.string().nullish(),
  brand_id: int.nullish(),
  start_date: timestamp.nullish(),
  end_date: timestamp.nullish(),
  link: z.string().nullish(),
  discount: int.nullish(),
  perk_type_format: z.string().nullish(),
  type: OfferType.nullish(),
});
export type OfferListItem = z.infer<typeof OfferListItem>;

/** Offer list and detail bodies: not shown in the spec; paging and the group are the plausible fields. */
export const OffersListBody = z.object({ ...pageRequest, organisation_group_id: z.int().optional() });
export type OffersListBody = z.infer<typeof OffersListBody>;
export const OfferGetBody = z.object({ organisation_group_id: z.int().optional() });
export type OfferGetBody = z.infer<typeof OfferGetBody>;
