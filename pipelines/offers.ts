import { defineStream } from './define.js';
import { OfferListItem } from '../src/resources/offer.js';

/** Offers are not group scoped in the spec: one organisation-wide snapshot. */
export default defineStream({
  name: 'offers',
  description: 'The offers catalogue, all pages, a snapshot per run',
  kind: 'snapshot',
  scope: 'organisation',
  operation: 'listOffers',
  record: OfferListItem,
  key: ['id'],
});
