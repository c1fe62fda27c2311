/** Groups and offers. Offers are organisation-wide: the same list for every group. */
import { notFound } from '../errors.js';
import { paged, type OpHandler } from './context.js';
import { groupWire, offerDetailWire, offerListWire } from './wire.js';

export const catalogueHandlers = {
  getGroup: (ctx) => ({ data: groupWire(ctx.group) }),

  /** With an organisation token every group of the organisation; with a group token its own group. */
  listGroups: (ctx) => ({ data: ctx.world.groups.filter((g) => ctx.principal.groupIds.includes(g.id)).map(groupWire) }),

  getOffer: (ctx) => {
    const id = /^\d+$/.test(ctx.params.id) ? Number(ctx.params.id) : NaN;
    const offer = ctx.world.offers.find((o) => o.id === id);
    if (!offer) throw notFound('Offer not found.');
    return { data: offerDetailWire(offer) };
  },

  listOffers: (ctx) => paged(ctx, ctx.world.offers, offerListWire),
} satisfies Record<string, OpHandler>;
